/* axes.cu: a reduction along axes (cr_request's rows): its input on the
 * device (host data copied there whole, through the pinned ring of
 * host_path.cu; a cast pass where the route asks for one, or cub for
 * contiguous rows), the passes of its plan
 * (rows_plan.c; the kernels are kernels/rows.cuh's) or CUB's segmented
 * reduce, and its results, finished into out (store.cu) on the device or
 * copied to the host. */
#include <cstring>

#include "axes.cuh"
#include "check.cuh"
#include "device.cuh"
#include "gather.cuh"
#include "host/host_path.cuh"
#include "memory/pool.cuh"
#include "rows_plan.h"
#include "store.cuh"

/* The bytes a row layout reaches from row 0's element 0: [*low, *high). */
static void
rows_span(const cr_rows *rows, size_t item_size, int64_t *low,
          int64_t *high)
{
    int64_t below = 0, above = 0;
    for (int d = 0; d <= rows->kept_ndim; d++) {
        const int last = d == rows->kept_ndim;
        const int64_t count = last ? rows->length : rows->kept_shape[d];
        const int64_t stride = last ? rows->stride : rows->kept_strides[d];
        if (stride < 0) {
            below += (count - 1) * stride;
        }
        else {
            above += (count - 1) * stride;
        }
    }
    *low = below;
    *high = above + (int64_t)item_size;
}

/* The layout of the elements in row order (the kept dimensions, then the
 * row's), for the cast pass: each size-1 dimension left out. */
static cr_status
rows_layout(const cr_rows *rows, cr_layout *layout, cr_error *error)
{
    memset(layout, 0, sizeof(*layout));
    layout->n = rows->rows * rows->length;
    for (int d = 0; d <= rows->kept_ndim; d++) {
        const int last = d == rows->kept_ndim;
        const int64_t count = last ? rows->length : rows->kept_shape[d];
        if (count == 1) {
            continue;
        }
        if (layout->ndim == CR_MAX_DIMS) {
            return cr_fail(error, CR_ERR_INVALID, "rows: more than %d "
                           "dimensions", CR_MAX_DIMS);
        }
        layout->shape[layout->ndim] = count;
        layout->strides[layout->ndim] = last ? rows->stride
                                             : rows->kept_strides[d];
        layout->ndim++;
    }
    return CR_OK;
}

/* Whether the rows are contiguous in row order, row r's elements from
 * element r * length on, as CUB's segmented reduce reads them. */
static int
rows_dense(const cr_rows *rows, size_t item_size)
{
    int64_t strides[CR_MAX_DIMS];
    if (rows->length > 1 && rows->stride != (int64_t)item_size) {
        return 0;
    }
    cr_rows_contiguous_strides(rows->kept_ndim, rows->kept_shape,
                               rows->length * (int64_t)item_size, strides);
    for (int d = 0; d < rows->kept_ndim; d++) {
        if (rows->kept_shape[d] > 1 && rows->kept_strides[d] != strides[d]) {
            return 0;
        }
    }
    return 1;
}

/* Where pass p of `plan` reads (`in_strides`, rows of the input or of the
 * partials) and writes (`out_strides`), merged. */
static void
pass_geometry(const cr_rows *rows, const int64_t *in_strides,
              const int64_t *out_strides, cr_rows_geometry *geometry)
{
    geometry->ndim = rows->kept_ndim;
    for (int d = 0; d < rows->kept_ndim; d++) {
        geometry->shape[d] = rows->kept_shape[d];
        geometry->in_strides[d] = in_strides[d];
        geometry->out_strides[d] = out_strides[d];
    }
    cr_rows_merge(geometry);
}

/* The bytes of `count` items of `size` bytes, or 0 where they pass
 * 2^62, which no memory holds (a broadcast input's rows can). */
static size_t
buffer_bytes(int64_t count, int64_t size)
{
    return count <= CR_MAX_ELEMENTS / size ? (size_t)(count * size) : 0;
}

/* Takes a stream-ordered buffer of `count` items of `size` bytes. */
static cr_status
take_buffer(unsigned char **buffer, int64_t count, int64_t size,
            cudaStream_t stream, int capturing, cr_error *error)
{
    const size_t bytes = buffer_bytes(count, size);
    if (bytes == 0) {
        return cr_fail(error, CR_ERR_NO_MEMORY, "rows: %lld items of %lld "
                       "bytes do not fit in memory", (long long)count,
                       (long long)size);
    }
    return cr_pool_malloc((void **)buffer, bytes, stream, capturing, error);
}

/* Frees a stream-ordered buffer, if any (best effort, after an error
 * too). */
static void
free_buffer(void *buffer, cudaStream_t stream)
{
    if (buffer != NULL) {
        (void)cudaFreeAsync(buffer, stream);
    }
}

/* Whether the last pass can write the results into the device out
 * itself, finished (*finish) as the store pass would finish them: a float
 * sum or mean where the result is of the dtype the passes read and the
 * reduced dtype is it or the accumulator's; argmin's and argmax's index
 * into int64 (NumPy's intp). */
