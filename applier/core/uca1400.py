"""MariaDB 10.10+'s UCA 14.0 collation ids (2048-3271), made from their rule rather than
listed: per character set a block of 256 ids, per locale 8 variants in a fixed order
(read from MariaDB 10.11's information_schema.COLLATION_CHARACTER_SET_APPLICABILITY).
Data only; read through charsets.py (via collations.COLLATIONS)."""

_UCA1400_BLOCKS = {2048: "utf8mb3", 2304: "utf8mb4", 2560: "ucs2", 2816: "utf16", 3072: "utf32"}
_UCA1400_LOCALES = (
    "", "icelandic", "latvian", "romanian", "slovenian", "polish", "estonian", "spanish",
    "swedish", "turkish", "czech", "danish", "lithuanian", "slovak", "spanish2", "roman",
    "persian", "esperanto", "hungarian", "sinhala", "german2", None, None, "vietnamese",
    "croatian")
_UCA1400_VARIANTS = ("ai_ci", "ai_cs", "as_ci", "as_cs",
                     "nopad_ai_ci", "nopad_ai_cs", "nopad_as_ci", "nopad_as_cs")


def uca1400_collations() -> dict[int, tuple[str, str]]:
    """id -> (character set, collation name), as collations.COLLATIONS holds them."""
    out = {}
    for base, charset in _UCA1400_BLOCKS.items():
        for i, locale in enumerate(_UCA1400_LOCALES):
            if locale is None:  # ids MariaDB 10.11 leaves unused
                continue
            for j, variant in enumerate(_UCA1400_VARIANTS):
                name = "_".join(p for p in (charset, "uca1400", locale, variant) if p)
                out[base + 8 * i + j] = (charset, name)
    return out
