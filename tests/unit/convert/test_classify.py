"""classify(): the full pair matrix inside each group under every mode.

Expected decisions are computed here from independent, simple statements of the rules
(WL#5151's range table, capacities), never by calling the code under test."""

import itertools

import pytest

from applier.convert.decide import Decision, classify, natural_class, resolve_source
from applier.core.conversions import Mode
from applier.core.types import STRING, SqlType

MODES = ["", "ALL_LOSSY", "ALL_NON_LOSSY", "ALL_LOSSY,ALL_NON_LOSSY"]
ID, NL, LO, RE = Decision.IDENTICAL, Decision.NON_LOSSY, Decision.LOSSY, Decision.REFUSED


def allowed(natural: Decision, mode: str) -> Decision:
    """WL#5151 options: identical always; non-lossy needs ALL_NON_LOSSY; lossy needs
    ALL_LOSSY; impossible never."""
    elements = {e.strip() for e in mode.split(",") if e.strip()}
    if natural == ID:
        return ID
    if natural == NL and "ALL_NON_LOSSY" in elements:
        return NL
    if natural == LO and "ALL_LOSSY" in elements:
        return LO
    return RE


def check(pairs):
    n = 0
    for src, tgt, natural in pairs:
        for mode in MODES:
            got = classify(src, tgt, Mode.parse(mode))
            assert got == allowed(natural, mode), (src.sql(), tgt.sql(), mode, natural)
            n += 1
    assert n > 0


# --- integers: WL#5151 range table -------------------------------------------------------

RANGES = {  # (type, unsigned): (min, max), literally the WL#5151 table
    ("tinyint", False): (-2**7, 2**7 - 1), ("tinyint", True): (0, 2**8 - 1),
    ("smallint", False): (-2**15, 2**15 - 1), ("smallint", True): (0, 2**16 - 1),
    ("mediumint", False): (-2**23, 2**23 - 1), ("mediumint", True): (0, 2**24 - 1),
    ("int", False): (-2**31, 2**31 - 1), ("int", True): (0, 2**32 - 1),
    ("bigint", False): (-2**63, 2**63 - 1), ("bigint", True): (0, 2**64 - 1),
}


def test_integer_matrix():
    pairs = []
    for (sn, su), (tn, tu) in itertools.product(RANGES, RANGES):
        (smin, smax), (tmin, tmax) = RANGES[(sn, su)], RANGES[(tn, tu)]
        if (sn, su) == (tn, tu):
            natural = ID
        elif tmin <= smin and smax <= tmax:
            natural = NL
        else:
            natural = LO
        pairs.append((SqlType(sn, unsigned=su), SqlType(tn, unsigned=tu), natural))
    assert len(pairs) == 100
    check(pairs)


def test_wl5151_integer_examples():
    m = Mode.parse("ALL_NON_LOSSY")
    assert classify(SqlType("tinyint", unsigned=True), SqlType("smallint", unsigned=False),
                    m) == NL
    assert classify(SqlType("tinyint", unsigned=True), SqlType("tinyint", unsigned=False),
                    m) == RE


# --- decimal group -----------------------------------------------------------------------

DECIMALS = [(5, 2), (10, 2), (10, 5), (10, 6), (12, 2), (8, 0), (20, 10), (3, 3), (65, 30)]


def decimal_natural(s, t):
    """FLOAT->DOUBLE non-lossy, DOUBLE->FLOAT lossy, float<->decimal lossy, DECIMAL:
    non-lossy iff integer digits and scale both do not shrink."""
    if s == t:
        return ID
    if s == ("float",) and t == ("double",):
        return NL
    if len(s) == 3 and len(t) == 3:
        (_, m, d), (_, m2, d2) = s, t
        return NL if m2 - d2 >= m - d and d2 >= d else LO
    return LO


def _dtype(spec):
    if len(spec) == 1:
        return SqlType(spec[0], unsigned=False)
    return SqlType("decimal", unsigned=False, precision=spec[1], scale=spec[2])


def test_decimal_matrix():
    specs = [("float",), ("double",)] + [("decimal", m, d) for m, d in DECIMALS]
    pairs = [(_dtype(s), _dtype(t), decimal_natural(s, t))
             for s, t in itertools.product(specs, specs)]
    assert len(pairs) == 121
    check(pairs)


