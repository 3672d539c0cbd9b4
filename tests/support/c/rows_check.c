/* rows_check.c: the plan of a reduction along axes (cuda/rows_plan.c),
 * without a GPU.
 *
 * Checks which kernel reads each layout (cr_rows_kernel_name), the
 * refusals of cr_rows_check, the passes and launches of
 * cr_rows_plan_passes, the merging of cr_rows_merge, and replays the
 * kernels' loops (cuda/kernels/rows.cuh) over a plan's launch: every
 * chunk of every row must be reduced exactly once.  Built by
 * tests/test_rows_plan.py.  Prints "ok" and exits 0, or names the first
 * failed check and exits 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudareduce.h"
#include "rows_plan.h"
#include "tuning.h"

static int failures = 0;

#define CHECK(condition)                                                   \
    do {                                                                   \
        if (!(condition)) {                                                \
            printf("line %d: %s\n", __LINE__, #condition);                 \
            failures++;                                                    \
        }                                                                  \
    } while (0)

/* The rows of reducing axis `axis` of a C-contiguous array of `shape`
 * (float32 elements: 4 bytes) into a C-contiguous out. */
static cr_rows
axis_of(int ndim, const int64_t *shape, int axis)
{
    cr_rows rows;
    int64_t strides[CR_MAX_DIMS], bytes = 4, out = 4;
    memset(&rows, 0, sizeof(rows));
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = bytes;
        bytes *= shape[d];
    }
    rows.rows = 1;
    for (int d = 0; d < ndim; d++) {
        if (d == axis) {
            rows.length = shape[d];
            rows.stride = strides[d];
            continue;
        }
        rows.kept_shape[rows.kept_ndim] = shape[d];
        rows.kept_strides[rows.kept_ndim] = strides[d];
        rows.kept_ndim++;
        rows.rows *= shape[d];
    }
    for (int d = rows.kept_ndim - 1; d >= 0; d--) {
        rows.out_strides[d] = out;
        out *= rows.kept_shape[d];
    }
    return rows;
}

static const char *
kernel_of(int ndim, const int64_t *shape, int axis)
{
    const cr_rows rows = axis_of(ndim, shape, axis);
    return cr_rows_kernel_name(&rows, 4);
}

static void
check_kernel_choice(void)
{
    const int64_t matrix[] = {1000, 300};
    const int64_t cube[] = {17, 50, 9};
    const int64_t column[] = {1000, 1};
    const int64_t one[] = {5};
    CHECK(strcmp(kernel_of(2, matrix, 1), "rows") == 0);
    CHECK(strcmp(kernel_of(2, matrix, 0), "columns") == 0);
    CHECK(strcmp(kernel_of(3, cube, 0), "columns") == 0);
    CHECK(strcmp(kernel_of(3, cube, 1), "columns") == 0);
    CHECK(strcmp(kernel_of(3, cube, 2), "rows") == 0);
    /* A kept dimension of size 1 is no column to read beside another. */
    CHECK(strcmp(kernel_of(2, column, 0), "rows") == 0);
    /* Rows of at most CR_SHORT_ROW elements, a thread each, in any
     * layout. */
    CHECK(strcmp(kernel_of(1, one, 0), "short rows") == 0);
    const int64_t narrow[] = {1000, CR_SHORT_ROW};
    const int64_t wider[] = {1000, CR_SHORT_ROW + 1};
    const int64_t flat[] = {CR_SHORT_ROW, 1000};
    CHECK(strcmp(kernel_of(2, narrow, 1), "short rows") == 0);
    CHECK(strcmp(kernel_of(2, wider, 1), "rows") == 0);
    CHECK(strcmp(kernel_of(2, flat, 0), "short rows") == 0);
    CHECK(strcmp(kernel_of(2, wider, 0), "columns") == 0);

    /* A transposed (Fortran-order) matrix: its axis 0 is contiguous. */
    cr_rows rows = axis_of(2, matrix, 1);
    rows.stride = 4 * 1000;
    rows.kept_strides[0] = 4;
    CHECK(strcmp(cr_rows_kernel_name(&rows, 4), "columns") == 0);
    rows.stride = -4;
    rows.kept_strides[0] = 4 * 300;
    CHECK(strcmp(cr_rows_kernel_name(&rows, 4), "rows") == 0);
    /* Flipped columns are adjacent too. */
    rows = axis_of(2, matrix, 0);
    rows.kept_strides[0] = -4;
    CHECK(strcmp(cr_rows_kernel_name(&rows, 4), "columns") == 0);

    CHECK(cr_rows_kernel_name(NULL, 4) == NULL);
    rows.rows = 7;
    CHECK(cr_rows_kernel_name(&rows, 4) == NULL);
}

