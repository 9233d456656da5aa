"""TableMapping: source columns <-> target columns, converters, extra and missing columns.

A ``[[tables]]`` entry (applier.core.renames.TableNames) renames columns (``columns``: a
source column goes to the target column of the new name, else, while the target has not
renamed it yet, to the column of its own name) and drops some on purpose
(``drop_columns``: never written, listed as ``dropped``, not as missing).

Pure. Built once per table map (cached by the applier) and rebuilt when the table map or the
target table changes. A refused conversion raises before any row of the table is touched.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from applier.convert.converters import identity
from applier.convert.decide import Converter, Decision, classify, converter, type_texts
from applier.core.conversions import Mode
from applier.core.renames import NO_NAMES, TableNames
from applier.core.types import Column, SourceTable, TableDef
from applier.errors import ConfigError, ConversionRefused

try:  # convert_images' renaming compiled (setup.py); else convert_image per image
    from applier.convert import _rename
except ImportError:
    _rename = None


@dataclass(frozen=True)
class ColumnPair:
    source: Column
    target: Column
    decision: Decision
    convert: Converter = field(compare=False, repr=False)


@dataclass(frozen=True)
class TableMapping:
    source: SourceTable
    target: TableDef
    pairs: tuple[ColumnPair, ...]  # in source column order
    extra_target: tuple[Column, ...]  # target-only columns: they get their defaults
    missing_on_target: tuple[Column, ...]  # source-only columns: dropped
    by_index: dict[int, ColumnPair] = field(compare=False, repr=False)
    # source columns whose target column is generated: never written (the target server
    # computes it), as MySQL's replica does
    generated_on_target: tuple[Column, ...] = ()
    # source columns listed in drop_columns ([[tables]]): dropped on purpose
    dropped: tuple[Column, ...] = ()

    @property
    def refused(self) -> tuple[ColumnPair, ...]:
        return tuple(p for p in self.pairs if p.decision is Decision.REFUSED)

    def convert_image(self, image: dict[int, Any]) -> dict[str, Any]:
        """Source row image {source index: value} -> {target column name: converted value},
        only for mapped columns present in the image, in source order. A column of
        identical types is copied without a call (its converter is the identity)."""
        names = self._names
        if names is not None:  # every column mapped, as it is: renamed in one C-level pass
            return dict(zip(map(names.__getitem__, image), image.values(), strict=True))
        out: dict[str, Any] = {}
        plan = self._fast
        for index, value in image.items():
            entry = plan.get(index)
            if entry is not None:
                name, convert = entry
                out[name] = value if convert is None else convert(value)
        return out

    def convert_images(self, images: list[dict[int, Any]]) -> list[dict[str, Any]]:
        """convert_image of every image of a list (one call for a batch of rows)."""
        names = self._names
        if names is not None and _rename is not None:
            return _rename.rename_images(images, names)
        return [self.convert_image(image) for image in images]

    @functools.cached_property
    def _names(self) -> tuple[str, ...] | None:
        """The target name of each source column by index, when every source column is
        mapped with the identity (else None: convert_image takes the general loop)."""
        n = len(self.source.columns)
        fast = self._fast
        if sorted(fast) != list(range(n)) or any(c is not None for _, c in fast.values()):
            return None
        return tuple(fast[i][0] for i in range(n))

    @functools.cached_property
    def _fast(self) -> dict[int, tuple[str, Converter | None]]:
        return {i: (p.target.name, None if p.convert is identity else p.convert)
                for i, p in self.by_index.items()}


def _by_name(source: SourceTable, target: TableDef, names: TableNames) -> list:
    """(source column, target column or None): a mapped column to its new name when the
    target has it (else its own name), every other column to its own name; a target
    column is taken once."""
    taken: set[int] = set()
    found: dict[int, Column | None] = {}
    for c in source.columns:  # the configured names first: they win over a same name
        new = names.target_column(c.name) if c.name else None
        tcol = target.column(new) if new else None
        if tcol is not None:
            found[c.index] = tcol
            taken.add(id(tcol))
    for c in source.columns:
        if c.index not in found:
            tcol = target.column(c.name)
            found[c.index] = tcol if tcol is not None and id(tcol) not in taken else None
            if tcol is not None:
                taken.add(id(tcol))
    return [(c, found[c.index]) for c in source.columns]


def _pair_columns(source: SourceTable, target: TableDef, by: str,
                  names: TableNames = NO_NAMES):
    """Yield (source column, target column or None); return target columns left unpaired."""
    if by == "name":
        if not source.has_names:
            raise ConfigError(
                f"table '{source.qualified}': the table map carries no column names, so "
                "columns cannot be mapped by name — set binlog_row_metadata=FULL on the "
                "source, or column_mapping = \"position\" in [replication]")
        pairs = _by_name(source, target, names)
    elif by == "position":
        tcols = target.columns
        pairs = [(c, tcols[c.index] if c.index < len(tcols) else None) for c in source.columns]
    else:
        raise ConfigError(f"column_mapping: expected 'name' or 'position', got {by!r}")
    if names.drop_columns:
        pairs = [(c, None if c.name and names.dropped(c.name) else t) for c, t in pairs]
    used = {id(t) for _, t in pairs if t is not None}
    extra = tuple(t for t in target.columns if id(t) not in used)
    return pairs, extra


def build_mapping(source: SourceTable, target: TableDef, mode: Mode, *,
                  by: str = "name", strict: bool = True,
                  names: TableNames = NO_NAMES) -> TableMapping:
    """Map columns and decide each conversion by type (WL#5151); ``names``: the table's
    renamed and dropped columns (its [[tables]] entry).

    strict: raise ConversionRefused for the first refused column (the applier); with
    strict=False refused columns are kept with Decision.REFUSED (the `check` report)."""
    pairs, extra = _pair_columns(source, target, by, names)
    mapped: list[ColumnPair] = []
    missing: list[Column] = []
    generated: list[Column] = []
    dropped: list[Column] = []
    for scol, tcol in pairs:
        if tcol is None:
            (dropped if scol.name and names.dropped(scol.name) else missing).append(scol)
            continue
        if is_generated(tcol):
            generated.append(scol)
            continue
        decision = classify(scol.type, tcol.type, mode)
        if decision is Decision.REFUSED:
            if strict:
                raise ConversionRefused(source.qualified, scol.index, scol.name,
                                        *type_texts(scol.type, tcol.type, mode))
            fn: Converter = _refused
        else:
            fn = converter(scol.type, tcol.type, mode)
        mapped.append(ColumnPair(scol, tcol, decision, fn))
    return TableMapping(source, target, tuple(mapped), extra, tuple(missing),
                        {p.source.index: p for p in mapped}, tuple(generated),
                        tuple(dropped))


def is_generated(col: Column) -> bool:
    """A generated (virtual/stored/persistent) column; not MySQL's DEFAULT_GENERATED
    (a column with an expression default, which takes values)."""
    extra = col.extra.lower()
    return any(f"{kind} generated" in extra for kind in ("virtual", "stored", "persistent"))


def needs_value(col: Column) -> bool:
    """A target-only column an INSERT must name: NOT NULL, no default, not computed."""
    return not col.has_default and not col.nullable and not is_generated(col)


def _refused(value: Any) -> Any:  # pragma: no cover - never called by the applier
    raise AssertionError("a refused conversion has no converter")


def target_names(mapping: TableMapping, indexes: Iterable[int]) -> set[str]:
    """Target column names covered by the given source column indexes."""
    return {mapping.by_index[i].target.name for i in indexes if i in mapping.by_index}