def test_decimal_signedness():
    m = Mode.parse("ALL_LOSSY,ALL_NON_LOSSY")
    d = {u: SqlType("decimal", unsigned=u, precision=10, scale=2) for u in (True, False)}
    assert classify(d[True], d[False], m) == NL
    assert classify(d[False], d[True], m) == LO
    wide_u = SqlType("decimal", unsigned=True, precision=12, scale=2)
    assert classify(d[False], wide_u, m) == LO
    unknown = SqlType("decimal", unsigned=None, precision=10, scale=2)
    assert classify(unknown, d[True], Mode()) == ID
    assert classify(SqlType("float", unsigned=False), SqlType("double", unsigned=True),
                    m) == LO


# --- strings -----------------------------------------------------------------------------

TEXT_N = {"tinytext": 255, "text": 65535, "mediumtext": 2**24 - 1, "longtext": 2**32 - 1}
MB = {"utf8mb4": 4, "latin1": 1}


def string_types(cs):
    out = [SqlType(n, length=k, charset=cs) for n in ("char", "varchar")
           for k in (1, 10, 20, 64, 255)]
    out += [SqlType(n, length=k, charset=cs) for n, k in TEXT_N.items()]
    return out


def string_natural(s, t):
    """Same charset: characters for CHAR/VARCHAR targets, bytes for TEXT targets; a
    different name at equal-or-more capacity is non-lossy, except into CHAR from
    VARCHAR/TEXT (trailing spaces stripped)."""
    if (s.name, s.length) == (t.name, t.length):
        return ID
    if t.name == "char" and s.name != "char":
        return LO
    mb = MB[s.charset]
    src_chars = s.length  # CHAR/VARCHAR: N characters; TEXT: N bytes of >= 1 byte chars
    src_bytes = s.length * mb if s.name in ("char", "varchar") else s.length
    if t.name in ("char", "varchar"):
        return NL if src_chars <= t.length else LO
    return NL if src_bytes <= t.length else LO


@pytest.mark.parametrize("cs", ["utf8mb4", "latin1"])
def test_string_matrix_same_charset(cs):
    types = string_types(cs)
    pairs = [(s, t, string_natural(s, t)) for s, t in itertools.product(types, types)]
    assert len(pairs) == 196
    check(pairs)


def test_collation_difference_is_identical():
    a = SqlType("varchar", length=10, charset="utf8mb4", collation="utf8mb4_bin")
    b = SqlType("varchar", length=10, charset="utf8mb4", collation="utf8mb4_general_ci")
    assert classify(a, b, Mode()) == ID


REPERTOIRE = {  # (source, target): source repertoire inside target's
    ("latin1", "utf8mb4"): True, ("utf8mb4", "latin1"): False,
    ("latin1", "utf8mb3"): True, ("utf8mb3", "latin1"): False,
    ("utf8mb3", "utf8mb4"): True, ("utf8mb4", "utf8mb3"): False,
    ("ascii", "latin1"): True, ("latin1", "ascii"): False,
    ("ascii", "utf8mb4"): True, ("ascii", "utf8mb3"): True,
    ("latin2", "latin1"): False, ("latin1", "latin2"): False,
    ("cp1251", "utf8mb4"): True, ("gbk", "utf8mb3"): True, ("utf16", "utf8mb3"): False,
}


@pytest.mark.parametrize("pair", sorted(REPERTOIRE))
def test_charset_repertoire(pair):
    src_cs, tgt_cs = pair
    m = Mode.parse("ALL_LOSSY,ALL_NON_LOSSY")
    # VARCHAR(10) -> VARCHAR(10): capacity in characters is equal, only charsets differ
    got = classify(SqlType("varchar", length=10, charset=src_cs),
                   SqlType("varchar", length=10, charset=tgt_cs), m)
    assert got == (NL if REPERTOIRE[pair] else LO)


