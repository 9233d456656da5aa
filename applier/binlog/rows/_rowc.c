/* Compiled row-image decoding: the common column types of applier.binlog.rows.rowimage, in C.
 *
 * The Python decoder (rowimage.py) is the reference: this module produces the very same
 * values (same Python types, same text) for the types it handles, and hands every other
 * column to the Python reader of that column (one call per value). It never reports an
 * error of its own: whenever the bytes do not decode cleanly (truncated, invalid text, a
 * Python reader raising) it raises Fallback, and the caller decodes the whole event again
 * in Python, which gives the exact value or the exact error message.
 * tests/unit/binlog/rows/test_rowc.py compares both decoders on every type.
 *
 * It trusts none of its arguments: a spec outside what MySQL writes (an integer of 9
 * bytes, DECIMAL(134), DATETIME2(40), a FLOAT of 5 bytes, an unknown code), a NULL bitmap
 * shorter than its column list, a column index outside the specs, or a Python reader
 * returning a position outside the event raises Fallback too; the Python path then
 * decodes or raises RowImageError. The objects it walks are immutable (bytes, tuples).
 *
 * decode_rows(data, kind, before, after, specs, readers) -> [(before|None, after|None)]
 * count_rows(the same) -> the number of rows, each value's bytes skipped (not made)
 * columns_present(type code, body) -> rowsbody.columns_present, or Fallback (as count_event)
 * count_event(type code, body, specs, readers) -> count_rows of a whole rows event body,
 *   its framing (applier.binlog.rows.rowsbody) read here: Fallback for what it does not
 *   read (a partial update, 251 columns or more, framing that does not add up)
 *   kind     0 insert (one after image per row), 1 update (before, after), 2 delete
 *   before   (columns, null-bitmap bytes) of the first image; after: of the second
 *   specs    per column (code, a, b): see the S_* codes below
 *   readers  per column the Python reader (data, pos) -> (value, pos)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>
#include <string.h>

enum {
    S_PY = 0,      /* the Python reader                                   */
    S_INT = 1,     /* a = bytes (1,2,3,4,8), b = signed                   */
    S_FLOAT = 2,   /* a = 4 (FLOAT) or 8 (DOUBLE)                         */
    S_DECIMAL = 3, /* a = precision, b = scale                            */
    S_DATE = 4,
    S_DATETIME2 = 5, /* a = fsp                                           */
    S_UTF8 = 6,    /* a = length-prefix bytes                             */
    S_LATIN1 = 7,  /* a = length-prefix bytes (MySQL latin1: C1 bytes -> Python reader) */
    S_ASCII = 8,   /* a = length-prefix bytes                             */
    S_BYTES = 9,   /* a = length-prefix bytes                             */
    S_YEAR = 10,
    S_ENUMSET = 11 /* a = bytes                                           */
};

static PyObject *Fallback;   /* the exception that sends the event to the Python path */
static PyObject *DecimalType;

typedef struct {
    int code, a, b;
} Spec;

typedef struct {
    const unsigned char *data;
    Py_ssize_t len;
    PyObject *bytes;    /* data as a Python object, for the Python readers */
    Spec *specs;
    PyObject *readers;
    Py_ssize_t ncols;
    int counting; /* count_rows: images skipped, not made */
} Ctx;

