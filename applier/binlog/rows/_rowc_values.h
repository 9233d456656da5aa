/* One value of each common column type from its bytes (included by _rowc.c, after its
 * Spec and Ctx, fallback() and the byte readers be() and le()): value() makes the Python
 * object rowimage.py's reader of the column makes, or hands the column to that reader;
 * skip() finds where it ends without making it (counting rows).
 */
/* v's last `width` decimal digits, zero-padded, at buf; the digits written (snprintf's
   "%0*llu" for a v below 10^width, without its format parsing: a row has many) */
static int digits(char *buf, unsigned long long v, int width) {
    for (int k = width - 1; k >= 0; k--) {
        buf[k] = (char)('0' + v % 10);
        v /= 10;
    }
    return width;
}

/* "%0*llu" of v: at least `width` digits, more when v needs them (at most 20) */
static int udigits(char *buf, unsigned long long v, int width) {
    int n = 1;
    for (unsigned long long t = v; t >= 10; t /= 10) n++;
    return digits(buf, v, n > width ? n : width);
}

static PyObject *text(const char *buf, int n) {
    return PyUnicode_DecodeASCII(buf, n, "strict");
}

static PyObject *read_int(const unsigned char *p, int n, int sign) {
    unsigned long long v = le(p, n);
    if (!sign) return PyLong_FromUnsignedLongLong(v);
    if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~0ULL << (8 * n);
    return PyLong_FromLongLong((long long)v);
}

/* DECIMAL(precision, scale): as rowimage's decode_decimal, through Decimal(text). */
static PyObject *read_decimal(const unsigned char *p, int size, int precision, int scale) {
    unsigned char raw[64];
    char out[160];
    int intg = precision - scale, o = 0, q = 0;
    memcpy(raw, p, size);
    int negative = !(raw[0] & 0x80);
    raw[0] ^= 0x80;
    if (negative)
        for (int i = 0; i < size; i++) raw[i] ^= 0xFF;
    char ints[96];
    int ni = 0;
    int head = intg % 9;
    if (head) {
        ni += udigits(ints + ni, be(raw, DIG2BYTES[head]), head);
        q += DIG2BYTES[head];
    }
    for (int g = 0; g < intg / 9; g++, q += 4)
        ni += udigits(ints + ni, be(raw + q, 4), 9);
    if (negative) out[o++] = '-';
    int z = 0;
    while (z < ni && ints[z] == '0') z++;
    if (z == ni) out[o++] = '0';
    else {
        memcpy(out + o, ints + z, ni - z);
        o += ni - z;
    }
    if (scale) {
        out[o++] = '.';
        for (int g = 0; g < scale / 9; g++, q += 4)
            o += udigits(out + o, be(raw + q, 4), 9);
        int tail = scale % 9;
        if (tail) {
            o += udigits(out + o, be(raw + q, DIG2BYTES[tail]), tail);
            q += DIG2BYTES[tail];
        }
    }
    PyObject *s = text(out, o);
    if (!s) return NULL;
    PyObject *d = PyObject_CallOneArg(DecimalType, s);
    Py_DECREF(s);
    return d;
}

static int decimal_size(int precision, int scale) {
    int intg = precision - scale;
    return (intg / 9) * 4 + DIG2BYTES[intg % 9] + (scale / 9) * 4 + DIG2BYTES[scale % 9];
}

static int frac_text(char *buf, int o, const unsigned char *p, int fsp) {
    int n = (fsp + 1) / 2;
    if (!fsp) return o;
    unsigned long long micro = be(p, n);
    for (int k = n; k < 3; k++) micro *= 100;
    char text6[24];
    udigits(text6, micro, 6);
    buf[o++] = '.';
    memcpy(buf + o, text6, fsp);
    return o + fsp;
}

