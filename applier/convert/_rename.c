/* Compiled renaming of row images whose columns are all mapped as they are (the
 * identity conversion): {source index: value} -> {target name: value}, for a whole list
 * of images in one call (applier.convert.mapping.TableMapping.convert_images; the Python
 * comprehension there is the reference and the fallback, tests/unit/test_plans.py).
 *
 * rename_images(images, names) -> list of dicts; images: list of dicts keyed by int
 * column indexes; names: tuple of target names by source index. A key outside names
 * raises IndexError, as names[index] does in Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *rename_images(PyObject *self, PyObject *args) {
    PyObject *images, *names;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &images, &PyTuple_Type, &names))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(images), count = PyTuple_GET_SIZE(names);
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *image = PyList_GET_ITEM(images, k);
        if (!PyDict_Check(image)) {
            PyErr_SetString(PyExc_TypeError, "rename_images: an image is not a dict");
            goto fail;
        }
        PyObject *renamed = PyDict_New();
        if (!renamed) goto fail;
        PyList_SET_ITEM(out, k, renamed);
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(image, &pos, &key, &value)) {
            Py_ssize_t i = PyLong_AsSsize_t(key);
            if (i == -1 && PyErr_Occurred()) goto fail;
            if (i < 0 || i >= count) {
                PyErr_SetString(PyExc_IndexError, "tuple index out of range");
                goto fail;
            }
            if (PyDict_SetItem(renamed, PyTuple_GET_ITEM(names, i), value)) goto fail;
        }
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"rename_images", rename_images, METH_VARARGS, "Row images keyed by target names."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rename",
                                    "Compiled renaming of identical row images.", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__rename(void) { return PyModule_Create(&module); }
