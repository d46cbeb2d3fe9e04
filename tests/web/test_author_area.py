"""The author area's guards, over HTTP against a real competition server (its submission service in
a thread) and the web served by uvicorn: sign-in and its cookie's flags, the token in no page, URL,
cookie or log line, CSRF on every POST, a stale session refused, an author who cannot read or act
for another, an oversize upload refused as it arrives, and no author area without --submissions."""

from __future__ import annotations

import logging
import select
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx2 as httpx
import pytest
from area_helpers import ORGANISER_TOKEN, Browser, Competition, example_bundle
from starlette.testclient import TestClient
from web_helpers import WebServer

from arena.web.app import create_app
from arena.web.area import UPLOADS_PER_AUTHOR
from arena.web.uploads import FORM_MARGIN
from arena.wire.v1 import competition_pb2 as pb

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("author-area")]


class Setting:
    def __init__(self, comp: Competition, web: WebServer, ada: str, bob: str, bob_sid: int) -> None:
        self.comp, self.web, self.ada, self.bob, self.bob_sid = comp, web, ada, bob, bob_sid


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    """A paused competition (no games) with two authors, ada and bob; bob has submitted a bot; the
    web serves its author area on loopback."""
    folder = tmp_path_factory.mktemp("area")
    comp = Competition(folder)
    try:
        comp.stub.SetPaused(pb.SetPausedRequest(paused=True), metadata=comp.as_organiser())
        ada, bob = comp.add_author("ada"), comp.add_author("bob")
        bob_sid = comp.submit(bob, example_bundle(folder, "bobs-bot"))
        with WebServer(comp.ledger_path, submissions=comp.address) as web:
            yield Setting(comp, web, ada, bob, bob_sid)
    finally:
        comp.close()


@pytest.fixture
def browser(setting: Setting) -> Iterator[Browser]:
    b = Browser(setting.web.url)
    try:
        yield b
    finally:
        b.close()


def cookie_header(answer: httpx.Response, name: str) -> str:
    found = [h for h in answer.headers.get_list("set-cookie") if h.startswith(f"{name}=")]
    assert found, f"no {name} cookie set"
    return str(found[0])


