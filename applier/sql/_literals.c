/* Compiled SQL literals: the value loop of applier.sql.literals.mogrify, in C.
 *
 * literals(args, other[, raw]) -> tuple of str, one literal per argument, written exactly
 * as pymysql writes them for a connection with backslash escapes (the caller checks that
 * mode and pymysql's default encoders first):
 *   str (exact type)      '...' with pymysql's escape table (\0 \\ \n \r \Z \" \')
 *   None                  NULL
 *   int (exact type)      str(v)
 *   bytes, bytearray      X'hex'; with raw true _binary'...': the bytes themselves, those
 *                         pymysql's escape table names escaped as it escapes text, a byte
 *                         from 0x80 up as the lone surrogate U+DC80 + (byte - 0x80), which
 *                         the statement's encoding (UTF-8, "surrogateescape") writes back
 *                         as that byte: a value costs its own size in the statement, not
 *                         twice (the caller uses it only for a UTF-8 connection, where no
 *                         multi-byte character can hide a quote or a backslash)
 *   float (finite)        repr(v), with "e0" appended when it has no exponent
 *   Decimal (finite)      format(v, "f") (str(v) when that has no exponent: the same text)
 *   datetime.datetime     'YYYY-MM-DD hh:mm:ss' or 'YYYY-MM-DD hh:mm:ss.ffffff' (microseconds
 *                         when not 0; tzinfo ignored), pymysql's escape_datetime's text
 *   datetime.date         'YYYY-MM-DD', pymysql's escape_date's text (exact types only: the
 *                         caller checks both encoders are pymysql's own)
 *   anything else, and non-finite numbers: other(v) (the Python path, which raises
 *   pymysql's own errors). tests/unit/sql/test_literals.py compares with pymysql's mogrify.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static PyObject *DecimalType, *NullText, *FormatF, *IsFinite, *E0;

static const char *escaped(Py_UCS4 ch) {
    switch (ch) {
    case 0: return "\\0";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case 032: return "\\Z";
    case '"': return "\\\"";
    case '\'': return "\\'";
    }
    return NULL;
}

static PyObject *quote(PyObject *s) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(s), extra = 0;
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    for (Py_ssize_t i = 0; i < n; i++)
        if (escaped(PyUnicode_READ(kind, data, i))) extra++;
    PyObject *out = PyUnicode_New(n + extra + 2, PyUnicode_MAX_CHAR_VALUE(s));
    if (!out) return NULL;
    int okind = PyUnicode_KIND(out);
    void *odata = PyUnicode_DATA(out);
    Py_ssize_t o = 0;
    PyUnicode_WRITE(okind, odata, o++, '\'');
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        const char *e = extra ? escaped(ch) : NULL;
        if (e) {
            PyUnicode_WRITE(okind, odata, o++, e[0]);
            PyUnicode_WRITE(okind, odata, o++, e[1]);
        } else {
            PyUnicode_WRITE(okind, odata, o++, ch);
        }
    }
    PyUnicode_WRITE(okind, odata, o++, '\'');
    return out;
}

static PyObject *hex_literal(const char *p, Py_ssize_t n) {
    static const char digits[] = "0123456789abcdef";
    if (n > (PY_SSIZE_T_MAX - 3) / 2) return PyErr_NoMemory();
    PyObject *out = PyUnicode_New(n * 2 + 3, 127);
    if (!out) return NULL;
    Py_UCS1 *o = PyUnicode_1BYTE_DATA(out);
    *o++ = 'X';
    *o++ = '\'';
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)p[i];
        *o++ = digits[b >> 4];
        *o++ = digits[b & 15];
    }
    *o = '\'';
    return out;
}

static PyObject *datetime_literal(PyObject *v) {
    char buf[48];
    int n;
    int us = PyDateTime_DATE_GET_MICROSECOND(v);
    if (us)
        n = snprintf(buf, sizeof buf, "'%04d-%02d-%02d %02d:%02d:%02d.%06d'",
                     PyDateTime_GET_YEAR(v), PyDateTime_GET_MONTH(v), PyDateTime_GET_DAY(v),
                     PyDateTime_DATE_GET_HOUR(v), PyDateTime_DATE_GET_MINUTE(v),
                     PyDateTime_DATE_GET_SECOND(v), us);
    else
        n = snprintf(buf, sizeof buf, "'%04d-%02d-%02d %02d:%02d:%02d'",
                     PyDateTime_GET_YEAR(v), PyDateTime_GET_MONTH(v), PyDateTime_GET_DAY(v),
                     PyDateTime_DATE_GET_HOUR(v), PyDateTime_DATE_GET_MINUTE(v),
                     PyDateTime_DATE_GET_SECOND(v));
    if (n < 0 || n >= (int)sizeof buf) {
        PyErr_SetString(PyExc_ValueError, "datetime literal too long");
        return NULL;
    }
    return PyUnicode_FromStringAndSize(buf, n);
}

static PyObject *date_literal(PyObject *v) {
    char buf[24];
    int n = snprintf(buf, sizeof buf, "'%04d-%02d-%02d'", PyDateTime_GET_YEAR(v),
                     PyDateTime_GET_MONTH(v), PyDateTime_GET_DAY(v));
    if (n < 0 || n >= (int)sizeof buf) {
        PyErr_SetString(PyExc_ValueError, "date literal too long");
        return NULL;
    }
    return PyUnicode_FromStringAndSize(buf, n);
}

static PyObject *decimal_literal(PyObject *v) {
    /* str() is Decimal's C conversion; it writes an exponent (E, or e) exactly when format "f"
       and str differ, and then format "f" is taken */
    PyObject *text = PyObject_Str(v);
    if (!text) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);  /* 'e' under a context with capitals=0 */
    if (PyUnicode_FindChar(text, 'E', 0, n, 1) < 0 && PyUnicode_FindChar(text, 'e', 0, n, 1) < 0)
        return text;
    Py_DECREF(text);
    return PyObject_Format(v, FormatF);
}