static void
check_refusals(void)
{
    const int64_t matrix[] = {1000, 300};
    cr_error error;
    cr_rows rows = axis_of(2, matrix, 0);
    const int64_t n = 300000;
    CHECK(cr_rows_check(&rows, n, 4, 4, 0, &error) == CR_OK);
    CHECK(cr_rows_check(&rows, n, 4, 8, 1, &error) == CR_OK);
    CHECK(cr_rows_check(&rows, n - 1, 4, 4, 0, &error) == CR_ERR_INVALID);
    /* A device out's strides count in the result's items. */
    CHECK(cr_rows_check(&rows, n, 4, 8, 0, &error) == CR_ERR_INVALID);

    cr_rows bad = rows;
    bad.stride = 6;
    CHECK(cr_rows_check(&bad, n, 4, 4, 0, &error) == CR_ERR_INVALID);
    bad = rows;
    bad.kept_strides[0] = 2;
    CHECK(cr_rows_check(&bad, n, 4, 4, 0, &error) == CR_ERR_INVALID);
    bad = rows;
    bad.rows = 301;
    CHECK(cr_rows_check(&bad, 301000, 4, 4, 0, &error) == CR_ERR_INVALID);
    bad = rows;
    bad.length = -1;
    CHECK(cr_rows_check(&bad, -300, 4, 4, 0, &error) == CR_ERR_INVALID);
    bad = rows;
    bad.length = 0;     /* rows of no element: each takes the identity */
    CHECK(cr_rows_check(&bad, 0, 4, 4, 0, &error) == CR_OK);
    bad = rows;
    bad.kept_ndim = CR_MAX_DIMS + 1;
    CHECK(cr_rows_check(&bad, n, 4, 4, 0, &error) == CR_ERR_INVALID);
    bad = rows;
    bad.stride = INT64_MIN;
    CHECK(cr_rows_check(&bad, n, 4, 4, 0, &error) == CR_ERR_INVALID);
    bad = rows;
    bad.stride = (int64_t)1 << 60;
    CHECK(cr_rows_check(&bad, n, 4, 4, 0, &error) == CR_ERR_INVALID);

    /* One row of every element, no kept dimension. */
    cr_rows single;
    memset(&single, 0, sizeof(single));
    single.rows = 1;
    single.length = n;
    single.stride = -4;
    CHECK(cr_rows_check(&single, n, 4, 4, 0, &error) == CR_OK);
}

/* The plan of a float32 matrix's rows of `length`, laid out as rows
 * (C order) or with `columns` as columns (Fortran order). */
static void
plan_matrix(int64_t rows_count, int64_t length, int columns, int any_order,
            cr_rows_plan *plan)
{
    cr_rows rows;
    memset(&rows, 0, sizeof(rows));
    rows.rows = rows_count;
    rows.length = length;
    rows.stride = columns ? 4 * rows_count : 4;
    rows.kept_ndim = 1;
    rows.kept_shape[0] = rows_count;
    rows.kept_strides[0] = columns ? 4 : 4 * length;
    cr_rows_plan_passes(&rows, 4, any_order, plan);
}

/* The passes of a row of `length`: one, and one more for each time it
 * passes CR_ROW_CHUNK, divided by it (rounded up). */
