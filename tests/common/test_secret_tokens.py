"""Tokens are given on command lines: none may look like an option to the bot's argument parser."""

from __future__ import annotations

import argparse

from arena.common.secret_tokens import new_token


def test_no_token_looks_like_an_option() -> None:
    # A URL-safe token starts with "-" about once in 64: a thousand draws would have shown one.
    tokens = [new_token() for _ in range(1000)]
    assert not [t for t in tokens if t.startswith("-")]
    parser = argparse.ArgumentParser()
    parser.add_argument("--token")
    assert all(parser.parse_args(["--token", t]).token == t for t in tokens)
    assert len(set(tokens)) == 1000 and all(len(t) == 48 for t in tokens)