static const int DIG2BYTES[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
#define MAX_PRECISION 65 /* MySQL's DECIMAL_MAX_PRECISION: the buffers below hold it */
#define MAX_FSP 6

/* Whether a spec is one this module decodes within its buffers (see the S_* codes). */
static int spec_ok(const Spec *s) {
    switch (s->code) {
    case S_PY: case S_DATE: case S_YEAR:
        return 1;
    case S_INT:
        return s->a >= 1 && s->a <= 8 && (s->b == 0 || s->b == 1);
    case S_FLOAT:
        return s->a == 4 || s->a == 8;
    case S_DECIMAL:
        return s->a >= 1 && s->a <= MAX_PRECISION && s->b >= 0 && s->b <= s->a;
    case S_DATETIME2:
        return s->a >= 0 && s->a <= MAX_FSP;
    case S_UTF8: case S_LATIN1: case S_ASCII: case S_BYTES:
        return s->a >= 1 && s->a <= 4;
    case S_ENUMSET:
        return s->a >= 1 && s->a <= 8;
    }
    return 0;
}

static int fallback(void) {
    PyErr_SetNone(Fallback);
    return -1;
}

static unsigned long long be(const unsigned char *p, int n) {
    unsigned long long v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | p[i];
    return v;
}

static unsigned long long le(const unsigned char *p, int n) {
    unsigned long long v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

#include "_rowc_values.h"

/* One image at *pos: {column index: value}; counting: Py_None, the image skipped. */
static PyObject *image(Ctx *c, PyObject *cols, Py_ssize_t nbytes, Py_ssize_t *pos) {
    if (nbytes < 0 || nbytes < (PyTuple_GET_SIZE(cols) + 7) / 8 || c->len - *pos < nbytes) {
        fallback();
        return NULL;
    }
    const unsigned char *nulls = c->data + *pos;
    Py_ssize_t at = *pos + nbytes, count = PyTuple_GET_SIZE(cols);
    if (c->counting) {
        for (Py_ssize_t k = 0; k < count; k++) {
            Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(cols, k));
            if (i < 0 || i >= c->ncols) return PyErr_Clear(), fallback(), NULL;
            if (!(nulls[k >> 3] & (1 << (k & 7))) && skip(c, i, at, &at)) return NULL;
        }
        *pos = at;
        Py_RETURN_NONE;
    }
    PyObject *d = _PyDict_NewPresized(count); /* no resize while it fills */
    if (!d) return NULL;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *key = PyTuple_GET_ITEM(cols, k);
        Py_ssize_t i = PyLong_AsSsize_t(key);
        PyObject *v;
        if (i < 0 || i >= c->ncols) {
            Py_DECREF(d);
            fallback();
            return NULL;
        }
        if (nulls[k >> 3] & (1 << (k & 7))) {
            v = Py_None;
            Py_INCREF(v);
        } else {
            v = value(c, i, at, &at);
            if (!v) { /* whatever went wrong, the Python path says it exactly */
                Py_DECREF(d);
                PyErr_Clear();
                fallback();
                return NULL;
            }
        }
        int bad = PyDict_SetItem(d, key, v);
        Py_DECREF(v);
        if (bad) {
            Py_DECREF(d);
            return NULL;
        }
    }
    *pos = at;
    return d;
}

static int unpack_present(PyObject *present, PyObject **cols, Py_ssize_t *nbytes) {
    if (!PyTuple_Check(present)) {
        PyErr_SetString(PyExc_TypeError, "decode_rows: an image's columns are not a tuple");
        return -1;
    }
    if (!PyArg_ParseTuple(present, "O!n", &PyTuple_Type, cols, nbytes)) return -1;
    return 0;
}

/* c->specs from the specs tuple (PyMem_Malloc'd: the caller frees it), c->readers and
   c->ncols: 0, or -1 with an exception set. */
static int load_specs(Ctx *c, PyObject *specs, PyObject *readers) {
    c->ncols = PyTuple_GET_SIZE(specs);
    c->readers = readers;
    c->specs = NULL;
    if (PyTuple_GET_SIZE(readers) != c->ncols) return fallback();
    c->specs = PyMem_Malloc(sizeof(Spec) * (c->ncols ? c->ncols : 1));
    if (!c->specs) return PyErr_NoMemory(), -1;
    for (Py_ssize_t i = 0; i < c->ncols; i++) {
        PyObject *spec = PyTuple_GET_ITEM(specs, i);
        if (!PyTuple_Check(spec)) {
            PyErr_SetString(PyExc_TypeError, "decode_rows: a column spec is not a tuple");
            return -1;
        }
        if (!PyArg_ParseTuple(spec, "iii", &c->specs[i].code,
                              &c->specs[i].a, &c->specs[i].b))
            return -1;
        if (!spec_ok(&c->specs[i])) return fallback();
    }
    return 0;
}

/* The rows of c->data from pos to c->len: a list of (before, after) images, or
   (c->counting) their number; NULL with an exception set. */
