/* rows_plan.c: the plan of a reduction along axes (rows_plan.h).
 *
 * Plain C with no CUDA call, compiled by the C compiler into the
 * extension, as plan.c is. */
#include "rows_plan.h"

#include <stdint.h>
#include <string.h>

#include "fail.h"
#include "tuning.h"

/* |a| for a stride that is not INT64_MIN (cr_rows_check refuses it). */
static int64_t
magnitude(int64_t a)
{
    return a < 0 ? -a : a;
}

/* Adds (count - 1) * |stride| to *reach; 0 where it overflows 63 bits. */
static int
add_reach(int64_t *reach, int64_t count, int64_t stride)
{
    if (stride == INT64_MIN) {
        return 0;
    }
    const int64_t step = magnitude(stride);
    if (count > 1 && step > (INT64_MAX - *reach) / (count - 1)) {
        return 0;
    }
    *reach += (count - 1) * step;
    return 1;
}

cr_status
cr_rows_check(const cr_rows *rows, int64_t n, size_t item_size,
              size_t result_size, int out_on_host, cr_error *error)
{
    const int64_t item = (int64_t)item_size;
    const int64_t result = (int64_t)result_size;
    int64_t count = 1, in_reach = item, out_reach = result;

    if (item <= 0 || result <= 0) {
        return cr_fail(error, CR_ERR_INVALID, "invalid item size");
    }
    if (rows->kept_ndim < 0 || rows->kept_ndim > CR_MAX_DIMS) {
        return cr_fail(error, CR_ERR_INVALID,
                       "rows: kept_ndim must be from 0 to %d", CR_MAX_DIMS);
    }
    if (rows->rows < 1 || rows->length < 0) {
        return cr_fail(error, CR_ERR_INVALID,
                       "rows: rows must be >= 1, length >= 0");
    }
    for (int d = 0; d < rows->kept_ndim; d++) {
        const int64_t size = rows->kept_shape[d];
        if (size < 1 || size > rows->rows / count) {
            return cr_fail(error, CR_ERR_INVALID, "rows: kept_shape must "
                           "be >= 1, its product rows");
        }
        count *= size;
        if (rows->kept_strides[d] % item != 0
            || (!out_on_host && rows->out_strides[d] % result != 0)) {
            return cr_fail(error, CR_ERR_INVALID, "rows: strides must be "
                           "multiples of the item size (in the input) and "
                           "of the result's (in out)");
        }
        if (!add_reach(&in_reach, size, rows->kept_strides[d])
            || (!out_on_host
                && !add_reach(&out_reach, size, rows->out_strides[d]))) {
            return cr_fail(error, CR_ERR_INVALID, "rows: strides overflow");
        }
    }
    if (count != rows->rows) {
        return cr_fail(error, CR_ERR_INVALID,
                       "rows: the product of kept_shape is not rows");
    }
    if (rows->length > CR_MAX_ELEMENTS / rows->rows
        || rows->rows * rows->length != n) {
        return cr_fail(error, CR_ERR_INVALID,
                       "rows: rows * length must be n, at most 2^62");
    }
    if (rows->stride % item != 0) {
        return cr_fail(error, CR_ERR_INVALID, "rows: the stride must be a "
                       "multiple of the item size");
    }
    if (!add_reach(&in_reach, rows->length, rows->stride)) {
        return cr_fail(error, CR_ERR_INVALID, "rows: strides overflow");
    }
    return CR_OK;
}

/* Lanes a chunk of a row of `length`: 32, or the power of two at or
 * above a shorter length. */
static int
group_for(int64_t length)
{
    int group = 1;
    while (group < 32 && group < length) {
        group *= 2;
    }
    return group;
}

/* Whether pass 0 reads side by side the elements of adjacent rows: the
 * rows' innermost kept dimension (of more than one row) is contiguous
 * and their elements are not. */