def test_text_target_counts_bytes_in_target_encoding():
    m = Mode.parse("ALL_LOSSY,ALL_NON_LOSSY")
    tiny8 = SqlType("tinytext", length=255, charset="utf8mb4")
    # latin1 CHAR(255) can need up to 3 bytes per character in utf8 (e.g. the euro sign)
    assert classify(SqlType("char", length=255, charset="latin1"), tiny8, m) == LO
    assert classify(SqlType("char", length=63, charset="latin1"), tiny8, m) == NL
    # utf8mb3 -> utf8mb4 keeps bytes: VARCHAR(85) = 255 bytes fits TINYTEXT
    assert classify(SqlType("varchar", length=85, charset="utf8mb3"), tiny8, m) == NL
    assert classify(SqlType("varchar", length=86, charset="utf8mb3"), tiny8, m) == LO


def test_unknown_source_charset_is_the_targets():
    src = SqlType("varchar", length=None, max_bytes=40)
    tgt = SqlType("varchar", length=10, charset="utf8mb4")
    assert classify(src, tgt, Mode()) == ID
    assert classify(src, SqlType("varchar", length=40, charset="latin1"), Mode()) == ID
    assert classify(src, SqlType("varbinary", length=40, charset="binary"), Mode()) == ID
    assert classify(src, SqlType("varbinary", length=20, charset="binary"),
                    Mode.parse("ALL_LOSSY")) == LO


# --- binary ------------------------------------------------------------------------------

BLOB_N = {"tinyblob": 255, "blob": 65535, "mediumblob": 2**24 - 1, "longblob": 2**32 - 1}


def binary_natural(s, t):
    if (s.name, s.length) == (t.name, t.length):
        return ID
    if t.name == "binary" and s.name != "binary":
        return LO  # BINARY pads with 0x00: the value changes
    return NL if s.length <= t.length else LO


def test_binary_matrix():
    types = [SqlType(n, length=k, charset="binary") for n in ("binary", "varbinary")
             for k in (1, 10, 20, 255)]
    types += [SqlType(n, length=k, charset="binary") for n, k in BLOB_N.items()]
    pairs = [(s, t, binary_natural(s, t)) for s, t in itertools.product(types, types)]
    assert len(pairs) == 144
    check(pairs)


# --- bit ---------------------------------------------------------------------------------

def test_bit_matrix():
    pairs = []
    for n, m in itertools.product(range(1, 65), range(1, 65)):
        natural = ID if n == m else NL if m > n else LO
        pairs.append((SqlType("bit", length=n), SqlType("bit", length=m), natural))
    check(pairs)


# --- enum / set --------------------------------------------------------------------------