static PyObject *walk(Ctx *c, int kind, Py_ssize_t pos, PyObject *bcols, Py_ssize_t bbytes,
                      PyObject *acols, Py_ssize_t abytes) {
    Py_ssize_t counted = 0;
    PyObject *out = c->counting ? NULL : PyList_New(0);
    if (!c->counting && !out) return NULL;
    while (pos < c->len) {
        Py_ssize_t start = pos;
        PyObject *first = image(c, bcols, bbytes, &pos), *second = NULL, *row;
        if (!first) goto fail;
        if (c->counting) { /* Py_None for each image skipped */
            Py_DECREF(first);
            if (kind == 1 && !(second = image(c, acols, abytes, &pos))) goto fail;
            Py_XDECREF(second);
            counted++;
            if (pos == start) {
                fallback();
                goto fail;
            }
            continue;
        }
        if (kind == 1) {
            second = image(c, acols, abytes, &pos);
            if (!second) {
                Py_DECREF(first);
                goto fail;
            }
            row = PyTuple_Pack(2, first, second);
            Py_DECREF(second);
        } else if (kind == 0) {
            row = PyTuple_Pack(2, Py_None, first);
        } else {
            row = PyTuple_Pack(2, first, Py_None);
        }
        Py_DECREF(first);
        if (!row || PyList_Append(out, row)) {
            Py_XDECREF(row);
            goto fail;
        }
        Py_DECREF(row);
        if (pos == start) { /* no column in any image, bytes left: the Python path says it */
            fallback();
            goto fail;
        }
    }
    if (c->counting) return PyLong_FromSsize_t(counted);
    return out;
fail:
    Py_XDECREF(out);
    return NULL;
}

/* decode_rows, or (counting) the number of rows only. */
static PyObject *rows(PyObject *args, int counting) {
    PyObject *bytes, *before, *after, *specs, *readers;
    int kind;
    if (!PyArg_ParseTuple(args, "O!iOOO!O!", &PyBytes_Type, &bytes, &kind, &before, &after,
                          &PyTuple_Type, &specs, &PyTuple_Type, &readers))
        return NULL;
    Ctx c;
    c.counting = counting;
    PyObject *bcols, *acols = NULL;
    Py_ssize_t bbytes, abytes = 0;
    if (unpack_present(before, &bcols, &bbytes)) return NULL;
    if (kind == 1 && unpack_present(after, &acols, &abytes)) return NULL;
    c.data = (const unsigned char *)PyBytes_AS_STRING(bytes);
    c.len = PyBytes_GET_SIZE(bytes);
    c.bytes = bytes;
    PyObject *out = NULL;
    if (!load_specs(&c, specs, readers)) out = walk(&c, kind, 0, bcols, bbytes, acols, abytes);
    PyMem_Free(c.specs);
    return out;
}

/* The columns present in an image (their indexes, as a tuple) from a columns-present
   bitmap of ncols columns, and its NULL bitmap's bytes. */
static PyObject *present_columns(const unsigned char *bitmap, Py_ssize_t ncols,
                                 Py_ssize_t *nbytes) {
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < ncols; i++) n += (bitmap[i >> 3] >> (i & 7)) & 1;
    PyObject *cols = PyTuple_New(n);
    if (!cols) return NULL;
    for (Py_ssize_t i = 0, k = 0; i < ncols; i++) {
        if (!((bitmap[i >> 3] >> (i & 7)) & 1)) continue;
        PyObject *v = PyLong_FromSsize_t(i);
        if (!v) {
            Py_DECREF(cols);
            return NULL;
        }
        PyTuple_SET_ITEM(cols, k++, v);
    }
    *nbytes = (n + 7) / 8;
    return cols;
}

/* The framing of a rows event body (applier.binlog.rows.rowsbody._framing): its kind
   (0 insert, 1 update, 2 delete), where its first columns-present bitmap starts and its
   column count; -1 with Fallback for anything but a WRITE/UPDATE/DELETE rows event
   v1/v2 of fewer than 251 columns whose framing adds up (the bitmaps not checked). */
static int framing(int type, PyObject *body, int *kind, Py_ssize_t *pos, Py_ssize_t *ncols) {
    switch (type) {
    case 0x17: case 0x1E: *kind = 0; break;
    case 0x18: case 0x1F: *kind = 1; break;
    case 0x19: case 0x20: *kind = 2; break;
    default: return fallback();
    }
    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(body);
    Py_ssize_t len = PyBytes_GET_SIZE(body), at = 8;
    if (len < 8) return fallback();
    if (type >= 0x1E) {
        if (len < 10) return fallback();
        Py_ssize_t extra = d[8] | d[9] << 8; /* its own two bytes included */
        if (extra < 2 || len - 8 < extra) return fallback();
        at = 8 + extra;
    }
    if (at >= len || d[at] >= 251) return fallback();
    *ncols = d[at];
    *pos = at + 1;
    return 0;
}

