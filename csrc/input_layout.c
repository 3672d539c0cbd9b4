/* input_layout.c: an input's shape and strides as given, recorded, and
 * its layout planned (layout.c): what every reader of input.c's
 * protocols does with the array it found. */
#include "extension.h"

int
crpy_input_layout(crpy_input *input, int ndim, const int64_t *shape,
                  const int64_t *strides, int itemsize, const char *source)
{
    const char *refused = crpy_plan_layout(ndim, shape, strides,
                                           (size_t)itemsize, input->c_order,
                                           &input->layout);
    if (refused != NULL) {
        PyErr_Format(PyExc_ValueError, "%s: %s", source, refused);
        return -1;
    }
    input->ndim = ndim;
    int64_t step = itemsize;
    for (int d = ndim - 1; d >= 0; d--) {
        input->shape[d] = shape[d];
        input->strides[d] = strides != NULL ? strides[d] : step;
        step *= shape[d];
    }
    return 0;
}