static int
finish_in_last_pass(const cr_request *request, const cr_route *route,
                    cr_rows_finish *finish)
{
    switch (cr_rows_finishes(route->entry)) {
    case CR_ROWS_FINISH_FLOAT:
        if (request->result != route->staged
            || (request->reduced != request->acc
                && request->reduced != request->result)) {
            return 0;
        }
        finish->reduced_is_result = request->reduced == request->result;
        finish->divide = request->divide_by_n;
        finish->n = request->rows->length;
        return 1;
    case CR_ROWS_FINISH_INDEX:
        return request->reduced == CR_TYPE_INT64
               && request->result == CR_TYPE_INT64;
    default:
        return 0;
    }
}

/* Rows of no element (an empty reduced axis) into a device out: each
 * result the finished identity of the operator, from one accumulator
 * that every row reads (its in strides 0). */
static cr_status
store_empty_rows(const cr_request *request, const cr_route *route,
                 cudaStream_t stream, int capturing, cr_error *error)
{
    cr_status status = CR_OK;
    const cr_rows *rows = request->rows;
    unsigned char identity[sizeof(cr_indexed_result)] = {0};
    unsigned char *value = NULL;
    int64_t none[CR_MAX_DIMS] = {0};
    cr_rows_geometry geometry;

    if (request->out_on_host || !cr_route_empty_value(route, identity)) {
        return cr_fail(error, CR_ERR_INVALID, "rows of no element: an "
                       "empty reduction into a device out, of an operator "
                       "with an identity");
    }
    status = take_buffer(&value, 1, (int64_t)sizeof(identity), stream,
                         capturing, error);
    if (status != CR_OK) {
        return status;
    }
    CR_CHECK(cudaMemcpyAsync(value, identity, sizeof(identity),
                             cudaMemcpyHostToDevice, stream));
    pass_geometry(rows, none, rows->out_strides, &geometry);
    status = cr_store_results(request, value, &geometry, request->out,
                              stream, error);
done:
    free_buffer(value, stream);
    return status;
}

/* CUB's segmented reduce of the dense rows at `in` into `results`, an
 * accumulator a row, its temporary storage taken and given back on
 * `stream`. */
static cr_status
rows_by_cub(const cr_route *route, const unsigned char *in,
            const cr_rows *rows, unsigned char *results,
            cudaStream_t stream, int capturing, cr_error *error)
{
    size_t temp_bytes = 0;
    unsigned char *temp = NULL;
    cr_status status = cr_rows_run_cub(route->entry, in, rows->rows,
                                       rows->length, NULL, &temp_bytes,
                                       results, stream, error);
    if (status == CR_OK) {
        /* a byte at least: CUB may ask for none */
        status = take_buffer(&temp, temp_bytes > 0 ? (int64_t)temp_bytes : 1,
                             1, stream, capturing, error);
    }
    if (status == CR_OK) {
        status = cr_rows_run_cub(route->entry, in, rows->rows, rows->length,
                                 temp, &temp_bytes, results, stream, error);
    }
    free_buffer(temp, stream);
    return status;
}

