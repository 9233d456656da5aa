"""The daemon's garbage-collector settings. Applying rows allocates many short-lived
containers (a row's dict, a change's tuple, a statement's parts); with CPython's default
thresholds (700 allocations) a young-generation collection runs every few rows and an
old-generation one, walking every long-lived object (the caches of table definitions,
plans and conversions), every hundred thousand. The daemon's objects are freed by their
reference counts; the collector only finds cycles, which the apply path does not make
per row. So once started, what exists is frozen out of the collector's walks
(``gc.freeze``) and it runs less often (measured: bench/RESULTS.md, "gc")."""

from __future__ import annotations

import gc

THRESHOLDS = (50_000, 20, 20)  # young generation: allocations; older: collections


def tune() -> tuple[int, int, int]:
    """Freeze what exists and raise the thresholds; the thresholds before (``restore``)."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    return before


def restore(thresholds: tuple[int, int, int]) -> None:
    """Back to ``thresholds`` with nothing frozen (a daemon run inside another program,
    e.g. a benchmark, leaves it as it found it)."""
    gc.unfreeze()
    gc.set_threshold(*thresholds)
