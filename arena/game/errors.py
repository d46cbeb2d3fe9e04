"""The rules engine's exceptions: narrow, and quoting the input and the situation."""

from __future__ import annotations


class ParseError(ValueError):
    """A text form (card, action, variant option) could not be parsed; the message says what was expected."""


class IllegalActionError(ValueError):
    """An action that the rules do not allow in this situation; the message names both."""


class VariantError(ValueError):
    """An unknown variant or option, or an option value that the variant does not take."""