def test_signing_in_gives_a_session_cookie_and_the_token_goes_nowhere(
    setting: Setting, browser: Browser, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    assert 'href="/signin"' in browser.get("/").text, "a Sign in link on the public pages"
    # No CSRF token, or a wrong token: refused, no session.
    refused = browser.post("/signin", {"token": setting.ada})
    assert refused.status_code == 403 and "CSRF" in refused.text
    wrong = browser.sign_in("not-a-token-of-anyones")
    assert wrong.status_code == 401
    assert "no author&#39;s or organiser&#39;s" in wrong.text
    answer = browser.sign_in(setting.ada)
    assert answer.status_code == 303 and answer.headers["location"] == "/author"
    cookie = cookie_header(answer, "arena_session")
    flags = [f.strip().lower() for f in cookie.split(";")]
    assert "httponly" in flags and "samesite=strict" in flags and "path=/" in flags
    assert "secure" not in flags, "served on loopback: not Secure (a browser would drop it)"
    page = browser.get("/author")
    assert page.status_code == 200 and "ada" in page.text
    assert page.headers["cache-control"] == "no-store"
    browser.get(f"/author/submissions/{setting.bob_sid}")
    # The token: in no page, no URL, no cookie, no log line.
    for text in browser.pages:
        assert setting.ada not in text
    for h in [*answer.headers.get_list("set-cookie"), answer.headers["location"]]:
        assert setting.ada not in h
    assert all(setting.ada not in str(c) for c in browser.client.cookies.jar)
    logged = [r.getMessage() for r in caplog.records]
    assert any("signed in: the author 'ada'" in line for line in logged)
    assert not any(setting.ada in line for line in logged)


def test_the_cookies_are_secure_when_served_beyond_loopback(setting: Setting) -> None:
    comp = setting.comp
    with WebServer(comp.ledger_path, submissions=comp.address, secure_cookies=True) as web:
        b = Browser(web.url)
        try:
            form = b.get("/signin")
            signin_cookie = cookie_header(form, "arena_signin")
            assert "secure" in [f.strip().lower() for f in signin_cookie.split(";")]
            # Sent back by hand: a client keeps Secure cookies for HTTPS alone (a proxy in front
            # of the web would serve it so).
            nonce = signin_cookie.split(";")[0].split("=", 1)[1]
            csrf = form.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
            b.client.cookies.set("arena_signin", nonce)
            answer = b.client.post("/signin", data={"csrf": csrf, "token": setting.ada})
            assert answer.status_code == 303
            flags = [f.strip().lower() for f in cookie_header(answer, "arena_session").split(";")]
            assert {"secure", "httponly", "samesite=strict"} <= set(flags)
        finally:
            b.close()


def test_a_post_without_its_csrf_token_or_with_a_stale_session_is_refused(
    setting: Setting, browser: Browser
) -> None:
    browser.sign_in(setting.ada)
    csrf = browser.csrf("/author")
    for data in ({}, {"csrf": "guessed"}):
        answer = browser.post("/author/bots/any-bot/withdraw", data)
        assert answer.status_code == 403 and "CSRF token is missing or stale" in answer.text
    upload = browser.client.post(
        "/author/upload", files={"bundle": ("b.tar.gz", b"x" * 100)}, data={}
    )
    assert upload.status_code == 403 and "CSRF" in upload.text
    # Another session's CSRF token is no good either.
    other = Browser(setting.web.url)
    try:
        other.sign_in(setting.ada)
        answer = other.post("/author/bots/any-bot/withdraw", {"csrf": csrf})
        assert answer.status_code == 403
    finally:
        other.close()
    cookie = browser.client.cookies.get("arena_session")
    assert browser.post("/signout", {"csrf": csrf}).status_code == 303
    # Signed out: the session is over on the server, whatever the browser still holds.
    browser.client.cookies.set("arena_session", cookie or "")
    stale = browser.post("/author/bots/any-bot/withdraw", {"csrf": csrf})
    assert stale.status_code == 403 and "no session" in stale.text
    again = browser.get("/author")
    assert again.status_code == 303 and again.headers["location"] == "/signin"
    assert browser.post("/signout", {"csrf": csrf}).status_code == 403


def test_an_author_cannot_read_another_authors_logs_nor_act_for_them(
    setting: Setting, browser: Browser
) -> None:
    browser.sign_in(setting.ada)
    theirs = browser.get(f"/author/submissions/{setting.bob_sid}")
    assert theirs.status_code == 404
    assert f"you have no submission {setting.bob_sid}" in theirs.text
    game = browser.get("/author/games/1")
    assert game.status_code == 404 and "no bot of yours played a game 1" in game.text
    csrf = browser.csrf("/author")
    answer = browser.post("/author/bots/bobs-bot/withdraw", {"csrf": csrf})
    assert answer.status_code == 404 and "you have no bot" in answer.text
    statuses = {s.submission_id: s.status for s in setting.comp.status().submissions}
    assert statuses[setting.bob_sid] != "withdrawn", "bob's bot is untouched"
    # An author is not the organiser.
    assert browser.get("/organiser").status_code == 403
    assert browser.post("/organiser/pause", {"csrf": csrf}).status_code == 403
    # Nor the organiser an author.
    boss = Browser(setting.web.url)
    try:
        assert boss.sign_in(ORGANISER_TOKEN).headers["location"] == "/organiser"
        assert boss.get("/author").status_code == 403
        assert ORGANISER_TOKEN not in "".join(boss.pages)
    finally:
        boss.close()


def _raw_upload(url: str, cookie: str, headers: str, body_mb: int) -> tuple[str, int]:
    """An upload sent by hand, chunk by chunk: the answer's first line, and the bytes sent before it
    came (the server's answer read as soon as there is one)."""
    where = urlsplit(url)
    sock = socket.create_connection((where.hostname, where.port), timeout=60)
    sent = 0
    try:
        sock.sendall(
            (
                f"POST /author/upload HTTP/1.1\r\nHost: {where.hostname}:{where.port}\r\n"
                f"Cookie: arena_session={cookie}\r\n"
                "Content-Type: multipart/form-data; boundary=XyZ\r\n"
                f"{headers}\r\n"
            ).encode()
        )
        chunk = b"0" * 65536
        while sent < body_mb * 1024 * 1024:
            if select.select([sock], [], [], 0)[0]:
                break
            framed = b"%x\r\n%s\r\n" % (len(chunk), chunk) if "chunked" in headers else chunk
            try:
                sock.sendall(framed)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        sock.settimeout(60)
        first = sock.recv(65536).split(b"\r\n", 1)[0].decode()
        return first, sent
    finally:
        sock.close()


def test_an_oversize_upload_is_refused_as_it_arrives(setting: Setting, browser: Browser) -> None:
    browser.sign_in(setting.ada)
    cookie = browser.client.cookies.get("arena_session") or ""
    # Its declared length over the cap (1 MB): refused before a byte of it is read.
    first, sent = _raw_upload(setting.web.url, cookie, "Content-Length: 209715200\r\n", 0)
    assert first.startswith("HTTP/1.1 413"), first
    # No length declared (chunked): counted as it comes, refused at the cap, never read whole.
    first, sent = _raw_upload(setting.web.url, cookie, "Transfer-Encoding: chunked\r\n", 200)
    assert first.startswith("HTTP/1.1 413"), first
    assert sent < 16 * 1024 * 1024, f"{sent} bytes were taken before the refusal"
    # The page says why.
    answer = browser.client.post(
        "/author/upload",
        files={"bundle": ("big.tar.gz", b"x" * (1024 * 1024 + FORM_MARGIN + 1))},
        data={"csrf": browser.csrf("/author")},
    )
    assert answer.status_code == 413
    assert "over the competition&#39;s limit of 1 MB" in answer.text


def test_without_submissions_there_is_no_author_area(setting: Setting) -> None:
    with TestClient(create_app(setting.comp.ledger_path)) as client:
        assert 'href="/signin"' not in client.get("/").text
        for path in ("/signin", "/author", "/organiser"):
            assert client.get(path).status_code == 404
        assert client.post("/signin", data={"token": setting.ada}).status_code in (404, 405)


def _held_upload(url: str, cookie: str) -> socket.socket:
    """An upload that has begun (its headers and a little of its body sent) and waits: the server
    is reading it."""
    where = urlsplit(url)
    sock = socket.create_connection((where.hostname, where.port), timeout=60)
    sock.sendall(
        (
            f"POST /author/upload HTTP/1.1\r\nHost: {where.hostname}:{where.port}\r\n"
            f"Cookie: arena_session={cookie}\r\n"
            "Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: 500000\r\n\r\n"
        ).encode()
        + b"--XyZ\r\n"
        + b"0" * 1000
    )
    return sock


def _small_upload(url: str, cookie: str) -> str:
    """A whole upload of ten bytes (no form in them): the first line of the answer."""
    where = urlsplit(url)
    with socket.create_connection((where.hostname, where.port), timeout=60) as sock:
        sock.sendall(
            (
                f"POST /author/upload HTTP/1.1\r\nHost: {where.hostname}:{where.port}\r\n"
                f"Cookie: arena_session={cookie}\r\n"
                "Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: 10\r\n\r\n"
                "0123456789"
            ).encode()
        )
        return sock.recv(65536).split(b"\r\n", 1)[0].decode()


def test_an_authors_uploads_at_once_are_capped_before_their_bodies_are_read(
    setting: Setting, browser: Browser
) -> None:
    browser.sign_in(setting.ada)
    cookie = browser.client.cookies.get("arena_session") or ""
    held = [_held_upload(setting.web.url, cookie) for _ in range(UPLOADS_PER_AUTHOR)]
    try:
        # The author's next one is refused at once, with a body it never reads.
        deadline = time.monotonic() + 60
        while True:
            first = _small_upload(setting.web.url, cookie)
            if first.startswith("HTTP/1.1 429") or time.monotonic() > deadline:
                break
            time.sleep(0.1)  # the held uploads' requests not yet taken up by the server
        assert first.startswith("HTTP/1.1 429"), first
        # Another author's upload is not held up by ada's (it is read, and refused here only
        # for what it is: a form cut short).
        other = Browser(setting.web.url)
        try:
            other.sign_in(setting.bob)
            bobs = other.client.cookies.get("arena_session") or ""
            assert _small_upload(setting.web.url, bobs).startswith("HTTP/1.1 400")
        finally:
            other.close()
    finally:
        for sock in held:
            sock.close()
    # Once they end (their clients gone), her uploads are read again.
    deadline = time.monotonic() + 60
    while True:
        first = _small_upload(setting.web.url, cookie)
        if not first.startswith("HTTP/1.1 429") or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert first.startswith("HTTP/1.1 400"), first
