"""The author area's parts on their own: the sessions' store (expiry, capacity, sign-out), the
sign-in form's CSRF pairs, and the upload's reading (capped as it arrives) and parsing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from arena.web.sessions import SessionStore, SignInGuard
from arena.web.uploads import FORM_MARGIN, UploadError, parse_form, read_capped


def test_a_session_ends_when_idle_too_long_or_too_old_and_the_oldest_goes_first() -> None:
    now = [0.0]
    store = SessionStore(idle=10, most=25, capacity=2, clock=lambda: now[0])
    a = store.start("tok-a", "author", "a", "c", 1)
    assert store.find(a.id) is a and "tok-a" not in repr(a)
    now[0] = 9
    assert store.find(a.id) is a
    now[0] = 18
    assert store.find(a.id) is a, "used at 9: not idle for 10 s yet"
    now[0] = 26
    assert store.find(a.id) is None, "over 25 s since it began"
    b = store.start("tok-b", "author", "b", "c", 1)
    now[0] = 37
    assert store.find(b.id) is None, "idle for 11 s"
    c, d = store.start("c", "author", "c", "c", 1), store.start("d", "author", "d", "c", 1)
    e = store.start("e", "author", "e", "c", 1)
    assert store.find(c.id) is None and store.find(d.id) is d and store.find(e.id) is e
    store.end(d.id)
    assert store.find(d.id) is None and len(store) == 1
    assert store.find("") is None and store.find(None) is None


def test_the_upload_form_is_parsed_and_a_malformed_one_refused() -> None:
    body = (
        b'--XyZ\r\nContent-Disposition: form-data; name="csrf"\r\n\r\nabc\r\n'
        b'--XyZ\r\nContent-Disposition: form-data; name="bundle"; filename="b.tar.gz"\r\n'
        b"Content-Type: application/gzip\r\n\r\n\x1f\x8b\r\n--X\x00\r\n--XyZ--\r\n"
    )
    parts = parse_form(body, b"XyZ")
    assert parts["csrf"].data == b"abc"
    assert parts["bundle"].filename == "b.tar.gz" and parts["bundle"].data == b"\x1f\x8b\r\n--X\x00"
    for bad in (body[:-9], b"--XyZ\r\nno headers--XyZ--\r\n", b""):
        with pytest.raises(UploadError):
            parse_form(bad, b"XyZ")


def test_a_sign_in_forms_token_is_good_only_with_its_own_cookie() -> None:
    guard = SignInGuard()
    nonce, token = guard.pair()
    assert guard.check(nonce, token)
    other_nonce, other_token = guard.pair()
    assert not guard.check(nonce, other_token) and not guard.check(other_nonce, token)
    assert not guard.check(None, token) and not guard.check(nonce, None)
    assert not SignInGuard().check(nonce, token), "another server's key"


def test_an_upload_is_read_until_it_passes_the_cap_and_no_further() -> None:
    pulled: list[int] = []

    async def chunks(count: int) -> AsyncIterator[bytes]:
        for n in range(count):
            pulled.append(n)
            yield b"x" * 65536

    async def read(count: int, declared: str | None) -> bytes:
        return await read_capped(chunks(count), declared, 1)

    assert len(asyncio.run(read(8, None))) == 8 * 65536
    pulled.clear()
    with pytest.raises(UploadError) as info:
        asyncio.run(read(1000, None))
    assert info.value.status == 413 and "limit of 1 MB" in str(info.value)
    assert len(pulled) == (1024 * 1024 + FORM_MARGIN) // 65536 + 1, "stopped at the cap"
    pulled.clear()
    with pytest.raises(UploadError) as info:
        asyncio.run(read(1000, str(2 * 1024 * 1024)))
    assert info.value.status == 413 and pulled == [], "refused by its length, nothing read"
    with pytest.raises(UploadError) as info:
        asyncio.run(read(1, "12abc"))
    assert info.value.status == 400 and "Content-Length" in str(info.value)