def _es(name, members=None, pack=None):
    pack = pack if pack is not None else (1 if members is None else
                                          (1 if name == "enum" else (len(members) + 7) // 8))
    return SqlType(name, members=tuple(members) if members is not None else None,
                   pack_length=pack, charset="utf8mb4")


@pytest.mark.parametrize("name", ["enum", "set"])
def test_enumset_by_name(name):
    lists = [("a", "b"), ("a", "b", "c"), ("b", "a"), ("a",), ("x", "y")]
    pairs = []
    for s, t in itertools.product(lists, lists):
        natural = ID if s == t else NL if set(s) <= set(t) else LO
        pairs.append((_es(name, s), _es(name, t), natural))
    check(pairs)


def test_enumset_unknown_members_by_storage():
    m = Mode.parse("ALL_LOSSY,ALL_NON_LOSSY")
    assert classify(_es("enum", pack=1), _es("enum", ("a", "b")), m) == ID
    assert classify(_es("enum", pack=2), _es("enum", ("a", "b")), m) == LO
    big = tuple(f"m{i}" for i in range(300))
    assert classify(_es("enum", pack=1), SqlType("enum", members=big, pack_length=2), m) == NL
    assert classify(_es("set", pack=1), _es("set", tuple("abcdefghi"), pack=2), m) == NL
    assert classify(_es("set", pack=2), _es("set", tuple("abc"), pack=1), m) == LO


def test_enum_set_cross_refused():
    for mode in MODES:
        assert classify(_es("enum", ("a",)), _es("set", ("a",)), Mode.parse(mode)) == RE
        assert classify(_es("set", ("a",)), _es("enum", ("a",)), Mode.parse(mode)) == RE


# --- across groups, temporal, json, geometry ---------------------------------------------

REPRESENTATIVES = [
    SqlType("int", unsigned=False), SqlType("bigint", unsigned=True),
    SqlType("decimal", unsigned=False, precision=10, scale=2), SqlType("double"),
    SqlType("varchar", length=10, charset="utf8mb4"), SqlType("text", length=65535,
                                                              charset="latin1"),
    SqlType("varbinary", length=10, charset="binary"), SqlType("blob", length=65535,
                                                               charset="binary"),
    SqlType("bit", length=8), SqlType("enum", members=("a",), pack_length=1),
    SqlType("set", members=("a",), pack_length=1),
    SqlType("date"), SqlType("time", fsp=0), SqlType("time", fsp=3),
    SqlType("datetime", fsp=0), SqlType("datetime", fsp=6), SqlType("timestamp", fsp=0),
    SqlType("timestamp", fsp=6), SqlType("year"), SqlType("json"), SqlType("geometry"),
]
ONLY_IDENTICAL = {"date", "time", "datetime", "timestamp", "year", "json", "geometry"}
GROUP_OF = {"int": 1, "bigint": 1, "decimal": 2, "double": 2, "varchar": 3, "text": 3,
            "varbinary": 4, "blob": 4, "bit": 5, "enum": 6, "set": 7}


def test_cross_group_and_temporal_refused():
    pairs = []
    for s, t in itertools.product(REPRESENTATIVES, REPRESENTATIVES):
        if "json" in (s.name, t.name) and STRING in (s.group, t.group):
            continue  # JSON <-> strings: a migration's conversion (test_crossflavor.py)
        if s == t:
            pairs.append((s, t, ID))
        elif s.name in ONLY_IDENTICAL or t.name in ONLY_IDENTICAL:
            pairs.append((s, t, RE))
        elif GROUP_OF[s.name] != GROUP_OF[t.name]:
            pairs.append((s, t, RE))
    assert len(pairs) > 300
    check(pairs)


# --- signedness resolution ---------------------------------------------------------------

@pytest.mark.parametrize("mode,unsigned", [("", False), ("ALL_SIGNED", False),
                                           ("ALL_UNSIGNED", True),
                                           ("ALL_SIGNED,ALL_UNSIGNED", False)])
def test_resolve_source_without_table_map_flag(mode, unsigned):
    assert resolve_source(SqlType("int"), Mode.parse(mode)).unsigned is unsigned
    # a flag from the table map always wins
    assert resolve_source(SqlType("int", unsigned=True), Mode.parse(mode)).unsigned is True
    assert resolve_source(SqlType("int", unsigned=False), Mode.parse(mode)).unsigned is False


def test_unknown_signedness_classified_after_resolution():
    tu = SqlType("int", unsigned=True)
    assert classify(SqlType("int"), tu, Mode.parse("ALL_UNSIGNED")) == ID
    assert classify(SqlType("int"), tu, Mode.parse("")) == RE
    assert natural_class(SqlType("int"), tu, Mode()) == LO


# --- mode syntax -------------------------------------------------------------------------

def test_mode_parse_and_str():
    m = Mode.parse(" all_non_lossy ,ALL_Lossy")
    assert (m.all_lossy, m.all_non_lossy, m.all_signed, m.all_unsigned) == (True, True,
                                                                           False, False)
    assert str(m) == "ALL_LOSSY,ALL_NON_LOSSY"
    assert str(Mode.parse("")) == ""
    assert Mode.parse("") == Mode()
    assert str(Mode.parse("ALL_UNSIGNED,ALL_SIGNED")) == "ALL_SIGNED,ALL_UNSIGNED"
    for text in ("ALL_LOSSY,ALL_NON_LOSSY", "ALL_SIGNED", "ALL_LOSSY,ALL_UNSIGNED"):
        assert str(Mode.parse(text)) == text


def test_mode_parse_rejects_unknown_element():
    with pytest.raises(ValueError) as e:
        Mode.parse("ALL_LOSSY,ALL_NONLOSSY")
    assert "ALL_NONLOSSY" in str(e.value)
    for allowed_name in ("ALL_LOSSY", "ALL_NON_LOSSY", "ALL_SIGNED", "ALL_UNSIGNED"):
        assert allowed_name in str(e.value)
