"""A bot's conformance check (``arena check-bot``, and every competition submission's check): the
scripted session run over a real referee (:mod:`.harness`), each finished match judged
(:mod:`.judge`) into a :class:`Report` of the bot's mistakes (:mod:`.report`), with what a crashed
bot wrote (:mod:`.output_tail`)."""

from arena.play.conformance.harness import CONNECT_TIMEOUT, FIRST_BOT, check_bot
from arena.play.conformance.report import (
    CRASH,
    DISCONNECT,
    GIVE_UP_AFTER,
    HELLO,
    ILLEGAL,
    PROTOCOL,
    REFEREE,
    TIMEOUT,
    GameSummary,
    HelloInfo,
    Mistake,
    Report,
)

__all__ = [
    "CONNECT_TIMEOUT",
    "CRASH",
    "DISCONNECT",
    "FIRST_BOT",
    "GIVE_UP_AFTER",
    "HELLO",
    "ILLEGAL",
    "PROTOCOL",
    "REFEREE",
    "TIMEOUT",
    "GameSummary",
    "HelloInfo",
    "Mistake",
    "Report",
    "check_bot",
]