static int
passes_of(int64_t length)
{
    int passes = 1;
    for (; length > CR_ROW_CHUNK; passes++) {
        length = (length + CR_ROW_CHUNK - 1) / CR_ROW_CHUNK;
    }
    return passes;
}

/* Each pass: CR_ROW_CHUNK chunks of the one before, the last one, its
 * group the power of two at or above a short length, its kernel (a
 * short row's a thread, pass 0 of `columns` the column kernel, a later
 * pass over few chunks of rows longer than CR_ROWS_STAGED_LENGTH the
 * staged kernel, the row kernel else) and launch as rows_plan.c's
 * comment says. */
static void
check_plan(int64_t rows_count, int64_t length, int columns, int passes)
{
    cr_rows_plan plan;
    plan_matrix(rows_count, length, columns, 0, &plan);
    CHECK(plan.count == passes);
    int64_t expected = length;
    for (int p = 0; p < plan.count; p++) {
        const cr_rows_pass *pass = &plan.pass[p];
        int group = 1;
        while (group < 32 && group < expected) {
            group *= 2;
        }
        CHECK(pass->length == expected);
        CHECK(pass->chunk == CR_ROW_CHUNK);
        CHECK(pass->chunks == (expected + CR_ROW_CHUNK - 1) / CR_ROW_CHUNK);
        CHECK(pass->group == group);
        CHECK((pass->chunks == 1) == (p == plan.count - 1));
        CHECK(pass->blocks >= 1 && pass->blocks <= CR_ROWS_MAX_BLOCKS);
        if (expected <= CR_SHORT_ROW) {
            CHECK(pass->kernel == CR_ROWS_KERNEL_SHORT);
        }
        else if (p == 0 && columns && rows_count > 1) {
            int width = 1;
            while (width < 32 && width < rows_count) {
                width *= 2;
            }
            CHECK(pass->kernel == CR_ROWS_KERNEL_COLUMNS);
            CHECK(pass->threads_y == (pass->blocks >= CR_COLUMN_ITEMS
                                      ? CR_COLUMN_THREADS : group));
            CHECK(group >= 2 * CR_COLUMN_THREADS);
            CHECK(pass->threads_x >= width);
            CHECK(pass->threads_x * pass->threads_y <= 1024);
            CHECK(rows_count < CR_ROWS_THREADS / CR_COLUMN_THREADS
                  || pass->threads_x
                     == CR_ROWS_THREADS / CR_COLUMN_THREADS);
        }
        else if (p > 0 && expected > CR_ROWS_STAGED_LENGTH
                 && rows_count * pass->chunks <= CR_ROWS_STAGED_CHUNKS) {
            CHECK(pass->kernel == CR_ROWS_KERNEL_STAGED);
            CHECK(pass->blocks == rows_count * pass->chunks);
        }
        else {
            CHECK(pass->kernel == CR_ROWS_KERNEL_ROWS);
        }
        if (pass->kernel != CR_ROWS_KERNEL_COLUMNS) {
            CHECK(pass->threads_x == CR_ROWS_THREADS);
            CHECK(pass->threads_y == 1);
        }
        expected = pass->chunks;
    }
}

/* Replays pass 0's loops as its kernel runs them: the row kernel's
 * warps over chunks, 32 / group a warp; the column kernel's blocks over
 * tiles of adjacent rows by chunks; the short-row kernel's threads over
 * rows, `at_once` a turn (short_rows_at_once: 1, 2 or 4).  Every chunk of
 * every row is reduced once. */
