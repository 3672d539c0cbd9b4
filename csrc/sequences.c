/* sequences.c: Python lists and tuples of C arrays, an item at a time. */
#include "extension.h"

PyObject *
crpy_sequence(int count, int as_list,
              PyObject *(*item)(const void *items, int k), const void *items)
{
    PyObject *sequence = as_list ? PyList_New(count) : PyTuple_New(count);
    for (int k = 0; sequence != NULL && k < count; k++) {
        PyObject *value = item(items, k);
        if (value == NULL) {
            Py_CLEAR(sequence);
            break;
        }
        if (as_list) {
            PyList_SET_ITEM(sequence, k, value);
        }
        else {
            PyTuple_SET_ITEM(sequence, k, value);
        }
    }
    return sequence;
}