cr_status
cr_reduce_rows(const cr_request *request, const cr_route *route,
               cudaStream_t stream, int capturing, cr_error *error)
{
    cr_status status = CR_OK;
    const cr_rows *rows = request->rows;
    const size_t item = cr_type_size(request->type);
    const size_t staged = cr_type_size(route->staged);
    const int64_t acc = (int64_t)cr_result_size(request->acc, request->op);
    const int64_t result = (int64_t)cr_type_size(request->result);
    const int copy = cr_store_is_copy(request);
    const int by_cub = request->method == CR_METHOD_CUB;
    /* The last pass writes the device out itself where nothing is left
     * to finish, or finishes a float sum or mean there itself; else (and
     * by cub) contiguous accumulators, finished from there. */
    cr_rows_finish finish = {};
    const int finishes = !copy && !request->out_on_host && !by_cub
                         && finish_in_last_pass(request, route, &finish);
    const int direct = (copy && !request->out_on_host && !by_cub)
                       || finishes;
    const unsigned char *in = static_cast<const unsigned char *>(
        request->data);
    unsigned char *copied = NULL, *cast = NULL, *finished = NULL;
    unsigned char *partials[2] = {NULL, NULL}, *results = NULL;
    /* The input pass 0 reads: as given, or after the cast pass, rows
     * contiguous in C order. */
    cr_rows source = *rows;
    cr_layout layout;
    cr_rows_geometry geometry;
    int64_t contiguous[CR_MAX_DIMS];
    cr_rows_plan plan = {};

    if (rows->length == 0) {
        return store_empty_rows(request, route, stream, capturing, error);
    }
    if (request->location == CR_HOST) {
        int64_t low, high;
        rows_span(rows, item, &low, &high);
        status = take_buffer(&copied, high - low, 1, stream,
                             capturing, error);
        if (status != CR_OK) {
            goto done;
        }
        status = cr_copy_host_to_device(in + low, (size_t)(high - low),
                                        copied, stream, error);
        if (status != CR_OK) {
            goto done;
        }
        in = copied - low;
    }
    if (route->staged != request->type || request->layout != NULL
        || (by_cub && !rows_dense(rows, item))) {
        /* Contiguous rows: the elements in the given layout's order (the
         * kept dimensions first), or else in the rows' own. */
        status = request->layout != NULL
                 ? (layout = *request->layout, CR_OK)
                 : rows_layout(rows, &layout, error);
        if (status != CR_OK) {
            goto done;
        }
        status = take_buffer(&cast, layout.n, (int64_t)staged, stream,
                             capturing, error);
        if (status != CR_OK) {
            goto done;
        }
        status = cr_gather(in, &layout, layout.n, request->type,
                           route->staged, &route->nan, cast, stream, error);
        if (status != CR_OK) {
            goto done;
        }
        in = cast;
        source.stride = (int64_t)staged;
        cr_rows_contiguous_strides(rows->kept_ndim, rows->kept_shape,
                                   rows->length * (int64_t)staged,
                                   source.kept_strides);
    }
    /* By cub, no plan: no partials, no passes. */
    if (!by_cub) {
        cr_rows_plan_passes(&source, staged,
                            cr_rows_any_order(route->entry), &plan);
        status = cr_current_dependent_launches(&plan.dependent_launches,
                                               error);
    }
    /* Pass p writes partials[p % 2], pass p + 2's no more than p's. */
    for (int p = 0; p + 1 < plan.count && p < 2 && status == CR_OK; p++) {
        status = take_buffer(&partials[p], rows->rows * plan.pass[p].chunks,
                             acc, stream, capturing, error);
    }
    if (status == CR_OK && !direct) {
        status = take_buffer(&results, rows->rows, acc, stream,
                             capturing, error);
    }
    if (status == CR_OK && request->out_on_host && !copy) {
        status = take_buffer(&finished, rows->rows, result, stream,
                             capturing, error);
    }
    if (status == CR_OK && by_cub) {
        status = rows_by_cub(route, in, rows, results, stream, capturing,
                             error);
    }
    if (status != CR_OK) {
        goto done;
    }
    for (int p = 0; p < plan.count; p++) {
        const int last = p == plan.count - 1;
        /* Pass p > 0 reads the partials pass p - 1 wrote, a row each. */
        const unsigned char *from = p == 0 ? in : partials[(p - 1) % 2];
        unsigned char *to = !last ? partials[p % 2]
                            : direct ? static_cast<unsigned char *>(
                                           request->out)
                                     : results;
        const int64_t *in_strides = source.kept_strides;
        int64_t in_pitch[CR_MAX_DIMS], out_pitch[CR_MAX_DIMS];
        if (p > 0) {
            cr_rows_contiguous_strides(rows->kept_ndim, rows->kept_shape,
                                       plan.pass[p].length * acc, in_pitch);
            in_strides = in_pitch;
        }
        cr_rows_contiguous_strides(rows->kept_ndim, rows->kept_shape,
                                   plan.pass[p].chunks * acc, out_pitch);
        pass_geometry(rows, in_strides,
                      last && direct ? rows->out_strides : out_pitch,
                      &geometry);
        status = cr_rows_run_pass(route->entry, &plan, p, from, &geometry,
                                  rows->rows, p == 0 ? source.stride : acc,
                                  to, acc, last && finishes ? &finish : NULL,
                                  stream, error);
        if (status != CR_OK) {
            goto done;
        }
    }
    if (direct) {
        goto done;
    }
    /* The accumulators, a row each, finished into out (a device out), or
     * into device memory and from there to the host. */
    cr_rows_contiguous_strides(rows->kept_ndim, rows->kept_shape, acc,
                               contiguous);
    if (!request->out_on_host) {
        pass_geometry(rows, contiguous, rows->out_strides, &geometry);
        status = cr_store_results(request, results, &geometry, request->out,
                                  stream, error);
        goto done;
    }
    if (!copy) {
        int64_t packed[CR_MAX_DIMS];
        cr_rows_contiguous_strides(rows->kept_ndim, rows->kept_shape, result,
                                   packed);
        pass_geometry(rows, contiguous, packed, &geometry);
        status = cr_store_results(request, results, &geometry, finished,
                                  stream, error);
        if (status != CR_OK) {
            goto done;
        }
    }
    CR_CHECK(cudaMemcpyAsync(request->out, copy ? results : finished,
                             (size_t)(rows->rows * result),
                             cudaMemcpyDeviceToHost, stream));
    CR_CHECK(cudaStreamSynchronize(stream));

done:
    free_buffer(copied, stream);
    free_buffer(cast, stream);
    free_buffer(partials[0], stream);
    free_buffer(partials[1], stream);
    free_buffer(results, stream);
    free_buffer(finished, stream);
    return status;
}
