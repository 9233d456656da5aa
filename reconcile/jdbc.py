"""Spark JDBC reads: one partition per key-range chunk, digests and rows per chunk.

When every compared column can be hashed in SQL, the servers compute each row's 64-bit hash
and Spark only sums per chunk (JVM only, no Python). Otherwise the servers hash the columns
they can, and the Python workers convert the rest with the applier's converters. Rows are
fetched only for chunks whose digests differ.
"""

from __future__ import annotations

import logging
import os
from collections import defaultdict
from dataclasses import dataclass, field
from urllib.parse import quote as urlquote

from applier.config import ServerConfig
from reconcile.compare import Digest, RowDiff, diff_group
from reconcile.expected import MASK64, row_hash
from reconcile.logsafe import scrub
from reconcile.plan import SOURCE, ComparePlan

log = logging.getLogger(__name__)

DEBIAN_JAR = "/usr/share/java/mariadb-java-client.jar"
DRIVERS = {"mariadb": "org.mariadb.jdbc.Driver", "mysql": "com.mysql.cj.jdbc.Driver"}


@dataclass(frozen=True)
class Jdbc:
    """How Spark reaches one server. The password is in `properties` only, never in url."""

    url: str
    properties: dict = field(repr=False)

    def __str__(self) -> str:
        return redact(self.url)


def redact(text: str) -> str:
    """Remove passwords from a JDBC URL or any text that may hold one."""
    return scrub(text)


def default_jar() -> str | None:
    return DEBIAN_JAR if os.path.exists(DEBIAN_JAR) else None


def driver_class(jar: str | None) -> str:
    name = os.path.basename(jar or DEBIAN_JAR).lower()
    return DRIVERS["mysql"] if "mysql-connector" in name else DRIVERS["mariadb"]


def jdbc_for(server: ServerConfig, driver: str, fetch_size: int = 10000) -> Jdbc:
    """jdbc:mysql:// so that Spark's MySQL dialect quotes with backticks; Connector/J 2.x
    (MariaDB) accepts that scheme with `permitMysqlScheme`. Sessions read TIMESTAMP in
    UTC on both sides."""
    opts = ["permitMysqlScheme", "sessionVariables=time_zone='+00:00'",
            "characterEncoding=utf8", "connectionCollation=utf8mb4_bin"
            if driver == DRIVERS["mysql"] else "useUnicode=true"]
    if server.ssl_ca:
        opts += ["useSsl=true", "sslMode=VERIFY_CA", f"serverSslCert={urlquote(server.ssl_ca)}"]
    url = f"jdbc:mysql://{server.host}:{server.port}/?{'&'.join(opts)}"
    props = {"user": server.user, "password": server.password, "driver": driver,
             "fetchsize": str(fetch_size)}
    return Jdbc(url, props)


def read(spark, jdbc: Jdbc, select: str, preds: list[str]):
    log.debug("JDBC %s: %s (%d partitions)", jdbc, select, len(preds))
    return spark.read.jdbc(jdbc.url, f"({select}) rc", predicates=preds,
                           properties=dict(jdbc.properties))


def _digest_parts(spark, jdbc: Jdbc, plan: ComparePlan, side: str, preds: list[str]):
    """Per-partition digests of one side: a DataFrame (SQL path) or an RDD (Python)."""
    df = read(spark, jdbc, plan.select_digest(side), preds)
    tag = 0 if side == SOURCE else 1
    if plan.all_pushdown:
        from pyspark.sql import functions as F

        return df.select(F.lit(tag).alias("side"), F.spark_partition_id().alias("p"),
                         F.col("rc__h"))
    conv = plan.converter()
    idx = plan.python_indexes()
    names = [f"rc__{i}" for i in idx]
    # only what is hashed: the raw key columns (there for the chunk predicates) are never
    # fetched, so a key Spark cannot hold (DECIMAL(65,30)) is no problem
    df = df.select("rc__p", *names)
    convert = conv.expected if side == SOURCE else conv.actual
    algo = plan.hash

    def digest(part: int, it):
        n = s = 0
        for r in it:
            n += 1
            s += row_hash(convert([r[c] for c in names], idx), algo, r["rc__p"])
        yield (tag, part), (n, s & MASK64)

    return df.rdd.mapPartitionsWithIndex(digest)


def chunk_digests(spark, source: Jdbc, target: Jdbc, plan: ComparePlan, src_preds: list[str],
                  tgt_preds: list[str]) -> tuple[dict[int, Digest], dict[int, Digest]]:
    """({chunk: (rows, hash sum)} of the source, the same of the target), both sides in
    one Spark job; chunk number = predicate index."""
    a = _digest_parts(spark, source, plan, SOURCE, src_preds)
    b = _digest_parts(spark, target, plan, "target", tgt_preds)
    out: tuple[dict, dict] = ({}, {})
    if plan.all_pushdown:
        from pyspark.sql import functions as F

        rows = (a.unionAll(b).groupBy("side", "p")
                .agg(F.count(F.lit(1)).alias("n"), F.sum("rc__h").alias("s")).collect())
        for r in rows:
            out[r["side"]][r["p"]] = (int(r["n"]), int(r["s"] or 0) & MASK64)
        return out
    for (side, part), digest in a.union(b).collect():
        out[side][part] = digest
    return out


