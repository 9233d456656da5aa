"""One case's result: the outcomes of both replicas and their final rows, compared.

Pure logic (no server). A difference is explained only by a deliberate difference the
README documents ("Deliberate differences from MySQL's own replica") that the case
contains; anything else is unexplained and fails the test.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

# the README's deliberate differences a generated case can contain
CLASSES = {
    "signedness": "integers: the servers copy same-size ones bit for bit and read a "
                  "resized one as signed (no ALL_UNSIGNED); we keep the value",
    "charsets": "latin1 into utf8mb4: the servers store the latin1 bytes, we transcode",
    "name_mapping": "target columns in another order: MySQL maps by position, we by name",
    "enum_set_by_name": "ENUM/SET with other member lists: the servers go by index, we "
                        "decide and convert by member name",
}
# not ours: the server's replica stopped, ours applied every event and equals the source
SERVER_STOPPED = "server_replica_stopped"
SERVER_STOPPED_MEANS = ("the server's replica stopped; ours caught up with the source's "
                        "rows exactly (every target type the source's)")


@dataclass
class Outcome:
    """How one replica ended: error 0 when it caught up, else its error code."""

    error: int
    message: str
    rows: list[tuple]

    def summary(self) -> str:
        return "caught up" if not self.error else f"stopped with {self.error}: {self.message}"


@dataclass
class Verdict:
    agree: bool
    classes: set[str] = field(default_factory=set)  # explained by these (when not agree)
    columns: set[str] = field(default_factory=set)  # columns whose values differ
    outcome_differs: bool = False

    @property
    def unexplained(self) -> bool:
        return not self.agree and not self.classes


def _column_values(rows: list[tuple], index: int) -> Counter:
    return Counter(repr(row[index]) for row in rows)


def differing_columns(names: list[str], ours: list[tuple], native: list[tuple]) -> set[str]:
    """Columns whose multiset of values differs between the two row sets."""
    return {name for i, name in enumerate(names)
            if _column_values(ours, i) != _column_values(native, i)}


# the stops a deliberate difference can cause on one side: a conversion refused (ours by
# member names or charsets where the server takes the same storage as the same type), a
# value the target column cannot hold (the server's bit copy, our transcoding); and where
# such a column is in a key, a duplicate (-4 and -13 both kept as 0 in a SMALLINT
# UNSIGNED key, which the server's bit copy stores as 65532 and 65523)
DELIBERATE_STOPS = {1677, 1366, 1264}
DELIBERATE_KEY_STOPS = DELIBERATE_STOPS | {1062}
_REFUSED_COLUMN = re.compile(r"^Column \d+ \((?P<name>[^)]*)\) of table ")


def _stops_explained(deliberate: dict[str, str], key_columns: set[str], ours: Outcome,
                     native: Outcome) -> bool:
    """Whether the stops of a case whose outcomes differ come from its deliberate
    columns: each stop is one of DELIBERATE_STOPS (DELIBERATE_KEY_STOPS when such a
    column is in a key), and our refusal names such a column."""
    if not deliberate:
        return False
    allowed = DELIBERATE_KEY_STOPS if key_columns & set(deliberate) else DELIBERATE_STOPS
    for outcome in (ours, native):
        if outcome.error and outcome.error not in allowed:
            return False
    if ours.error == 1677:
        refused = _REFUSED_COLUMN.match(ours.message)
        return refused is not None and refused.group("name") in deliberate
    return True


def _projected(rows: list[tuple], keep: list[int]) -> Counter:
    return Counter(repr(tuple(row[i] for i in keep)) for row in rows)


def judge(names: list[str], deliberate: dict[str, str], case_classes: set[str],
          ours: Outcome, native: Outcome, key_columns: set[str] = frozenset(),
          source_rows: list[tuple] | None = None) -> Verdict:
    """names: the compared columns (in the SELECT's order); deliberate: column -> class of
    the columns made different on purpose; case_classes: every class in the case;
    key_columns: the columns of the table's key; source_rows: the source's rows when
    every target type is the source's (then the source is the truth both must reach).

    Rows that differ are explained when they agree on every other column (values of a
    deliberate column may differ, or be moved between rows, as by ENUM index)."""
    same_rows = Counter(map(repr, ours.rows)) == Counter(map(repr, native.rows))
    outcome_differs = ours.error != native.error
    if same_rows and not outcome_differs:
        return Verdict(agree=True)
    columns = differing_columns(names, ours.rows, native.rows)
    verdict = Verdict(agree=False, columns=columns, outcome_differs=outcome_differs)
    keep = [i for i, name in enumerate(names) if name not in deliberate]
    if "name_mapping" in case_classes:
        verdict.classes = {"name_mapping"}
    elif (source_rows is not None and native.error and not ours.error
          and Counter(map(repr, ours.rows)) == Counter(map(repr, source_rows))):
        verdict.classes = {SERVER_STOPPED}
    elif outcome_differs:
        if _stops_explained(deliberate, set(key_columns), ours, native):
            verdict.classes = set(deliberate.values())
    elif deliberate and _projected(ours.rows, keep) == _projected(native.rows, keep):
        verdict.classes = set(deliberate.values())
    return verdict
