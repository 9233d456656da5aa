"""What a TransactionApplier (applier.apply.transactions.transaction) is given: the options of
the apply (``ApplyOptions``, from [replication] and the daemon) and the totals it counts into
(``Totals``, shared by every applier of a daemon session)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from applier.apply.rows.sourcetypes import ReadDeclared
from applier.apply.transactions.binlogrun import BinlogRoute
from applier.core.conversions import Mode
from applier.core.renames import Renames


@dataclass
class Totals:
    transactions: int = 0
    rows: int = 0
    skipped: int = 0  # executed on the target already (keep_source_gtids): not applied
    lookups: Counter = field(default_factory=Counter)


@dataclass(frozen=True)
class ApplyOptions:
    mode: Mode
    column_mapping: str = "name"
    idempotent: bool = False
    ddl: str = "apply"
    target_triggers: str = "refuse"  # or "fire" (applier.apply.target.triggers)
    accept: Callable[[str, str], bool] = lambda s, t: True
    accept_db: Callable[[str], bool] = lambda db: True  # CREATE/ALTER/DROP DATABASE
    # the source's column definitions the DDL policy knows (applier.apply.ddl.policy): kept
    # by the daemon across reconnects, as its ApplyOptions are
    source_definitions: dict = field(default_factory=dict, compare=False, hash=False)
    # the source's UUID/INET6/INET4 column declarations of a table (applier.ops.sourcecolumns
    # reads them; applier.apply.rows.sourcetypes): None, never asked (those conversions refused)
    source_columns: ReadDeclared | None = field(default=None, compare=False, hash=False)
    # commit under the source's GTIDs, skip what the target executed
    # (applier.apply.transactions.keptgtids)
    keep_source_gtids: bool = False
    # lock conflicts applied again in place (applier.apply.transactions.lockretry)
    transaction_retries: int = 10
    # names that change between source and target: rewrite_db, [[tables]]
    names: Renames = field(default_factory=Renames, compare=False, hash=False)
    # [verify]: makes each target connection's Staging (applier.verify.intake): its
    # groups of converted rows written, handed over when it commits
    observe: Callable | None = field(default=None, compare=False, hash=False)
    # large rows events of identical tables applied as BINLOG statements
    # (applier.apply.transactions.serverrows); None: never
    binlog: BinlogRoute | None = field(default=None, compare=False, hash=False)
