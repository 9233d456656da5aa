"""MySQL's replica_type_conversions: its syntax (a comma-separated subset of four names, any
case, "" for identical types only) and its value (``Mode``). One parser: the
configuration validates ``[replication] type_conversions`` with it (applier.config) and
the per-column decisions read it (applier.convert.decide).
"""

from __future__ import annotations

from dataclasses import dataclass

CONVERSIONS = ("ALL_LOSSY", "ALL_NON_LOSSY", "ALL_SIGNED", "ALL_UNSIGNED")


class UnknownConversion(ValueError):
    """An item of the list is none of CONVERSIONS (``item``: upper-cased, "" for an empty
    item such as the one after a trailing comma)."""

    def __init__(self, raw: str, text: str):
        super().__init__(f"unknown type conversion {raw!r} in {text!r}; "
                         f"allowed: {', '.join(CONVERSIONS)} (comma-separated)")
        self.item = raw.upper()


@dataclass(frozen=True)
class Mode:
    """MySQL's replica_type_conversions as a value."""

    all_lossy: bool = False
    all_non_lossy: bool = False
    all_signed: bool = False
    all_unsigned: bool = False

    @classmethod
    def parse(cls, text: str) -> Mode:
        """'ALL_LOSSY,ALL_NON_LOSSY' -> Mode; '' (or blanks) -> identical types only.
        Raises UnknownConversion (a ValueError) naming the bad item and the allowed ones."""
        items = [i.strip() for i in text.split(",")] if text and text.strip() else []
        flags = dict.fromkeys(CONVERSIONS, False)
        for item in items:
            if item.upper() not in flags:
                raise UnknownConversion(item, text)
            flags[item.upper()] = True
        return cls(*(flags[c] for c in CONVERSIONS))

    def __str__(self) -> str:
        """The canonical text: upper case, in CONVERSIONS' order ("" for none)."""
        on = (self.all_lossy, self.all_non_lossy, self.all_signed, self.all_unsigned)
        return ",".join(c for c, flag in zip(CONVERSIONS, on, strict=True) if flag)