static void
check_coverage(int64_t rows_count, int64_t length, int columns,
               int any_order, int at_once)
{
    cr_rows_plan plan;
    plan_matrix(rows_count, length, columns, any_order, &plan);
    const cr_rows_pass *pass = &plan.pass[0];
    const int64_t segments = rows_count * pass->chunks;
    unsigned char *seen = calloc((size_t)segments, 1);
    if (pass->kernel == CR_ROWS_KERNEL_COLUMNS) {
        const int width = pass->threads_x;
        const int64_t items = (rows_count + width - 1) / width
                              * pass->chunks;
        for (int64_t block = 0; block < pass->blocks; block++) {
            for (int64_t item = block; item < items; item += pass->blocks) {
                const int64_t tile = item / pass->chunks;
                const int64_t chunk = item - tile * pass->chunks;
                for (int x = 0; x < width; x++) {
                    const int64_t row = tile * width + x;
                    if (row < rows_count) {
                        seen[row * pass->chunks + chunk]++;
                    }
                }
            }
        }
    }
    else if (pass->kernel == CR_ROWS_KERNEL_SHORT) {
        const int64_t threads = pass->blocks * pass->threads_x;
        for (int64_t t = 0; t < threads; t++) {
            for (int64_t base = t; base < rows_count;
                 base += at_once * threads) {
                for (int r = 0; r < at_once; r++) {
                    if (base + r * threads < rows_count) {
                        seen[base + r * threads]++;
                    }
                }
            }
        }
    }
    else {
        const int per_warp = 32 / pass->group;
        const int64_t warps = pass->blocks * (pass->threads_x / 32);
        for (int64_t warp = 0; warp < warps; warp++) {
            for (int64_t base = warp * per_warp; base < segments;
                 base += warps * per_warp) {
                for (int lane = 0; lane < 32; lane += pass->group) {
                    const int64_t segment = base + lane / pass->group;
                    if (segment < segments) {
                        seen[segment]++;
                    }
                }
            }
        }
    }
    for (int64_t s = 0; s < segments; s++) {
        if (seen[s] != 1) {
            printf("kernel %d of %lld rows of %lld: chunk %lld reduced %d "
                   "times\n", (int)pass->kernel, (long long)rows_count,
                   (long long)length, (long long)s, seen[s]);
            failures++;
            break;
        }
    }
    free(seen);
}

/* An operator of any order: the row kernel's chunks halved while they
 * are fewer than CR_ROWS_FILL_CHUNKS, down to CR_ROWS_MIN_CHUNK, each
 * pass's by its own length; the column kernel's and those of rows enough
 * to fill the GPU are CR_ROW_CHUNK. */
static void
check_any_order_chunks(void)
{
    const int64_t shapes[][3] = {
        /* rows, length, columns */
        {32, 1 << 17, 0}, {1, 1 << 30, 0}, {4, 1 << 24, 0},
        {1 << 12, 1 << 12, 0}, {1 << 20, 1 << 12, 0}, {3, 40000, 0},
        {4, 1 << 20, 1}, {2, CR_ROWS_MIN_CHUNK + 1, 0}};
    for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
        const int64_t rows_count = shapes[k][0];
        const int columns = (int)shapes[k][2];
        cr_rows_plan plan;
        plan_matrix(rows_count, shapes[k][1], columns, 1, &plan);
        int64_t length = shapes[k][1];
        for (int p = 0; p < plan.count; p++) {
            const cr_rows_pass *pass = &plan.pass[p];
            int64_t chunk = CR_ROW_CHUNK;
            if (pass->kernel == CR_ROWS_KERNEL_ROWS) {
                while (chunk / 2 >= CR_ROWS_MIN_CHUNK
                       && rows_count * ((length + chunk - 1) / chunk)
                              < CR_ROWS_FILL_CHUNKS) {
                    chunk /= 2;
                }
            }
            CHECK(pass->length == length);
            CHECK(pass->chunk == chunk);
            CHECK(pass->chunks == (length + chunk - 1) / chunk);
            CHECK((pass->chunks == 1) == (p == plan.count - 1));
            length = pass->chunks;
        }
    }
    /* argmax over (32, 2^17): 4,096 chunks of 1,024, then one pass. */
    cr_rows_plan plan;
    plan_matrix(32, 1 << 17, 0, 1, &plan);
    CHECK(plan.count == 2 && plan.pass[0].chunk == 1024
          && plan.pass[0].chunks == 128);
}

