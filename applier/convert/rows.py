"""The convert stage of the flow (decode -> convert -> plan -> execute): a group of row
changes of one table and one kind, as the source's row images hold them ({source column
index: value}), becomes the target's values by column name ({target column: value}),
each value converted by the converter its column pair was given when the table's mapping
was built (applier.convert.mapping; never chosen per row).

Pure, like the mapping: the transaction applier converts a group here, then the row
writer (applier.apply.rows.rowwriter) only plans and sends statements for target values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from applier.binlog.events import RowChange
from applier.convert.mapping import TableMapping

TargetImage = dict[str, Any]  # target column name -> converted value, in source order


class ConvertedRows(NamedTuple):
    """A group's images in the target's names and values (a named tuple: one per group,
    on the hot path)."""

    kind: str  # 'insert', 'update' or 'delete'
    befores: list[TargetImage]  # update, delete (empty for inserts)
    afters: list[TargetImage]  # insert, update (empty for deletes)


def convert_rows(mapping: TableMapping, group: Sequence[RowChange]) -> ConvertedRows:
    """The images of ``group`` (row changes of one kind to ``mapping``'s table) converted:
    only mapped columns present in each image (applier.convert.mapping.convert_image)."""
    kind = group[0].kind
    convert = mapping.convert_images
    befores = convert([c.before for c in group]) if kind != "insert" else []
    afters = convert([c.after for c in group]) if kind != "delete" else []
    return ConvertedRows(kind, befores, afters)
