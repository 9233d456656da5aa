/* Binlog event packets split from a buffer, compiled: applier.binlog.wire.packets.split_py
 * is the reference (the same events, bytes taken and sequence number on any input:
 * tests/unit/binlog/wire/test_fuzz_packets.py). Reads nothing outside the buffer it is given.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define HEADER_LEN 19
#define CHECKSUM_LEN 4
#define MAX_PAYLOAD 0xFFFFFF
#define NOT_FAST 0xFF
#define QUERY 2
#define QUERY_POST_HEADER_LEN 13

static uint32_t crc_table[8][256];

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFF];
}

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* zlib's crc32 (the IEEE polynomial, reflected), slicing by 8: written here so that the
   build needs no zlib headers (Python's zlib module is one call per event from C) */
static uint32_t crc32_of(const unsigned char *p, Py_ssize_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n >= 8) {
        uint32_t lo = c ^ le32(p), hi = le32(p + 4);
        c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^
            crc_table[5][(lo >> 16) & 0xFF] ^ crc_table[4][lo >> 24] ^
            crc_table[3][hi & 0xFF] ^ crc_table[2][(hi >> 8) & 0xFF] ^
            crc_table[1][(hi >> 16) & 0xFF] ^ crc_table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n-- > 0)
        c = crc_table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* the QUERY body's statement is exactly BEGIN (packets._is_begin) */
static int is_begin(const unsigned char *body, Py_ssize_t len, Py_ssize_t post_header) {
    if (post_header < QUERY_POST_HEADER_LEN || len < post_header)
        return 0;
    Py_ssize_t start = post_header + ((Py_ssize_t)body[11] | (Py_ssize_t)body[12] << 8) +
                       body[8] + 1;
    return start <= len && body[start - 1] == 0 && len - start == 5 &&
           memcmp(body + start, "BEGIN", 5) == 0;
}

static PyObject *split(PyObject *self, PyObject *args) {
    Py_buffer buf, bodies;
    int seq, crc, mariadb;
    Py_ssize_t post_header, limit;
    PyObject *make;
    if (!PyArg_ParseTuple(args, "y*iy*pnpnO", &buf, &seq, &bodies, &crc, &post_header,
                          &mariadb, &limit, &make))
        return NULL;
    PyObject *events = NULL, *result = NULL;
    if (bodies.len != 256) {
        PyErr_SetString(PyExc_ValueError, "split: the table of bodies has 256 entries");
        goto done;
    }
    events = PyList_New(0);
    if (events == NULL)
        goto done;
    const unsigned char *b = buf.buf, *least_of = bodies.buf;
    Py_ssize_t pos = 0, end = buf.len, footer = crc ? CHECKSUM_LEN : 0;
    seq &= 0xFF;
    while (PyList_GET_SIZE(events) < limit && end - pos >= 4) {
        Py_ssize_t size = (Py_ssize_t)b[pos] | (Py_ssize_t)b[pos + 1] << 8 |
                          (Py_ssize_t)b[pos + 2] << 16;
        if (size >= MAX_PAYLOAD || b[pos + 3] != seq || end - pos - 4 < size)
            break;
        const unsigned char *p = b + pos + 4;
        if (size <= HEADER_LEN || p[0] != 0)
            break;
        unsigned least = least_of[p[5]];
        if (least == NOT_FAST)
            break;
        const unsigned char *ev = p + 1;
        Py_ssize_t len = size - 1;
        if (crc && (len < HEADER_LEN + CHECKSUM_LEN ||
                    crc32_of(ev, len - CHECKSUM_LEN) != le32(ev + len - CHECKSUM_LEN)))
            break;
        uint32_t declared = le32(ev + 9);
        if ((Py_ssize_t)declared != len || len < HEADER_LEN + footer)
            break;
        const unsigned char *body = ev + HEADER_LEN;
        Py_ssize_t body_len = len - HEADER_LEN - footer;
        if (body_len < (Py_ssize_t)least ||
            (ev[4] == QUERY && !is_begin(body, body_len, post_header)))
            break;
        PyObject *item = Py_BuildValue(
            "(BkkkkHy#O)", ev[4], (unsigned long)le32(ev), (unsigned long)le32(ev + 5),
            (unsigned long)declared, (unsigned long)le32(ev + 13),
            (unsigned short)(ev[17] | ev[18] << 8), (const char *)body, body_len,
            mariadb ? Py_True : Py_False);
        if (item == NULL)
            goto done;
        PyObject *wire = PyObject_CallObject(make, item);
        Py_DECREF(item);
        if (wire == NULL)
            goto done;
        int failed = PyList_Append(events, wire);
        Py_DECREF(wire);
        if (failed)
            goto done;
        pos += 4 + size;
        seq = (seq + 1) & 0xFF;
    }
    result = Py_BuildValue("(Oni)", events, pos, seq);
done:
    Py_XDECREF(events);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&bodies);
    return result;
}

static PyMethodDef methods[] = {
    {"split", split, METH_VARARGS,
     "split(buf, seq, bodies, crc, query_post_header, mariadb, limit, make) -> "
     "(events, bytes taken, next sequence number): packets.split_py, compiled"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wirec",
                                    "Binlog event packets split from a buffer.", -1, methods};

PyMODINIT_FUNC PyInit__wirec(void) {
    crc_init();
    return PyModule_Create(&module);
}
