/* layout.h: a strided array's layout, checked and simplified (layout.c).
 *
 * Plain C, no Python: the extension's input readers call it, and
 * tests/support/c/stage_check.c, a plain C program, compiles layout.c to
 * hand the host path's staging copy the layouts a reduction gives it. */
#ifndef CUDAREDUCE_LAYOUT_H
#define CUDAREDUCE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "cudareduce.h"

/* Checks the layout of an array of `ndim` dimensions, `shape` and
 * `strides` in bytes (NULL: C-contiguous; a stride may be negative or 0),
 * and simplifies it into *layout as cudareduce.h's cr_layout says, keeping
 * the C order of the elements if `c_order` is set.  Returns NULL, or what
 * is refused: a negative extent, a size or span that overflows, strides
 * not a multiple of the item size.  Strides under which distinct index
 * positions share memory (broadcasting, as_strided views) are valid: each
 * position is an element, as in NumPy. */
const char *crpy_plan_layout(int ndim, const int64_t *shape,
                             const int64_t *strides, size_t itemsize,
                             int c_order, cr_layout *layout);

#endif /* CUDAREDUCE_LAYOUT_H */
