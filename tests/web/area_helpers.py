"""Helpers of the author area's tests: a competition server on a loop of its own in a thread (its
submission service on a free loopback port, its organiser's token given), the organiser's calls to
it, and a browser-like HTTP client of the web that signs in with a token."""

from __future__ import annotations

import asyncio
import re
import shutil
import threading
from pathlib import Path
from typing import Any

import grpc
import httpx2 as httpx

from arena.competition import bundles, organiser
from arena.competition.server import CompetitionServer
from arena.competition.spec import parse
from arena.competition.submission_api import serve_submissions
from arena.ledger import Ledger
from arena.wire.v1 import competition_pb2 as pb
from arena.wire.v1 import competition_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "competitions" / "examples" / "python-bot"
ORGANISER_TOKEN = "organiser-secret-0123456789abcdef"


def spec_data(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "Web Ladder",
        "seed": 5,
        "variant": "rubicon",
        "time_control": {"budget_ms": 5000, "bank_ms": 60000, "grace_ms": 500},
        "matchmaking": {"games_at_once": 1, "pause_seconds": 0.2, "duplicate": False},
        "submissions": {"build_seconds": 120, "check_seconds": 240, "max_bundle_mb": 1},
        "server": {"submissions": "127.0.0.1:0", "bots": "127.0.0.1:0"},
    }
    for key, value in over.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    return data


def example_bundle(tmp: Path, name: str, version: str = "1") -> bytes:
    """The example Python submission packed under another bot name and version."""
    folder = tmp / f"{name}-{version}"
    shutil.copytree(EXAMPLE, folder)
    manifest = folder / bundles.MANIFEST
    text = manifest.read_text().replace('"py-trickster"', f'"{name}"')
    manifest.write_text(re.sub(r'(?m)^version = ".*"$', f'version = "{version}"', text))
    return bundles.pack(folder, 2**20)


class Competition:
    """A competition server on a loop of its own, in a thread, with the organiser's token given."""

    def __init__(self, folder: Path, **over: Any) -> None:
        organiser.take_token(folder / "data", ORGANISER_TOKEN)
        self.ledger_path = folder / "ledger.sqlite"
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.ledger = Ledger(self.ledger_path)
        self.server = CompetitionServer(
            parse(spec_data(**over)),
            self.ledger,
            folder / "data",
            serve_submissions=serve_submissions,
        )
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(120)
        self.address = self.server.submissions_address
        self.channel = grpc.insecure_channel(self.address)
        self.stub = competition_pb2_grpc.CompetitionStub(self.channel)

    def as_organiser(self) -> tuple[tuple[str, str]]:
        return (("authorization", f"Bearer {ORGANISER_TOKEN}"),)

    def add_author(self, name: str) -> str:
        added = self.stub.AddAuthor(pb.AddAuthorRequest(name=name), metadata=self.as_organiser())
        return added.token

    def submit(self, token: str, data: bytes) -> int:
        sent = self.stub.Submit(
            pb.SubmitRequest(bundle=data), metadata=(("authorization", f"Bearer {token}"),)
        )
        return sent.submission_id

    def status(self) -> pb.OrganiserStatusResponse:
        return self.stub.OrganiserStatus(pb.OrganiserStatusRequest(), metadata=self.as_organiser())

    def close(self) -> None:
        self.channel.close()
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(120)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        self.ledger.close()


CSRF = re.compile(r'name="csrf" value="([^"]+)"')


class Browser:
    """An HTTP client of the web that keeps its cookies, as a browser would (no redirects followed:
    the tests look at them)."""

    def __init__(self, url: str) -> None:
        self.client = httpx.Client(base_url=url.rstrip("/"), follow_redirects=False, timeout=120)
        self.pages: list[str] = []  # every page's text it was given

    def get(self, path: str) -> httpx.Response:
        answer = self.client.get(path)
        self.pages.append(answer.text)
        return answer

    def post(self, path: str, data: dict[str, str]) -> httpx.Response:
        answer = self.client.post(path, data=data)
        self.pages.append(answer.text)
        return answer

    def csrf(self, path: str) -> str:
        found = CSRF.search(self.get(path).text)
        assert found, f"no CSRF token on {path}"
        return found.group(1)

    def sign_in(self, token: str) -> httpx.Response:
        csrf = self.csrf("/signin")
        return self.post("/signin", {"csrf": csrf, "token": token})

    def close(self) -> None:
        self.client.close()