static PyObject *raw_literal(const char *p, Py_ssize_t n) {
    static const char prefix[] = "_binary'";
    Py_ssize_t extra = 0;
    Py_UCS4 maxchar = 127;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)p[i];
        if (b >= 0x80) maxchar = 0xDCFF;
        else if (escaped(b)) extra++;
    }
    if (n > PY_SSIZE_T_MAX - 9 - extra) return PyErr_NoMemory();
    PyObject *out = PyUnicode_New(n + extra + 9, maxchar);
    if (!out) return NULL;
    int okind = PyUnicode_KIND(out);
    void *odata = PyUnicode_DATA(out);
    Py_ssize_t o = 0;
    for (const char *c = prefix; *c; c++) PyUnicode_WRITE(okind, odata, o++, *c);
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)p[i];
        const char *e = b < 0x80 ? escaped(b) : NULL;
        if (e) {
            PyUnicode_WRITE(okind, odata, o++, e[0]);
            PyUnicode_WRITE(okind, odata, o++, e[1]);
        } else {
            PyUnicode_WRITE(okind, odata, o++, b < 0x80 ? (Py_UCS4)b : 0xDC00 + (Py_UCS4)b);
        }
    }
    PyUnicode_WRITE(okind, odata, o++, '\'');
    return out;
}