static void
check_merge(void)
{
    cr_rows_geometry g;
    memset(&g, 0, sizeof(g));
    /* (4, 1, 5, 6), C-contiguous in and out: one dimension. */
    const int64_t shape[] = {4, 1, 5, 6};
    g.ndim = 4;
    memcpy(g.shape, shape, sizeof(shape));
    cr_rows_contiguous_strides(4, shape, 8, g.in_strides);
    cr_rows_contiguous_strides(4, shape, 2, g.out_strides);
    cr_rows_merge(&g);
    CHECK(g.ndim == 1 && g.shape[0] == 120);
    CHECK(g.in_strides[0] == 8 && g.out_strides[0] == 2);
    /* An out with a gap after each row of 6 keeps two. */
    g.ndim = 4;
    memcpy(g.shape, shape, sizeof(shape));
    cr_rows_contiguous_strides(4, shape, 8, g.in_strides);
    cr_rows_contiguous_strides(4, shape, 2, g.out_strides);
    g.out_strides[2] = 16;
    g.out_strides[0] = 16 * 5;
    cr_rows_merge(&g);
    CHECK(g.ndim == 2 && g.shape[0] == 20 && g.shape[1] == 6);
    CHECK(g.in_strides[0] == 48 && g.out_strides[0] == 16);
    /* Every dimension of size 1: a single row, no dimension. */
    g.ndim = 2;
    g.shape[0] = g.shape[1] = 1;
    cr_rows_merge(&g);
    CHECK(g.ndim == 0);
}

int
main(void)
{
    check_kernel_choice();
    check_refusals();
    check_merge();
    check_any_order_chunks();
    check_plan(1, 1, 0, 1);
    check_plan(1000, 3, 0, 1);
    check_plan(1000, 3, 1, 1);
    check_plan(7, 17, 1, 1);
    check_plan(4, 1 << 20, 1, 2);
    /* Later passes by the staged kernel: 4 rows of 4,096 partials; and
     * by the row kernel: rows of 512 partials (a turn of loads), and
     * more chunks than CR_ROWS_STAGED_CHUNKS. */
    check_plan(4, 1 << 24, 0, 2);
    check_plan(4, 1 << 24, 1, 2);
    check_plan(3, (int64_t)CR_ROW_CHUNK * CR_ROWS_STAGED_LENGTH, 0, 2);
    check_plan(CR_ROWS_STAGED_CHUNKS + 1, (int64_t)CR_ROW_CHUNK * 600, 0,
               2);
    check_plan(1 << 20, CR_SHORT_ROW, 1, 1);
    check_plan(1, CR_ROW_CHUNK * 5, 0, 2);
    check_plan(3, CR_ROW_CHUNK, 0, 1);
    check_plan(3, CR_ROW_CHUNK + 1, 1, 2);
    check_plan(1, (int64_t)CR_ROW_CHUNK * CR_ROW_CHUNK + 1, 0, 3);
    check_plan(1, (int64_t)1 << 62, 0, passes_of((int64_t)1 << 62));
    check_plan((int64_t)1 << 40, 1 << 20, 1, 2);
    const int64_t sizes[][2] = {{1, 1},    {33, 1},     {1000, 3},
                                {5, 16},   {77, 17},    {3, 40000},
                                {300, 31}, {1 << 22, 2},
                                {3, 1 << 16}, {1 << 21, CR_SHORT_ROW},
                                /* more than CR_ROWS_MAX_BLOCKS' worth */
                                {1 << 22, 40}};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        for (int at_once = 1; at_once <= 4; at_once *= 2) {
            for (int any_order = 0; any_order <= 1; any_order++) {
                check_coverage(sizes[k][0], sizes[k][1], 0, any_order,
                               at_once);
                check_coverage(sizes[k][0], sizes[k][1], 1, any_order,
                               at_once);
            }
        }
    }
    if (failures == 0) {
        printf("ok\n");
    }
    return failures != 0;
}
