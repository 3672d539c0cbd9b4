/* rows_plan.h: the plan of a reduction along axes (rows_plan.c): the
 * check of a cr_rows, the kernel its first pass takes, its passes, and
 * where each pass reads and writes a row.  Plain C, no CUDA call: the
 * kernels (kernels/rows.cuh) take the geometry by value. */
#ifndef CUDAREDUCE_ROWS_PLAN_H
#define CUDAREDUCE_ROWS_PLAN_H

#include "cudareduce.h"
#include "tuning.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each pass divides a row's length by its chunk, CR_ROWS_MIN_CHUNK (2^10)
 * or more, or ends it, so that 2^62 elements take at most 7 passes. */
#define CR_ROWS_MAX_PASSES 7
typedef char cr_rows_passes_suffice[CR_ROWS_MIN_CHUNK >= 1024 ? 1 : -1];

/* Where row r of a pass reads and writes: in C order over shape, its
 * index idx_d(r) in each dimension, its first element at in +
 * sum_d idx_d(r) * in_strides[d] and its result (or its first chunk's
 * partial) at out + sum_d idx_d(r) * out_strides[d].  ndim 0: one row. */
typedef struct {
    int ndim;
    int64_t shape[CR_MAX_DIMS];
    int64_t in_strides[CR_MAX_DIMS];
    int64_t out_strides[CR_MAX_DIMS];
} cr_rows_geometry;

/* What the last pass of a row of instances.def writes into a device out
 * itself (runners.cuh's rows_finishing): its accumulator alone where that
 * is the result; also a float sum or mean, finished (store_finished); an
 * argmin's or argmax's int64 index (store_index). */
typedef enum {
    CR_ROWS_FINISH_NONE,
    CR_ROWS_FINISH_FLOAT,
    CR_ROWS_FINISH_INDEX
} cr_rows_finishing;

/* How the last pass finishes a float sum or mean that it writes into a
 * device out itself (kernels/rows.cuh's store_finished): the sum cast to
 * the reduced dtype, the element's (reduced_is_result) or else the
 * accumulator's; for a mean (divide) divided by n, the row's length. */
typedef struct {
    int reduced_is_result;
    int divide;
    int64_t n;
} cr_rows_finish;

/* The kernel of a pass (kernels/rows.cuh). */
typedef enum {
    CR_ROWS_KERNEL_ROWS,        /* reduce_rows: lanes a chunk */
    CR_ROWS_KERNEL_COLUMNS,     /* reduce_columns: adjacent rows side by
                                 * side, lanes a chunk */
    CR_ROWS_KERNEL_SHORT,       /* reduce_short_rows: a thread a row of at
                                 * most CR_SHORT_ROW */
    CR_ROWS_KERNEL_STAGED       /* reduce_staged: a later pass's few long
                                 * rows of partials, a block a chunk */
} cr_rows_kernel;

/* One pass: each row's `length` elements (pass 0) or partials (later
 * passes) are cut into `chunks` chunks of `chunk` (CR_ROW_CHUNK, the
 * order's, or for an operator of any order as the shape asks: tuning.h's
 * CR_ROWS_FILL_CHUNKS), the last shorter,
 * and each chunk is reduced by `group` lanes of the order (32, or for a
 * row of 16 elements or fewer the power of two at or above its length);
 * the pass writes a partial a chunk, the result where chunks is 1 (the
 * last pass).  Its launch: `blocks` blocks of threads_x by threads_y
 * threads (the row kernel: CR_ROWS_THREADS by 1, 32 / group chunks a
 * warp; the column kernel: adjacent rows, as many as there are up to
 * 32, by CR_COLUMN_THREADS threads a row or the group's; the short-row
 * kernel: CR_ROWS_THREADS by 1, a row a thread; the staged kernel:
 * CR_ROWS_THREADS by 1, a chunk a block), a grid-stride loop taking what
 * CR_ROWS_MAX_BLOCKS blocks leave. */
typedef struct {
    cr_rows_kernel kernel;
    int64_t length;
    int64_t chunk;
    int64_t chunks;
    int group;
    int64_t blocks;
    int threads_x;
    int threads_y;
} cr_rows_pass;

/* dependent_launches: each pass after the first is launched as a
 * programmatic dependent of the one before (dependent_launch.cuh), so
 * that its launch hides behind that one's last blocks; 0 from the
 * planner, which knows no device: the caller sets it where the device
 * has them. */
typedef struct {
    int count;
    cr_rows_pass pass[CR_ROWS_MAX_PASSES];
    int dependent_launches;
} cr_rows_plan;

/* Refuses (CR_ERR_INVALID, with a message) a `rows` that does not
 * describe n elements of item_size bytes: rows and length >= 1, the
 * product of kept_shape rows, rows * length n, the strides multiples of
 * the item size and the reach of each within 63 bits; with a device out
 * (out_on_host 0), out_strides multiples of result_size. */
cr_status cr_rows_check(const cr_rows *rows, int64_t n, size_t item_size,
                        size_t result_size, int out_on_host,
                        cr_error *error);

/* The plan of a checked `rows`: every pass and its kernel; any_order:
 * the operator's result is the same bits in any order of combining
 * (kernels/operators.cuh's any_order), so that its chunks may follow
 * the shape. */
void cr_rows_plan_passes(const cr_rows *rows, size_t item_size,
                         int any_order, cr_rows_plan *plan);

/* Writes the strides of a C-contiguous array of `shape` whose innermost
 * step is `bytes`. */
void cr_rows_contiguous_strides(int ndim, const int64_t *shape,
                                int64_t bytes, int64_t *strides);

/* Drops the dimensions of size 1 and merges a dimension into the one
 * outside it where they are one run in both strides: the same rows in
 * the same order, in the fewest dimensions (often one, which the kernels
 * index with no division). */
void cr_rows_merge(cr_rows_geometry *geometry);

#ifdef __cplusplus
}
#endif

#endif /* CUDAREDUCE_ROWS_PLAN_H */