static PyObject *literal(PyObject *v, PyObject *other, int raw) {
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyUnicode_Type) return quote(v);
    if (v == Py_None) {
        Py_INCREF(NullText);
        return NullText;
    }
    if (t == &PyLong_Type) return PyObject_Str(v);
    if (t == &PyBytes_Type)
        return (raw ? raw_literal : hex_literal)(PyBytes_AS_STRING(v), PyBytes_GET_SIZE(v));
    if (t == &PyByteArray_Type) /* no Python code runs while it is read */
        return (raw ? raw_literal : hex_literal)(PyByteArray_AS_STRING(v),
                                                 PyByteArray_GET_SIZE(v));
    if (t == &PyFloat_Type && isfinite(PyFloat_AS_DOUBLE(v))) {
        PyObject *r = PyObject_Repr(v);
        if (!r) return NULL;
        if (PyUnicode_FindChar(r, 'e', 0, PyUnicode_GET_LENGTH(r), 1) >= 0) return r;
        PyObject *s = PyUnicode_Concat(r, E0);
        Py_DECREF(r);
        return s;
    }
    if (t == PyDateTimeAPI->DateTimeType) return datetime_literal(v);
    if (t == PyDateTimeAPI->DateType) return date_literal(v);
    if ((PyObject *)t == DecimalType) {
        PyObject *finite = PyObject_CallMethodNoArgs(v, IsFinite);
        if (!finite) return NULL;
        int yes = PyObject_IsTrue(finite);
        Py_DECREF(finite);
        if (yes == 1) return decimal_literal(v);
        if (yes < 0) return NULL;
    }
    return PyObject_CallOneArg(other, v);
}

static PyObject *literals(PyObject *self, PyObject *args) {
    PyObject *values, *other;
    int raw = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO|p", &values, &other, &raw)) return NULL;
    /* a tuple of its own: `other` (Python) may change a list of arguments as it runs */
    PyObject *seq = PySequence_Tuple(values);
    if (!seq) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    PyObject *out = PyTuple_New(n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *lit = literal(PyTuple_GET_ITEM(seq, i), other, raw);
        if (!lit) {
            Py_CLEAR(out);
            break;
        }
        PyTuple_SET_ITEM(out, i, lit);
    }
    Py_DECREF(seq);
    return out;
}

/* -- bind: the statement's text with its literals, in one buffer --------------------------
 *
 * bind(sql, args, other[, raw]) -> str, or None
 *   sql % literals(args, other, raw), written into one string without a str per literal
 *   where it can (text, NULL, integers, finite floats; the others through `literal`). None
 *   when sql holds a % other than %s and %% or its %s are not as many as the arguments:
 *   the caller then formats with %, which gives Python's own result or error. */

/* a str literal, quoted and escaped like `quote`, written to w */
static int write_quoted(_PyUnicodeWriter *w, PyObject *s) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(s), from = 0;
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    if (_PyUnicodeWriter_WriteChar(w, '\'') < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *e = escaped(PyUnicode_READ(kind, data, i));
        if (!e) continue;
        if (i > from && _PyUnicodeWriter_WriteSubstring(w, s, from, i) < 0) return -1;
        if (_PyUnicodeWriter_WriteASCIIString(w, e, 2) < 0) return -1;
        from = i + 1;
    }
    if (from == 0 && n) {
        if (_PyUnicodeWriter_WriteStr(w, s) < 0) return -1;
    } else if (n > from && _PyUnicodeWriter_WriteSubstring(w, s, from, n) < 0) {
        return -1;
    }
    return _PyUnicodeWriter_WriteChar(w, '\'');
}

/* one argument's literal written to w: `literal`'s text */
static int write_literal(_PyUnicodeWriter *w, PyObject *v, PyObject *other, int raw) {
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyUnicode_Type) return write_quoted(w, v);
    if (v == Py_None) return _PyUnicodeWriter_WriteASCIIString(w, "NULL", 4);
    if (t == &PyLong_Type) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (!overflow) {
            if (x == -1 && PyErr_Occurred()) return -1;
            char buf[24];
            int n = snprintf(buf, sizeof buf, "%lld", x);
            return _PyUnicodeWriter_WriteASCIIString(w, buf, n);
        }
    } else if (t == &PyFloat_Type && isfinite(PyFloat_AS_DOUBLE(v))) {
        /* repr(v): float_repr's own call */
        char *r = PyOS_double_to_string(PyFloat_AS_DOUBLE(v), 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
        if (!r) return -1;
        int bad = _PyUnicodeWriter_WriteASCIIString(w, r, (Py_ssize_t)strlen(r)) < 0
                  || (!strchr(r, 'e') && _PyUnicodeWriter_WriteASCIIString(w, "e0", 2) < 0);
        PyMem_Free(r);
        return bad ? -1 : 0;
    }
    PyObject *lit = literal(v, other, raw);
    if (!lit) return -1;
    if (!PyUnicode_Check(lit)) { /* `other` returned something else: the % operator's job */
        Py_DECREF(lit);
        return 1;
    }
    int bad = _PyUnicodeWriter_WriteStr(w, lit);
    Py_DECREF(lit);
    return bad;
}

