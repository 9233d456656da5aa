"""Likely renames: a source column the mapping would drop (missing on the target) while a
target column of a compatible type gets only its default (extra on the target) is most
likely one column renamed on one side (``RENAME COLUMN email TO email_address``). Mapped
by name, every value of it would be lost without a word; such a table is refused (exit 3)
until the configuration says what the column is: mapped (``[[tables]] columns``) or
dropped on purpose (``drop_columns``). Pure.

"Compatible type": the two columns are in the same type group (integer, decimal, string,
binary, temporal...: applier.core.types) and a conversion between them exists
(applier.convert.decide.natural_class is not impossible), whether or not the configured
``type_conversions`` allows it: a rename that also widens the column (``CHANGE email
email_address VARCHAR(60)`` under ``type_conversions = ""``) must not pass as a column
dropped either. Once mapped, a conversion the mode does not allow is refused by name as
any other (exit 3), so nothing is lost either way; the message says which
``type_conversions`` it needs. A missing column with several such candidates names the
nearest by position first.
"""

from __future__ import annotations

from dataclasses import dataclass

from applier.convert.decide import Decision, natural_class, refusal_reason
from applier.convert.mapping import TableMapping, is_generated
from applier.core.conversions import Mode
from applier.core.types import Column


@dataclass(frozen=True)
class LikelyRename:
    source: Column  # missing on the target
    target: Column  # extra on the target, of a compatible type
    others: tuple[str, ...] = ()  # further candidates' names
    needs: str = ""  # why type_conversions would refuse the pair once mapped ('' if not)


def compatible(source: Column, target: Column, mode: Mode) -> bool:
    return (source.type.group == target.type.group
            and natural_class(source.type, target.type, mode) is not Decision.REFUSED)


def likely_renames(mapping: TableMapping, mode: Mode) -> tuple[LikelyRename, ...]:
    """One entry per missing source column with a compatible extra target column."""
    found: list[LikelyRename] = []
    used: set[int] = set()
    for scol in mapping.missing_on_target:
        cands = [t for t in mapping.extra_target  # a generated column takes no values
                 if id(t) not in used and not is_generated(t) and compatible(scol, t, mode)]
        if not cands or scol.name is None:
            continue
        cands.sort(key=lambda t: abs(t.index - scol.index))
        used.add(id(cands[0]))
        found.append(LikelyRename(scol, cands[0], tuple(c.name for c in cands[1:]),
                                  refusal_reason(scol.type, cands[0].type, mode)))
    return tuple(found)


def _toml(name: str) -> str:
    return name if name.replace("_", "").isalnum() and name.isascii() else f'"{name}"'


def config_lines(source: str, renames: tuple[LikelyRename, ...]) -> str:
    """The configuration that maps the renames: one line, TOML."""
    cols = ", ".join(f'{_toml(r.source.name)} = "{r.target.name}"' for r in renames)
    return f'[[tables]] source = "{source}"  columns = {{ {cols} }}'


def describe(source: str, target: str, renames: tuple[LikelyRename, ...]) -> str:
    """The refusal: which columns, what would be lost, the configuration that fixes it."""
    pairs = "; ".join(
        f"source column {r.source.name} ({r.source.type.sql()}) is missing on target "
        f"{target} while target column {r.target.name} ({r.target.type.sql()}) gets only "
        f"its default"
        + (f" (other candidates: {', '.join(r.others)})" if r.others else "")
        + (f" (mapped, {r.needs})" if r.needs else "")
        for r in renames)
    drops = ", ".join(f'"{r.source.name}"' for r in renames)
    return (f"likely renamed column(s) in table '{source}': {pairs} — its values would be "
            f"lost; map the rename: {config_lines(source, renames)} (or, if the column is "
            f"dropped on purpose: drop_columns = [{drops}] in that [[tables]] entry)")
