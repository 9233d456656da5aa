"""The differential test's generator and judge (tests/integration/differential), without
servers: a case is the same for the same seed, and only the README's deliberate
differences are explained."""

from tests.integration.differential.cases import make_case
from tests.integration.differential.compare import CLASSES, SERVER_STOPPED, Outcome, judge

NAMES = ["h", "c0", "c1"]


def test_a_seed_gives_the_same_case():
    for flavor in ("mysql", "mariadb"):
        assert make_case(7, flavor).describe() == make_case(7, flavor).describe()
    assert make_case(7, "mysql").describe() != make_case(8, "mysql").describe()


def test_cases_cover_every_key_shape_and_column_kind():
    cases = [make_case(seed, "mysql") for seed in range(300)]
    assert {c.key for c in cases} == {"primary", "unique_not_null", "unique_nullable", "none"}
    kinds = {col.kind for c in cases for col in c.columns}
    assert {"ENUM", "SET", "BIT", "YEAR", "DECIMAL", "FLOAT", "DOUBLE", "VARCHAR", "CHAR",
            "BINARY", "VARBINARY", "TEXT", "BLOB", "TIME", "DATETIME", "TIMESTAMP"} <= kinds
    assert any(c.type_conversions for c in cases)
    assert {name for c in cases for name in c.deliberate} == set(CLASSES)
    assert any(not t.commit for c in cases for t in c.transactions)


def test_equal_rows_and_outcomes_agree():
    rows = [(1, "a", 2), (2, "b", 3)]
    verdict = judge(NAMES, {}, set(), Outcome(0, "", rows), Outcome(0, "", rows[::-1]))
    assert verdict.agree and not verdict.unexplained


def test_a_lost_row_is_unexplained_even_with_deliberate_columns():
    ours = Outcome(1032, "Could not execute Delete_rows event ... Error_code: 1032", [])
    native = Outcome(0, "", [(1, "a", 2)])
    verdict = judge(NAMES, {"c1": "signedness"}, {"signedness"}, ours, native)
    assert verdict.unexplained and verdict.outcome_differs


def test_values_differing_only_in_a_deliberate_column_are_classified():
    ours = Outcome(0, "", [(1, "a", 255), (2, "c", 7)])
    native = Outcome(0, "", [(1, "a", 0), (2, "c", 7)])
    assert judge(NAMES, {"c1": "signedness"}, {"signedness"}, ours, native).classes == {
        "signedness"}
    assert judge(NAMES, {}, set(), ours, native).unexplained


def test_enum_values_moved_between_rows_are_classified():
    ours = Outcome(0, "", [(1, "a", 2), (2, "c", 3)])
    native = Outcome(0, "", [(1, "c", 2), (2, "a", 3)])
    assert judge(NAMES, {"c0": "enum_set_by_name"}, {"enum_set_by_name"}, ours,
                 native).classes == {"enum_set_by_name"}
    assert judge(NAMES, {"c1": "signedness"}, {"signedness"}, ours, native).unexplained


def test_our_refusal_is_explained_only_when_it_names_a_deliberate_column():
    native = Outcome(0, "", [(1, "a", 2)])
    refusal = ("Column 1 (c0) of table 'db.t' cannot be converted from type 'enum' to "
               "type 'enum'")
    ours = Outcome(1677, refusal, [])
    assert judge(NAMES, {"c0": "enum_set_by_name"}, {"enum_set_by_name"}, ours,
                 native).classes == {"enum_set_by_name"}
    assert judge(NAMES, {"c1": "signedness"}, {"signedness"}, ours, native).unexplained


def test_a_duplicate_is_explained_only_by_a_deliberate_key_column():
    ours = Outcome(1062, "Could not execute Write_rows event: Duplicate entry '0'", [])
    native = Outcome(0, "", [(1, 65532, 2), (2, 65523, 3)])
    deliberate = {"c0": "signedness"}
    assert judge(NAMES, deliberate, {"signedness"}, ours, native, {"c0"}).classes == {
        "signedness"}
    assert judge(NAMES, deliberate, {"signedness"}, ours, native, {"c1"}).unexplained


def test_a_stop_of_the_servers_replica_is_its_own_only_when_ours_equals_the_source():
    source = [(1, "a", 2)]
    native = Outcome(1032, "Could not execute Update_rows event ... Error_code: 1032", [])
    assert judge(NAMES, {}, set(), Outcome(0, "", source), native,
                 source_rows=source).classes == {SERVER_STOPPED}
    assert judge(NAMES, {}, set(), Outcome(0, "", []), native, source_rows=source).unexplained
    assert judge(NAMES, {}, set(), Outcome(0, "", source), native).unexplained
