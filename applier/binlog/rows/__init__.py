"""Row images: the framing of a rows event body and the exact decoding of its before and after
images (in Python and the compiled decoder), text in MySQL's character sets."""
