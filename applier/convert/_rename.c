/* Compiled renaming of row images whose columns are all mapped as they are (the
 * identity conversion): {source index: value} -> {target name: value}, for a whole list
 * of images in one call (applier.convert.mapping.TableMapping.convert_images; the Python
 * comprehension there is the reference and the fallback, tests/unit/apply/rows/test_plans.py).
 *
 * Also same_shape(images): whether converted images share one key order and one value
 * type per position (applier.apply.rows.batching.same_types' first question; below).
 *
 * rename_images(images, names) -> list of dicts; images: list of dicts keyed by int
 * column indexes; names: tuple of target names by source index. A key is looked up as
 * names[key] is in Python (negative indexes count from the end; out of range raises
 * IndexError, any other key type what tuple indexing raises).
 *
 * Python code may run inside the loop (a name's __hash__ or __eq__, a key's __index__):
 * the list is re-read at each step, every object in use is held by a strong reference,
 * and a dict that changes size while it is walked raises RuntimeError, as in Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* names[key] as Python indexes a tuple; a new reference, NULL with an error set. */
static PyObject *name_of(PyObject *names, PyObject *key) {
    if (!PyLong_CheckExact(key)) return PyObject_GetItem(names, key);
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(names);
    if (i < 0) i += count;
    if (i < 0 || i >= count) {
        PyErr_SetString(PyExc_IndexError, "tuple index out of range");
        return NULL;
    }
    PyObject *name = PyTuple_GET_ITEM(names, i);
    Py_INCREF(name);
    return name;
}

/* One image renamed into a new dict; NULL with an error set. */
static PyObject *rename_one(PyObject *image, PyObject *names) {
    Py_ssize_t pos = 0, size = PyDict_GET_SIZE(image);
    PyObject *renamed = _PyDict_NewPresized(size); /* no resize while it fills */
    if (!renamed) return NULL;
    PyObject *key, *value;
    Py_ssize_t count = PyTuple_GET_SIZE(names);
    while (PyDict_Next(image, &pos, &key, &value)) {
        if (PyLong_CheckExact(key)) { /* the common case: no Python code can run */
            Py_ssize_t i = PyLong_AsSsize_t(key);
            if (i == -1 && PyErr_Occurred()) {
                if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
                    PyErr_SetString(PyExc_IndexError,
                                    "cannot fit 'int' into an index-sized integer");
                }
                goto fail;
            }
            if (i < 0) i += count;
            if (i < 0 || i >= count) {
                PyErr_SetString(PyExc_IndexError, "tuple index out of range");
                goto fail;
            }
            PyObject *name = PyTuple_GET_ITEM(names, i);
            if (PyUnicode_CheckExact(name)) {
                if (PyDict_SetItem(renamed, name, value)) goto fail;
                continue;
            }
        }
        Py_INCREF(key); /* a name or key of Python code: it may change what is walked */
        Py_INCREF(value);
        PyObject *name = name_of(names, key);
        int bad = !name || PyDict_SetItem(renamed, name, value);
        Py_XDECREF(name);
        Py_DECREF(key);
        Py_DECREF(value);
        if (bad) goto fail;
        if (PyDict_GET_SIZE(image) != size) {
            PyErr_SetString(PyExc_RuntimeError, "dictionary changed size during iteration");
            goto fail;
        }
    }
    return renamed;
fail:
    Py_DECREF(renamed);
    return NULL;
}

static PyObject *rename_images(PyObject *self, PyObject *args) {
    PyObject *images, *names;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &images, &PyTuple_Type, &names))
        return NULL;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(images); k++) {
        PyObject *image = PyList_GET_ITEM(images, k);
        if (!PyDict_Check(image)) {
            PyErr_SetString(PyExc_TypeError, "rename_images: an image is not a dict");
            goto fail;
        }
        Py_INCREF(image);
        PyObject *renamed = rename_one(image, names);
        Py_DECREF(image);
        if (!renamed) goto fail;
        int bad = PyList_Append(out, renamed);
        Py_DECREF(renamed);
        if (bad) goto fail;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* same_shape(images) -> True, False or None: whether every image of the list has the
 * first one's keys in its order and values of its types (type by type, None a type of its
 * own), what applier.apply.rows.batching.same_types first asks of a batch. None when it
 * cannot tell without Python code (an image not exactly a dict, a key not exactly a str,
 * an empty list): the caller asks in Python. No Python code runs while it walks. */
static PyObject *same_shape(PyObject *self, PyObject *args) {
    PyObject *images;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &images)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(images);
    if (n == 0) Py_RETURN_NONE;
    PyObject *first = PyList_GET_ITEM(images, 0);
    if (!PyDict_CheckExact(first)) Py_RETURN_NONE;
    Py_ssize_t width = PyDict_GET_SIZE(first);
    PyObject **keys = PyMem_Malloc(sizeof(PyObject *) * (size_t)(width ? width : 1));
    PyTypeObject **types = PyMem_Malloc(sizeof(PyTypeObject *) * (size_t)(width ? width : 1));
    PyObject *answer = Py_True;
    if (!keys || !types) {
        PyMem_Free(keys);
        PyMem_Free(types);
        return PyErr_NoMemory();
    }
    Py_ssize_t pos = 0, k = 0;
    PyObject *key, *value;
    while (PyDict_Next(first, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) {
            answer = Py_None;
            goto done;
        }
        keys[k] = key; /* borrowed: nothing below runs Python code or changes a dict */
        types[k++] = Py_TYPE(value);
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        PyObject *image = PyList_GET_ITEM(images, i);
        if (!PyDict_CheckExact(image)) {
            answer = Py_None;
            goto done;
        }
        if (PyDict_GET_SIZE(image) != width) {
            answer = Py_False;
            continue; /* a later image may still leave it to Python (None) */
        }
        pos = 0;
        k = 0;
        while (PyDict_Next(image, &pos, &key, &value)) {
            if (!PyUnicode_CheckExact(key)) {
                answer = Py_None;
                goto done;
            }
            if (Py_TYPE(value) != types[k]
                || (key != keys[k] && PyUnicode_Compare(key, keys[k]) != 0))
                answer = Py_False;
            k++;
        }
    }
done:
    PyMem_Free(keys);
    PyMem_Free(types);
    Py_INCREF(answer);
    return answer;
}

static PyMethodDef methods[] = {
    {"rename_images", rename_images, METH_VARARGS, "Row images keyed by target names."},
    {"same_shape", same_shape, METH_VARARGS, "Images of one key order and value types."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rename",
                                    "Compiled renaming of identical row images.", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__rename(void) { return PyModule_Create(&module); }
