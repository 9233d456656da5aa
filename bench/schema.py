"""The benchmarks' scratch schema: `bench`, recreated with one table."""


def fresh_bench_table(cur, table_sql: str) -> None:
    cur.execute("DROP DATABASE IF EXISTS bench")
    cur.execute("CREATE DATABASE bench")
    cur.execute(table_sql)