/* One value at pos; its end in *end. NULL with an exception set on failure. */
static PyObject *value(Ctx *c, Py_ssize_t i, Py_ssize_t pos, Py_ssize_t *end) {
    Spec *s = &c->specs[i];
    const unsigned char *p = c->data + pos;
    Py_ssize_t left = c->len - pos;
    char buf[64];
    int n;
    switch (s->code) {
    case S_INT:
        if (left < s->a) break;
        *end = pos + s->a;
        return read_int(p, s->a, s->b);
    case S_FLOAT:
        if (left < s->a) break;
        *end = pos + s->a;
        if (s->a == 4) {
            float f;
            memcpy(&f, p, 4);
            return PyFloat_FromDouble((double)f);
        } else {
            double d;
            memcpy(&d, p, 8);
            return PyFloat_FromDouble(d);
        }
    case S_DECIMAL: {
        int size = decimal_size(s->a, s->b);
        if (left < size || size <= 0 || size > 30) break; /* 65 digits: 30 bytes */
        *end = pos + size;
        return read_decimal(p, size, s->a, s->b);
    }
    case S_DATE: {
        if (left < 3) break;
        unsigned long long v = le(p, 3);
        n = udigits(buf, v >> 9, 4);
        buf[n++] = '-';
        n += digits(buf + n, (v >> 5) & 15, 2);
        buf[n++] = '-';
        n += digits(buf + n, v & 31, 2);
        *end = pos + 3;
        return text(buf, n);
    }
    case S_DATETIME2: {
        int fn = (s->a + 1) / 2;
        if (left < 5 + fn) break;
        long long v = (long long)be(p, 5) - 0x8000000000LL;
        if (v < 0) break;
        long long ymd = v >> 17, hms = v & 0x1FFFF, ym = ymd >> 5;
        n = udigits(buf, (unsigned long long)(ym / 13), 4); /* below 10^5: v < 2^39 */
        buf[n++] = '-';
        n += digits(buf + n, (unsigned long long)(ym % 13), 2);
        buf[n++] = '-';
        n += digits(buf + n, (unsigned long long)(ymd & 31), 2);
        buf[n++] = ' ';
        n += digits(buf + n, (unsigned long long)(hms >> 12), 2); /* hms < 2^17: below 32 */
        buf[n++] = ':';
        n += digits(buf + n, (unsigned long long)((hms >> 6) & 63), 2);
        buf[n++] = ':';
        n += digits(buf + n, (unsigned long long)(hms & 63), 2);
        n = frac_text(buf, n, p + 5, s->a);
        *end = pos + 5 + fn;
        return text(buf, n);
    }
    case S_YEAR:
        if (left < 1) break;
        *end = pos + 1;
        if (!p[0]) return text("0000", 4);
        n = digits(buf, 1900 + p[0], 4);
        return text(buf, n);
    case S_ENUMSET:
        if (left < s->a) break;
        *end = pos + s->a;
        return PyLong_FromUnsignedLongLong(le(p, s->a));
    case S_UTF8: case S_LATIN1: case S_ASCII: case S_BYTES: {
        if (left < s->a) break;
        unsigned long long len = le(p, s->a);
        if ((unsigned long long)(left - s->a) < len) break;
        const char *str = (const char *)p + s->a;
        *end = pos + s->a + (Py_ssize_t)len;
        if (s->code == S_BYTES) return PyBytes_FromStringAndSize(str, (Py_ssize_t)len);
        if (s->code == S_UTF8) return PyUnicode_DecodeUTF8(str, (Py_ssize_t)len, "strict");
        if (s->code == S_ASCII) return PyUnicode_DecodeASCII(str, (Py_ssize_t)len, "strict");
        for (unsigned long long k = 0; k < len; k++)
            if ((unsigned char)str[k] >= 0x80 && (unsigned char)str[k] < 0xA0)
                goto python; /* cp1252's characters there: the Python reader maps them */
        return PyUnicode_DecodeLatin1(str, (Py_ssize_t)len, "strict");
    }
    case S_PY:
        goto python;
    }
    fallback();
    return NULL;
python: {
        PyObject *r = PyObject_CallFunction(PyTuple_GET_ITEM(c->readers, i), "On", c->bytes, pos);
        if (!r) return NULL;
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) {
            Py_DECREF(r);
            fallback();
            return NULL;
        }
        PyObject *v = PyTuple_GET_ITEM(r, 0);
        *end = PyLong_AsSsize_t(PyTuple_GET_ITEM(r, 1));
        Py_INCREF(v);
        Py_DECREF(r);
        if (*end == -1 && PyErr_Occurred()) {
            Py_DECREF(v);
            return NULL;
        }
        if (*end < pos || *end > c->len) { /* read past the event, or went back */
            Py_DECREF(v);
            fallback();
            return NULL;
        }
        return v;
    }
}

/* Where the value at pos ends (*end), without making it: 0, or -1 when it does not fit
   (Fallback set). A column of the Python reader is read by it (its value dropped). */
static int skip(Ctx *c, Py_ssize_t i, Py_ssize_t pos, Py_ssize_t *end) {
    Spec *s = &c->specs[i];
    Py_ssize_t left = c->len - pos, n;
    switch (s->code) {
    case S_INT: case S_FLOAT: case S_ENUMSET:
        n = s->a;
        break;
    case S_DECIMAL:
        n = decimal_size(s->a, s->b);
        if (n <= 0 || n > 30) return fallback();
        break;
    case S_DATE:
        n = 3;
        break;
    case S_DATETIME2:
        n = 5 + (s->a + 1) / 2;
        break;
    case S_YEAR:
        n = 1;
        break;
    case S_UTF8: case S_LATIN1: case S_ASCII: case S_BYTES: {
        if (left < s->a) return fallback();
        unsigned long long len = le(c->data + pos, s->a);
        if ((unsigned long long)(left - s->a) < len) return fallback();
        n = s->a + (Py_ssize_t)len;
        break;
    }
    default: {
        PyObject *v = value(c, i, pos, end);
        if (!v) {
            PyErr_Clear();
            return fallback();
        }
        Py_DECREF(v);
        return 0;
    }
    }
    if (left < n) return fallback();
    *end = pos + n;
    return 0;
}
