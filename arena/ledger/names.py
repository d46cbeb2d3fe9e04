"""When two entrants' names are the same to a reader: after case folding, punctuation and look-alike
folding.

A bot's name belongs to the author who first submitted it, but a reader of the leaderboard tells
names apart by eye: ``Py-Trickster``, ``py-trickster.``, ``py_trickster`` and ``py-tr1ckster`` beside
another author's ``py-trickster`` pass for it, and so would Cyrillic or Greek letters drawn like Latin
ones where a name may hold them (an author's). :func:`skeleton` maps a name to what a reader sees:

1. Unicode compatibility form (NFKC: full-width letters, ligatures, superscripts become plain ones),
   then case folding;
2. marks taken off (``é`` is ``e``) and every character that is neither a letter nor a digit left out
   (``.``, ``_``, ``-``, spaces, invisible joiners);
3. letters and digits drawn alike made one: Cyrillic and Greek look-alikes of Latin letters, ``0`` as
   ``o``, ``1``, ``i`` and ``|`` as ``l``, ``5`` as ``s``, ``rn`` as ``m``, ``vv`` as ``w``.

Two names with the same skeleton are one name. The table is deliberately short (the look-alikes of
the letters a name is made of, in the fonts the web and a terminal use), and errs towards refusing:
a name refused for looking like another's costs its author a rename; one accepted costs a reader the
truth.
"""

from __future__ import annotations

import unicodedata

# Letters of other scripts that are drawn as a Latin letter (after case folding), and digits drawn as
# letters. Keys are single characters; multi-letter look-alikes follow in _PAIRS.
_ALIKE: dict[str, str] = {
    # Cyrillic
    **dict(zip("\u0430\u0432\u0441\u0501\u0435\u0451\u04bb\u0456\u0457\u0458\u043a\u04cf\u043c\u043d\u043e\u0440\u051b\u0433\u0455\u0442\u0443\u04af\u0445\u051d\u044c\u0437\u0447", "abcdeehlljklmhopqrstyyxwb34", strict=True)),
    # Greek
    **dict(zip("\u03b1\u03b2\u03b5\u03b7\u03b9\u03ba\u03bd\u03bf\u03c1\u03c4\u03c5\u03c7\u03c9\u03bc\u03b3", "abenlkvoptuxwuy", strict=True)),
    # Latin letters and digits drawn alike (dotless i, sharp s)
    "0": "o", "1": "l", "i": "l", "\u0131": "l", "5": "s", "\u00df": "ss",
}  # fmt: skip
_PAIRS = (("rn", "m"), ("vv", "w"), ("cl", "d"))


def skeleton(name: str) -> str:
    """What ``name`` looks like to a reader (see the module's docstring): equal skeletons, one name."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", name).casefold())
    kept = "".join(
        _ALIKE.get(c, c)
        for c in text
        if unicodedata.category(c)[0] in "LN"  # letters and digits; marks and the rest left out
    )
    for pair, single in _PAIRS:
        kept = kept.replace(pair, single)
    return kept


def same_name(a: str, b: str) -> bool:
    """Whether a reader would take ``a`` for ``b``."""
    return skeleton(a) == skeleton(b)
