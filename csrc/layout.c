/* layout.c: a strided array's layout, checked and simplified, as the
 * input readers give it (layout.h).  Plain C: no Python, no CUDA call. */
#include "layout.h"

#include <string.h>

/* |a| * b fits in int64 (a, b >= 0). */
static int
mul_fits(int64_t a, int64_t b)
{
    return a == 0 || b <= INT64_MAX / a;
}

const char *
crpy_plan_layout(int ndim, const int64_t *shape, const int64_t *strides,
                 size_t itemsize, int c_order, cr_layout *layout)
{
    const int64_t item = (int64_t)itemsize;
    int64_t n = 1;

    if (ndim < 0 || ndim > CR_MAX_DIMS) {
        return "arrays of at most 64 dimensions";
    }
    if (item <= 0) {
        return "invalid item size";
    }
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) {
            return "shape entries must be >= 0";
        }
        if (!mul_fits(n, shape[d])) {
            return "the number of elements overflows";
        }
        n *= shape[d];
    }
    if (n > CR_MAX_ELEMENTS || !mul_fits(n, item)) {
        return "the array's byte size overflows";
    }
    memset(layout, 0, sizeof(*layout));
    layout->n = n;
    if (strides == NULL || n == 0) {
        layout->contiguous = 1;
        if (n > 0) {
            layout->ndim = 1;
            layout->shape[0] = n;
            layout->strides[0] = item;
        }
        return NULL;
    }
    /* Keep the dimensions that matter; out of C order, strides made
     * non-negative and sorted. */
    for (int d = 0; d < ndim; d++) {
        int64_t stride = strides[d];
        if (stride % item != 0) {
            return "strides must be multiples of the item size";
        }
        if (shape[d] == 1) {
            continue;
        }
        if (stride == INT64_MIN
            || !mul_fits(shape[d] - 1, stride < 0 ? -stride : stride)) {
            return "strides overflow";
        }
        if (stride < 0 && !c_order) {
            layout->offset += (shape[d] - 1) * stride;
            stride = -stride;
        }
        int k = layout->ndim++;
        /* Insertion sort by decreasing stride. */
        while (!c_order && k > 0 && layout->strides[k - 1] < stride) {
            layout->strides[k] = layout->strides[k - 1];
            layout->shape[k] = layout->shape[k - 1];
            k--;
        }
        layout->strides[k] = stride;
        layout->shape[k] = shape[d];
    }
    /* The bytes spanned must fit.  Strides under which distinct index
     * positions share memory (broadcasting, or as_strided views) are a
     * valid read-only view: every position counts, as in NumPy. */
    int64_t span = item;
    for (int k = 0; k < layout->ndim; k++) {
        const int64_t stride = layout->strides[k];
        const int64_t reach = (layout->shape[k] - 1)
                              * (stride < 0 ? -stride : stride);
        if (reach > INT64_MAX - span) {
            return "strides overflow";
        }
        span += reach;
    }
    /* Merge a dimension into the one outside it where they are one run. */
    int merged = 0;
    for (int k = 0; k < layout->ndim; k++) {
        if (merged > 0 && layout->strides[merged - 1]
                              == layout->strides[k] * layout->shape[k]) {
            layout->shape[merged - 1] *= layout->shape[k];
            layout->strides[merged - 1] = layout->strides[k];
        }
        else {
            layout->shape[merged] = layout->shape[k];
            layout->strides[merged] = layout->strides[k];
            merged++;
        }
    }
    layout->ndim = merged;
    layout->contiguous = merged == 0
        || (merged == 1 && layout->strides[0] == item);
    if (merged == 0) {
        /* Every dimension had size 1: a single element. */
        layout->ndim = 1;
        layout->shape[0] = 1;
        layout->strides[0] = item;
    }
    return NULL;
}