/* whether sql has only %s and %% directives, as many %s as `count` */
static int plain_template(PyObject *sql, Py_ssize_t count) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(sql), found = 0;
    int kind = PyUnicode_KIND(sql);
    const void *data = PyUnicode_DATA(sql);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyUnicode_READ(kind, data, i) != '%') continue;
        if (i + 1 >= n) return 0;
        Py_UCS4 next = PyUnicode_READ(kind, data, i + 1);
        if (next == 's') found++;
        else if (next != '%') return 0;
        i++;
    }
    return found == count;
}

static PyObject *bind(PyObject *self, PyObject *args) {
    PyObject *sql, *values, *other;
    int raw = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "UOO|p", &sql, &values, &other, &raw)) return NULL;
    PyObject *seq = PySequence_Tuple(values); /* `other` may change a list as it runs */
    if (!seq) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(seq);
    if (!PyUnicode_CheckExact(sql) || !plain_template(sql, count)) {
        Py_DECREF(seq);
        Py_RETURN_NONE;
    }
    _PyUnicodeWriter w;
    _PyUnicodeWriter_Init(&w);
    w.overallocate = 1;
    Py_ssize_t n = PyUnicode_GET_LENGTH(sql), from = 0, arg = 0;
    int kind = PyUnicode_KIND(sql), status = 0;
    const void *data = PyUnicode_DATA(sql);
    for (Py_ssize_t i = 0; i < n && status == 0; i++) {
        if (PyUnicode_READ(kind, data, i) != '%') continue;
        if (i > from && _PyUnicodeWriter_WriteSubstring(&w, sql, from, i) < 0) {
            status = -1;
            break;
        }
        if (PyUnicode_READ(kind, data, i + 1) == 's')
            status = write_literal(&w, PyTuple_GET_ITEM(seq, arg++), other, raw);
        else
            status = _PyUnicodeWriter_WriteChar(&w, '%');
        from = i + 2;
        i++;
    }
    if (status == 0 && n > from && _PyUnicodeWriter_WriteSubstring(&w, sql, from, n) < 0)
        status = -1;
    Py_DECREF(seq);
    if (status != 0) {
        _PyUnicodeWriter_Dealloc(&w);
        if (status < 0) return NULL;
        Py_RETURN_NONE;
    }
    return _PyUnicodeWriter_Finish(&w);
}

static PyMethodDef methods[] = {
    {"literals", literals, METH_VARARGS, "One SQL literal per argument (see the file)."},
    {"bind", bind, METH_VARARGS, "sql % literals(args), in one buffer, or None (see bind)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_literals",
                                    "Compiled SQL literals (see literals.py).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__literals(void) {
    PyDateTime_IMPORT;
    if (!PyDateTimeAPI) return NULL;
    PyObject *dec = PyImport_ImportModule("decimal");
    if (!dec) return NULL;
    DecimalType = PyObject_GetAttrString(dec, "Decimal");
    Py_DECREF(dec);
    NullText = PyUnicode_InternFromString("NULL");
    FormatF = PyUnicode_InternFromString("f");
    IsFinite = PyUnicode_InternFromString("is_finite");
    E0 = PyUnicode_InternFromString("e0");
    if (!DecimalType || !NullText || !FormatF || !IsFinite || !E0) return NULL;
    return PyModule_Create(&module);
}
