"""reconcile.session on a started Spark (the test session's own, tests/integration/
conftest.py `spark`, made by reconcile.session.spark_session): the lean settings are set,
and a LazySpark on the same master reuses that session."""

from __future__ import annotations

import pytest

from reconcile.session import LEAN, LazySpark

pytestmark = pytest.mark.integration


def test_a_started_session_has_the_lean_settings(spark):
    conf = spark.sparkContext.getConf()
    assert {k: conf.get(k) for k in LEAN} == LEAN
    assert spark.sparkContext.master == "local[2]"
    assert conf.get("spark.driver.memory") == "3g"  # local: driver and executor in one JVM
    assert conf.get("spark.app.name") == "reconcile"


def test_lazy_spark_starts_on_first_use_and_a_local_one_is_not_distributed(spark,
                                                                           monkeypatch):
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    lazy = LazySpark("local[2]", None)
    assert lazy.wanted is True and lazy.started is False
    assert lazy.get() is spark  # getOrCreate: the running session
    assert lazy.started is True and lazy.distributed is False