static int
use_columns(const cr_rows *rows, size_t item_size)
{
    const int64_t item = (int64_t)item_size;
    if (rows->stride == item || rows->stride == -item) {
        return 0;
    }
    for (int d = rows->kept_ndim - 1; d >= 0; d--) {
        if (rows->kept_shape[d] > 1) {
            return rows->kept_strides[d] == item
                   || rows->kept_strides[d] == -item;
        }
    }
    return 0;
}

static int64_t
ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* The kernel of pass 0 (`first`) or a later one, over rows of `length`:
 * a short row's a thread, whatever its layout; later passes read
 * contiguous partials, a row's adjacent, and where their rows are longer
 * than a turn of a lane's loads and their chunks few, a block a chunk. */
static cr_rows_kernel
kernel_for(const cr_rows *rows, size_t item_size, int64_t length,
           int first)
{
    if (length <= CR_SHORT_ROW) {
        return CR_ROWS_KERNEL_SHORT;
    }
    if (first) {
        return use_columns(rows, item_size) ? CR_ROWS_KERNEL_COLUMNS
                                            : CR_ROWS_KERNEL_ROWS;
    }
    return length > CR_ROWS_STAGED_LENGTH
           && rows->rows * ceil_div(length, CR_ROW_CHUNK)
                  <= CR_ROWS_STAGED_CHUNKS
           ? CR_ROWS_KERNEL_STAGED : CR_ROWS_KERNEL_ROWS;
}

/* The elements a chunk of a pass by `kernel` over `rows` rows of
 * `length`: CR_ROW_CHUNK, the one order's; for an operator of any order
 * (any_order) read by the row kernel, halved while that leaves fewer than
 * CR_ROWS_FILL_CHUNKS chunks, down to CR_ROWS_MIN_CHUNK. */
static int64_t
chunk_for(cr_rows_kernel kernel, int64_t rows, int64_t length,
          int any_order)
{
    int64_t chunk = CR_ROW_CHUNK;
    if (any_order && kernel == CR_ROWS_KERNEL_ROWS) {
        while (chunk / 2 >= CR_ROWS_MIN_CHUNK
               && rows * ceil_div(length, chunk) < CR_ROWS_FILL_CHUNKS) {
            chunk /= 2;
        }
    }
    return chunk;
}

/* The launch of a pass over `rows` rows by its kernel: the column
 * kernel's blocks as many adjacent rows as there are up to
 * CR_ROWS_THREADS / CR_COLUMN_THREADS by CR_COLUMN_THREADS threads a row,
 * or by the group's lanes where there are fewer than CR_COLUMN_ITEMS
 * blocks; the others' CR_ROWS_THREADS threads, as many blocks as give
 * each chunk its group, or each thread of the short-row kernel 8 rows
 * (two turns of its loads at once for float32), or the staged kernel's
 * each chunk a block. */
static void
plan_launch(cr_rows_pass *pass, int64_t rows)
{
    int64_t blocks;
    switch (pass->kernel) {
    case CR_ROWS_KERNEL_COLUMNS: {
        int width = 1;
        while (width < CR_ROWS_THREADS / CR_COLUMN_THREADS && width < rows) {
            width *= 2;
        }
        pass->threads_x = width;
        blocks = ceil_div(rows, width) * pass->chunks;
        pass->threads_y = blocks >= CR_COLUMN_ITEMS ? CR_COLUMN_THREADS
                                                    : pass->group;
        break;
    }
    case CR_ROWS_KERNEL_SHORT: {
        /* 8 rows a thread, but a row a thread where that leaves fewer
         * than CR_ROWS_MIN_BLOCKS blocks: a later pass's 4,096 rows took
         * 2 blocks and 4.5 us, where a row a thread takes 16 blocks. */
        const int64_t spread = ceil_div(rows, CR_ROWS_THREADS);
        pass->threads_x = CR_ROWS_THREADS;
        pass->threads_y = 1;
        blocks = ceil_div(rows, 8 * CR_ROWS_THREADS);
        if (blocks < CR_ROWS_MIN_BLOCKS) {
            blocks = spread < CR_ROWS_MIN_BLOCKS ? spread : CR_ROWS_MIN_BLOCKS;
        }
        break;
    }
    case CR_ROWS_KERNEL_STAGED:
        pass->threads_x = CR_ROWS_THREADS;
        pass->threads_y = 1;
        blocks = rows * pass->chunks;
        break;
    default:
        pass->threads_x = CR_ROWS_THREADS;
        pass->threads_y = 1;
        blocks = ceil_div(rows * pass->chunks,
                          CR_ROWS_THREADS / 32 * (32 / pass->group));
        break;
    }
    pass->blocks = blocks < CR_ROWS_MAX_BLOCKS ? blocks
                                               : CR_ROWS_MAX_BLOCKS;
}