/* count_event(type code, body, specs, readers): the rows of a whole rows event body (the
   framing of applier.binlog.rows.rowsbody read here too), or Fallback for anything but a
   WRITE/UPDATE/DELETE rows event v1/v2 of fewer than 251 columns whose framing adds up
   and whose column count is the specs'. */
static PyObject *count_event(PyObject *self, PyObject *args) {
    PyObject *body, *specs, *readers;
    int type;
    if (!PyArg_ParseTuple(args, "iO!O!O!", &type, &PyBytes_Type, &body, &PyTuple_Type,
                          &specs, &PyTuple_Type, &readers))
        return NULL;
    int kind;
    Py_ssize_t pos, ncols;
    if (framing(type, body, &kind, &pos, &ncols) < 0)
        return NULL;
    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(body);
    Py_ssize_t len = PyBytes_GET_SIZE(body), nb = (ncols + 7) / 8;
    if (ncols != PyTuple_GET_SIZE(specs) || len - pos < nb * (kind == 1 ? 2 : 1))
        return fallback(), NULL;
    Ctx c;
    c.counting = 1;
    c.data = d;
    c.len = len;
    c.bytes = body;
    PyObject *bcols = NULL, *acols = NULL, *out = NULL;
    Py_ssize_t bbytes = 0, abytes = 0;
    bcols = present_columns(d + pos, ncols, &bbytes);
    pos += nb;
    if (bcols && kind == 1) {
        acols = present_columns(d + pos, ncols, &abytes);
        pos += nb;
    }
    if (bcols && (kind != 1 || acols)) {
        if (!load_specs(&c, specs, readers)) out = walk(&c, kind, pos, bcols, bbytes, acols,
                                                        abytes);
        PyMem_Free(c.specs);
    }
    Py_XDECREF(bcols);
    Py_XDECREF(acols);
    return out;
}

static PyObject *decode_rows(PyObject *self, PyObject *args) {
    return rows(args, 0);
}

static PyObject *count_rows(PyObject *self, PyObject *args) {
    return rows(args, 1);
}

/* columns_present(type code, body): the first image's columns-present bitmap of a rows
   event body (rowsbody.columns_present), or Fallback for anything but a WRITE/UPDATE/
   DELETE rows event v1/v2 of fewer than 251 columns whose framing adds up. */
static PyObject *columns_present(PyObject *self, PyObject *args) {
    PyObject *body;
    int type;
    int kind;
    Py_ssize_t pos, ncols;
    if (!PyArg_ParseTuple(args, "iO!", &type, &PyBytes_Type, &body) ||
        framing(type, body, &kind, &pos, &ncols) < 0)
        return NULL;
    Py_ssize_t nb = (ncols + 7) / 8;
    if (PyBytes_GET_SIZE(body) - pos < nb) return fallback(), NULL;
    return PyBytes_FromStringAndSize(PyBytes_AS_STRING(body) + pos, nb);
}

static PyMethodDef methods[] = {
    {"decode_rows", decode_rows, METH_VARARGS,
     "Every row of a rows event as (before, after) images, or Fallback."},
    {"count_rows", count_rows, METH_VARARGS,
     "The number of rows of a rows event (decode_rows's arguments), or Fallback."},
    {"count_event", count_event, METH_VARARGS,
     "The number of rows of a whole rows event body (type code, body, specs, readers), "
     "or Fallback."},
    {"columns_present", columns_present, METH_VARARGS,
     "The first image's columns-present bitmap of a rows event body (type code, body), "
     "or Fallback."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rowc",
                                    "Compiled row-image decoding (see rowimage.py).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__rowc(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    PyObject *dec = PyImport_ImportModule("decimal");
    if (!dec) return NULL;
    DecimalType = PyObject_GetAttrString(dec, "Decimal");
    Py_DECREF(dec);
    if (!DecimalType) return NULL;
    Fallback = PyErr_NewException("_rowc.Fallback", NULL, NULL);
    if (!Fallback || PyModule_AddObject(m, "Fallback", Fallback)) return NULL;
    Py_INCREF(Fallback);
    return m;
}