def many_chunk_digests(spark, source: Jdbc, target: Jdbc,
                       tables: dict[int, tuple[ComparePlan, list[str], list[str]]]
                       ) -> dict[int, tuple[dict[int, Digest], dict[int, Digest]]]:
    """`chunk_digests` of many tables whose conversions run in Python, in one Spark job
    (one partition per chunk and side, across tables): {table: (source, target)}."""
    rdds = []
    for i, (plan, sp, tp) in tables.items():
        for side, jdbc, preds in ((SOURCE, source, sp), ("target", target, tp)):
            rdds.append(_digest_parts(spark, jdbc, plan, side, preds)
                        .map(lambda kv, i=i: ((i, *kv[0]), kv[1])))
    out: dict[int, tuple[dict, dict]] = {i: ({}, {}) for i in tables}
    if rdds:
        for (i, side, part), digest in spark.sparkContext.union(rdds).collect():
            out[i][side][part] = digest
    return out


def keyed_rows(spark, jdbc: Jdbc, plan: ComparePlan, side: str, preds: list[str]):
    """RDD of (key, normalized row): expected values for the source, stored ones for the
    target. A table without a key is keyed by the whole row."""
    df = read(spark, jdbc, plan.select_detail(side),
              preds).select(*[f"rc__{i}" for i in range(len(plan.columns))])
    conv = plan.converter()
    key = plan.key
    convert = conv.expected if side == SOURCE else conv.actual

    def pair(r):
        row = convert(list(r))
        return (tuple(row[i] for i in key) if key else row), row

    return df.rdd.map(pair)


def diff_chunks(spark, source: Jdbc, target: Jdbc, plan: ComparePlan, src_preds: list[str],
                tgt_preds: list[str], limit: int) -> tuple[list[RowDiff], bool]:
    """Row differences in the given chunks (at most `limit`; True when cut)."""
    names = [c.target for c in plan.columns]
    src = keyed_rows(spark, source, plan, SOURCE, src_preds)
    tgt = keyed_rows(spark, target, plan, "target", tgt_preds)
    diffs = src.cogroup(tgt).flatMap(
        lambda kv: diff_group(kv[0], list(kv[1][0]), list(kv[1][1]), names))
    got = diffs.take(limit + 1)
    return got[:limit], len(got) > limit


def direct_rows(conn, plan: ComparePlan, side: str, keys: set[tuple],
                batch: int = 500) -> dict[tuple, list[tuple]]:
    """{key: [rows]} read on the driver by key (a chunkable key: literals mean the same
    on both sides). For the few keys of a re-check this beats a Spark job by far. No keys:
    no rows (and no query)."""
    from reconcile.chunking import key_in
    from reconcile.repair import literal

    conv = plan.converter()
    convert = conv.expected if side == SOURCE else conv.actual
    cols, n = plan.key_columns(side), len(plan.columns)
    out: dict[tuple, list[tuple]] = defaultdict(list)
    ordered = sorted(keys, key=repr)
    for i in range(0, len(ordered), batch):
        lits = [tuple(literal(v) for v in k) for k in ordered[i:i + batch]]
        sql = f"SELECT * FROM ({plan.select_detail(side)}) rc WHERE {key_in(cols, lits)}"
        with conn.cursor() as cur:
            cur.execute(sql)
            for r in cur.fetchall():
                row = convert(list(r[:n]))
                out[tuple(row[j] for j in plan.key)].append(row)
    return dict(out)


def direct_range_rows(conn, plan: ComparePlan, side: str,
                      preds: list[str]) -> dict[tuple, list[tuple]]:
    """{key: [rows]} of a few small key ranges, read on the driver. No ranges (the
    bisection found no differing one left: the difference was lag that has caught up):
    no rows, and no query (an empty OR is no WHERE)."""
    if not preds:
        return {}
    conv = plan.converter()
    convert = conv.expected if side == SOURCE else conv.actual
    n = len(plan.columns)
    where = " OR ".join(f"({p})" for p in preds)
    out: dict[tuple, list[tuple]] = defaultdict(list)
    with conn.cursor() as cur:
        cur.execute(f"SELECT * FROM ({plan.select_detail(side)}) rc WHERE {where}")
        for r in cur.fetchall():
            row = convert(list(r[:n]))
            out[tuple(row[j] for j in plan.key)].append(row)
    return dict(out)


def rows_for_keys(spark, jdbc: Jdbc, plan: ComparePlan, side: str, preds: list[str],
                  keys: set[tuple]) -> dict[tuple, list[tuple]]:
    """{key: [rows]} for the wanted keys, read from the chunks that hold them."""
    wanted = spark.sparkContext.broadcast(keys)
    pairs = keyed_rows(spark, jdbc, plan, side, preds).filter(lambda kv: kv[0] in wanted.value)
    out: dict[tuple, list[tuple]] = defaultdict(list)
    for k, row in pairs.collect():
        out[k].append(row)
    wanted.unpersist()
    return dict(out)