void
cr_rows_plan_passes(const cr_rows *rows, size_t item_size, int any_order,
                    cr_rows_plan *plan)
{
    int64_t length = rows->length;
    memset(plan, 0, sizeof(*plan));
    /* 2^62 elements are at most 7 passes of 2^10: the bound is never
     * reached, and keeps the array access provably safe. */
    while (plan->count < CR_ROWS_MAX_PASSES) {
        cr_rows_pass *pass = &plan->pass[plan->count];
        pass->kernel = kernel_for(rows, item_size, length, plan->count == 0);
        pass->length = length;
        pass->chunk = chunk_for(pass->kernel, rows->rows, length, any_order);
        pass->chunks = ceil_div(length, pass->chunk);
        pass->group = group_for(length);
        plan_launch(pass, rows->rows);
        plan->count++;
        if (pass->chunks == 1) {
            break;
        }
        length = pass->chunks;
    }
}

const char *
cr_rows_kernel_name(const cr_rows *rows, size_t item_size)
{
    static const char *const names[] = {
        [CR_ROWS_KERNEL_ROWS] = "rows",
        [CR_ROWS_KERNEL_COLUMNS] = "columns",
        [CR_ROWS_KERNEL_SHORT] = "short rows",
        [CR_ROWS_KERNEL_STAGED] = "staged partials",
    };
    cr_error ignored;
    if (rows == NULL || rows->rows < 1 || rows->length < 1
        || rows->length > CR_MAX_ELEMENTS / rows->rows
        || cr_rows_check(rows, rows->rows * rows->length, item_size,
                         item_size, 1, &ignored) != CR_OK) {
        return NULL;
    }
    return names[kernel_for(rows, item_size, rows->length, 1)];
}

void
cr_rows_contiguous_strides(int ndim, const int64_t *shape, int64_t bytes,
                           int64_t *strides)
{
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = bytes;
        if (d > 0) {
            bytes *= shape[d];
        }
    }
}

/* Whether outer == inner * size (size >= 2), with no product formed
 * that could overflow. */
static int
one_run(int64_t outer, int64_t inner, int64_t size)
{
    return outer % size == 0 && outer / size == inner;
}

void
cr_rows_merge(cr_rows_geometry *g)
{
    int merged = 0;
    for (int d = 0; d < g->ndim; d++) {
        if (g->shape[d] == 1) {
            continue;
        }
        if (merged > 0
            && one_run(g->in_strides[merged - 1], g->in_strides[d],
                       g->shape[d])
            && one_run(g->out_strides[merged - 1], g->out_strides[d],
                       g->shape[d])) {
            g->shape[merged - 1] *= g->shape[d];
            g->in_strides[merged - 1] = g->in_strides[d];
            g->out_strides[merged - 1] = g->out_strides[d];
            continue;
        }
        g->shape[merged] = g->shape[d];
        g->in_strides[merged] = g->in_strides[d];
        g->out_strides[merged] = g->out_strides[d];
        merged++;
    }
    g->ndim = merged;
}
