"""The committed protocol code is exactly what scripts/gen_proto.py generates from proto/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_code_is_fresh() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_proto.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr


def test_generated_modules_import_without_edits() -> None:
    from arena.wire.v1 import admin_pb2_grpc, bot_pb2, bot_pb2_grpc, game_pb2

    request = bot_pb2.DecisionRequest(request_id=7, observation=game_pb2.Observation(seat=1))
    again = bot_pb2.DecisionRequest.FromString(request.SerializeToString())
    assert again.request_id == 7 and again.observation.seat == 1
    assert hasattr(bot_pb2_grpc, "BotGatewayServicer")
    assert hasattr(admin_pb2_grpc, "AdminStub")
