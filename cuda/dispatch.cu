/* dispatch.cu: from a request to its kernels.  The one dispatch table,
 * from (element, accumulator, operator) to the typed runners of
 * runners.cuh, is instances.def's rows; everything else here works on
 * bytes. */
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "check.cuh"
#include "device.cuh"
#include "dispatch.cuh"
#include "exact_sum.cuh"
#include "memory/pool.cuh"
#include "runners.cuh"

struct cr_dispatch_entry {
    cr_type type;
    cr_type acc;
    cr_op op;
    cr_instances instances;     /* how its kernels were compiled */
    size_t acc_size;            /* sizeof the kernels' accumulator */
    cr_passes_fn run_passes;
    cr_fast_fn run_fast;
    cr_cub_fn run_cub;
    cr_fold_fn run_fold;
    cr_rows_fn run_rows;
    cr_rows_finishing rows_finishing;
    bool rows_any_order;
    cr_cub_rows_fn run_cub_rows;
    cr_identity_fn write_identity;
};

#define CR_INSTANCE(TYPE, ACC, OP, INSTANCES, T, Acc, Op)                 \
    {CR_TYPE_##TYPE, CR_TYPE_##ACC, CR_OP_##OP, CR_##INSTANCES,          \
     sizeof(Acc), run_passes<T, Acc, Op, CR_##INSTANCES>,                 \
     run_fast<T, Acc, Op, CR_##INSTANCES>, run_cub<T, Acc, Op>,           \
     run_fold<T, Acc, Op>, run_rows<T, Acc, Op>,                         \
     rows_finishing<T, Acc, Op>, any_order<Acc, Op>,                      \
     run_cub_rows<T, Acc, Op>,                                            \
     write_identity<Acc, Op>},
#define CR_SHARED_INSTANCE CR_INSTANCE

static const cr_dispatch_entry dispatch_table[] = {
#include "instances/instances.def"
};

#undef CR_INSTANCE
#undef CR_SHARED_INSTANCE

#define DISPATCH_COUNT (sizeof(dispatch_table) / sizeof(dispatch_table[0]))

/* The row of (type, acc, op), or NULL.  A sum or product of integers
 * wraps in 64 bits: signed and unsigned share one accumulator. */
static const cr_dispatch_entry *
find_entry(cr_type type, cr_type acc, cr_op op)
{
    if (acc == CR_TYPE_INT64
        && (op == CR_OP_SUM || op == CR_OP_PROD)) {
        acc = CR_TYPE_UINT64;
    }
    for (size_t i = 0; i < DISPATCH_COUNT; i++) {
        const cr_dispatch_entry *entry = &dispatch_table[i];
        if (entry->type == type && entry->acc == acc && entry->op == op) {
            return entry;
        }
    }
    return NULL;
}

/* The block sizes `method` takes for a row compiled as `instances`,
 * ascending, into threads[0 .. count - 1] (CR_BLOCK_SIZE_COUNT of room);
 * returns count. */
static int
taken_block_sizes(cr_method method, cr_instances instances, int *threads)
{
    int count = 0;
    for (int t = CR_MIN_THREADS; t <= CR_MAX_THREADS; t *= 2) {
        if (cr_method_takes_threads(method, t, instances)) {
            threads[count++] = t;
        }
    }
    return count;
}

/* The refusal of a request for a block size that its row has no kernels
 * at, naming those it has (a ladder step's of a row compiled once:
 * "256"). */
static cr_status
refuse_threads(const cr_request *request, cr_instances instances,
               cr_error *error)
{
    int taken[CR_BLOCK_SIZE_COUNT];
    const int count = taken_block_sizes(request->method, instances, taken);
    char list[64] = "";
    size_t used = 0;
    for (int k = 0; k < count; k++) {
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%d",
                                 k ? ", " : "", taken[k]);
    }
    return cr_fail(error, CR_ERR_INVALID, "%s runs this operator on this "
                   "dtype with %s threads per block, not %d (the sizes "
                   "compiled for it; cudareduce.block_sizes lists them)",
                   cr_method_name(request->method), list, request->threads);
}

/* The row that reduces the request's elements, read as they are where
 * one does that as NumPy's cast would, else after a cast pass into the
 * cast's type or the accumulator's (which replaces the NaNs of a
 * NaN-skipping sum or product by the identity, on the way). */
static cr_status
route_request(const cr_request *request, cr_route *route, cr_error *error)
{
    memset(route, 0, sizeof(*route));
    route->staged = request->type;
    if (request->cast == request->type) {
        route->entry = find_entry(request->type, request->acc, request->op);
    }
    if (route->entry == NULL) {
        /* An operator that counts its non-NaN elements (nanmean) keeps
         * them NaN through the cast, a complex one too. */
        const int counts = cr_op_counts(request->op);
        const int skips_nan = cr_op_skips_nan(request->op) && !counts;
        route->staged = request->cast != request->type ? request->cast
                                                       : request->acc;
        route->nan.replace = skips_nan
            && cr_op_identity(request->op, &route->nan.value);
        route->nan.keep = counts;
        if (!skips_nan || route->nan.replace) {
            route->entry = find_entry(route->staged, request->acc,
                                      counts ? request->op
                                             : cr_op_without_nan(
                                                   request->op));
        }
    }
    if (route->entry == NULL) {
        return cr_fail(error, CR_ERR_INVALID, "no kernel for this element "
                       "type, cast, accumulator and operator");
    }
    if (request->threads != 0
        && !cr_method_takes_threads(request->method, request->threads,
                                    route->entry->instances)) {
        return refuse_threads(request, route->entry->instances, error);
    }
    /* Every copy of the result takes cr_result_size's bytes. */
    if (route->entry->acc_size
        != cr_result_size(route->entry->acc, route->entry->op)) {
        return cr_fail(error, CR_ERR_INVALID, "the kernel's accumulator is "
                       "not as long as its result");
    }
    return CR_OK;
}

/* The plan of a request on the current device, for the elements of its
 * row. */
static cr_status
plan_request(const cr_request *request, const cr_dispatch_entry *entry,
             cr_plan *plan, cr_error *error)
{
    int sm_count = 0;
    cr_status status = cr_current_sm_count(&sm_count, error);
    return status != CR_OK
        ? status
        : cr_plan_launch(request->n, request->method, request->threads,
                         cr_type_size(entry->type),
                         cr_result_size(request->acc, request->op),
                         sm_count, plan, error);
}

/* A reduction along axes: by fast or cub, into an out, its rows a
 * description of its n elements (cr_rows_check). */
static cr_status
validate_rows(const cr_request *request, cr_error *error)
{
    if (request->method != CR_METHOD_FAST
        && request->method != CR_METHOD_CUB) {
        return cr_fail(error, CR_ERR_INVALID, "method '%s' does not reduce "
                       "along an axis yet; 'fast' and 'cub' do",
                       cr_method_name(request->method));
    }
    if (request->out == NULL
        || (request->layout != NULL && request->location != CR_DEVICE)) {
        return cr_fail(error, CR_ERR_INVALID, "a reduction along axes "
                       "takes an out, and a layout only for device data");
    }
    return cr_rows_check(request->rows, request->n,
                         cr_type_size(request->type),
                         cr_type_size(request->result),
                         request->out_on_host, error);
}

extern "C" cr_status
cr_devices_check(const int *devices, int count, int host, int whole,
                 cr_error *error)
{
    if (!host || !whole) {
        return cr_fail(error, CR_ERR_INVALID, "devices= reduces a host "
                       "array over every axis (a device array is reduced "
                       "on its own device)");
    }
    if (count < 1 || count > CR_MAX_DEVICES) {
        return cr_fail(error, CR_ERR_INVALID, "devices= lists 1 to %d "
                       "devices, not %d", CR_MAX_DEVICES, count);
    }
    for (int i = 0; i < count; i++) {
        if (devices[i] < 0) {
            return cr_fail(error, CR_ERR_INVALID, "devices= lists device "
                           "%d: CUDA devices count from 0", devices[i]);
        }
        for (int j = 0; j < i; j++) {
            if (devices[j] == devices[i]) {
                return cr_fail(error, CR_ERR_INVALID, "devices= lists "
                               "device %d twice", devices[i]);
            }
        }
    }
    return CR_OK;
}

static cr_status
validate_request(const cr_request *request, cr_error *error)
{
    if ((int)request->type < 0 || request->type >= CR_TYPE_COUNT
        || (int)request->op < 0 || request->op >= CR_OP_COUNT) {
        return cr_fail(error, CR_ERR_INVALID,
                       "invalid element type or operator");
    }
    if (cr_method_name(request->method) == NULL) {
        return cr_fail(error, CR_ERR_INVALID, "invalid method");
    }
    if (request->n < 0 || request->n > CR_MAX_ELEMENTS) {
        return cr_fail(error, CR_ERR_INVALID, "n must be from 0 to 2^62");
    }
    if (request->layout != NULL && request->layout->n != request->n) {
        return cr_fail(error, CR_ERR_INVALID, "the layout does not match n");
    }
    if (request->out != NULL
        && ((int)request->reduced < 0 || request->reduced >= CR_TYPE_COUNT
            || (int)request->result < 0
            || request->result >= CR_TYPE_COUNT)) {
        return cr_fail(error, CR_ERR_INVALID,
                       "invalid finishing steps for out");
    }
    if (request->n > 0 && request->data == NULL) {
        return cr_fail(error, CR_ERR_INVALID,
                       "a null data pointer with non-zero size");
    }
    if (request->devices != NULL) {
        cr_status status = cr_devices_check(
            request->devices, request->device_count,
            request->location == CR_HOST, request->rows == NULL, error);
        if (status != CR_OK) {
            return status;
        }
    }
    return request->rows != NULL ? validate_rows(request, error)
           : request->out_on_host
               ? cr_fail(error, CR_ERR_INVALID, "an out on the host is "
                         "for a reduction along axes (rows) only")
               : CR_OK;
}

cr_status
cr_request_check(const cr_request *request, cr_route *route, cr_error *error)
{
    cr_status status = validate_request(request, error);
    if (status == CR_OK) {
        status = route_request(request, route, error);
    }
    if (status == CR_OK && request->exact) {
        /* An exact sum adds the elements as NumPy's loop takes them:
         * staged as `reduced` wherever that is not their type. */
        status = cr_exact_check(request, error);
        route->staged = request->reduced;
    }
    return status;
}

extern "C" cr_status
cr_request_block_sizes(const cr_request *request, int *threads, int *count,
                       cr_error *error)
{
    cr_request any_size = *request;
    cr_route route;
    any_size.threads = 0;
    any_size.n = 0;
    any_size.data = NULL;
    any_size.layout = NULL;
    any_size.rows = NULL;
    any_size.out_on_host = 0;
    cr_status status = cr_request_check(&any_size, &route, error);
    *count = status == CR_OK
        ? taken_block_sizes(request->method, route.entry->instances, threads)
        : 0;
    return status;
}

/* Round up to a multiple of 16 bytes. */
static size_t
aligned16(size_t bytes)
{
    return (bytes + 15) / 16 * 16;
}

cr_status
cr_reducer_open(cr_reducer *r, const cr_request *request,
                const cr_dispatch_entry *entry, int device_result,
                cudaStream_t stream, int capturing, cr_error *error)
{
    cr_status status = CR_OK;
    int device = 0;
    memset(r, 0, sizeof(*r));
    r->entry = entry;
    r->method = request->method;
    r->acc_size = cr_result_size(request->acc, request->op);
    switch (r->method) {
    case CR_METHOD_CUB:
        /* CUB's size query fails on a missing device with an error that
         * does not say so: ask for the device first. */
        CR_CHECK(cudaGetDevice(&device));
        status = r->entry->run_cub(NULL, request->n, NULL, &r->cub_temp_bytes,
                                   NULL, stream, error);
        if (status != CR_OK) {
            break;
        }
        CR_POOL_MALLOC(&r->scratch,
                       aligned16(r->cub_temp_bytes) + r->acc_size,
                       stream, capturing);
        r->device_result = static_cast<char *>(r->scratch)
            + aligned16(r->cub_temp_bytes);
        break;
    case CR_METHOD_FAST: {
        status = plan_request(request, entry, &r->plan, error);
        if (status != CR_OK || !device_result) {
            if (status == CR_OK) {
                status = cr_workspaces.acquire(&r->fast, error);
            }
            break;
        }
        /* The call does not wait: scratch of its own, freed after it on
         * the stream, its slots and tickets zeroed there. */
        const size_t slot_bytes = (size_t)r->plan.pass[0].blocks
                                  * CR_FLAGGED_BYTES(r->acc_size);
        const size_t zeroed_bytes = aligned16(slot_bytes
                                              + sizeof(unsigned int));
        CR_POOL_MALLOC(&r->scratch,
                       zeroed_bytes + CR_MAX_ACCUMULATOR_BYTES,
                       stream, capturing);
        r->tickets = reinterpret_cast<unsigned int *>(
            static_cast<char *>(r->scratch) + slot_bytes);
        r->device_result = static_cast<char *>(r->scratch) + zeroed_bytes;
        CR_CHECK(cudaMemsetAsync(r->scratch, 0, zeroed_bytes, stream));
        break;
    }
    default:
        status = plan_request(request, entry, &r->plan, error);
        if (status != CR_OK) {
            break;
        }
        CR_POOL_MALLOC(&r->scratch,
                       workspace_bytes(&r->plan, r->acc_size),
                       stream, capturing);
        break;
    }
done:
    return status;
}

cr_status
cr_reducer_launch(cr_reducer *r, const void *in, int64_t n, void *out,
                  const cudaEvent_t *pass_ends, cudaStream_t stream,
                  cr_error *error)
{
    cr_status status = CR_OK;
    switch (r->method) {
    case CR_METHOD_CUB:
        return r->entry->run_cub(in, n, r->scratch, &r->cub_temp_bytes,
                                 out != NULL ? out : r->device_result,
                                 stream, error);
    case CR_METHOD_FAST: {
        void *result = out;
        unsigned long long *words = NULL;
        unsigned int sequence = 0;
        if (out == NULL && r->fast == NULL) {
            result = r->device_result;
        }
        else if (out == NULL) {
            words = r->fast->result_device;
            /* Never 0, the flag of words not yet written. */
            if (++r->fast->sequence == 0) {
                r->fast->sequence = 1;
            }
            sequence = r->fast->sequence;
        }
        status = r->entry->run_fast(
            &r->plan.pass[0], in,
            r->fast != NULL ? r->fast->slots : r->scratch,
            r->fast != NULL ? r->fast->tickets : r->tickets, result, words,
            sequence, stream, error);
        if (status == CR_OK && pass_ends != NULL) {
            CR_CHECK(cudaEventRecord(pass_ends[0], stream));
        }
        return status;
    }
    default:
        status = r->entry->run_passes(r->method, &r->plan, in, r->scratch,
                                      stream, pass_ends, &r->device_result,
                                      error);
        if (status == CR_OK && out != NULL) {
            CR_CHECK(cudaMemcpyAsync(out, r->device_result, r->acc_size,
                                     cudaMemcpyDeviceToDevice, stream));
        }
        return status;
    }
done:
    return status;
}

int
cr_reducer_passes(const cr_reducer *r)
{
    return r->method == CR_METHOD_CUB ? 0 : r->plan.count;
}

/* Whether every word of `read` carries `sequence`. */
static int
all_flagged(const unsigned long long *read, int count, unsigned int sequence)
{
    for (int w = 0; w < count; w++) {
        if ((unsigned int)(read[w] >> 32) != sequence) {
            return 0;
        }
    }
    return 1;
}

/* Each word read whole (an aligned 64-bit load), all before any test. */
static void
read_words(const volatile unsigned long long *words, int count,
           unsigned long long *read)
{
    for (int w = 0; w < count; w++) {
        read[w] = words[w];
    }
}

cr_status
cr_wait_for_words(const volatile unsigned long long *words, int count,
                  unsigned int sequence, unsigned long long *read,
                  cudaStream_t stream, cr_error *error)
{
    cr_status status = CR_OK;
    const auto start = std::chrono::steady_clock::now();
    read_words(words, count, read);
    while (!all_flagged(read, count, sequence)) {
        if (std::chrono::steady_clock::now() - start
            > std::chrono::nanoseconds(CR_POLL_SPIN_NS)) {
            CR_CHECK(cudaStreamSynchronize(stream));
            read_words(words, count, read);
            if (!all_flagged(read, count, sequence)) {
                return cr_fail(error, CR_ERR_CUDA, "a kernel finished "
                               "without writing the words polled for");
            }
            break;
        }
        read_words(words, count, read);
    }
    /* What the kernel wrote before the words is read after them. */
    std::atomic_thread_fence(std::memory_order_acquire);
done:
    return status;
}

cr_status
cr_reducer_fetch(cr_reducer *r, void *result, cudaStream_t stream,
                 cr_error *error)
{
    cr_status status = CR_OK;
    if (r->fast != NULL) {
        const int count = CR_FLAGGED_WORDS(r->acc_size);
        unsigned long long read[CR_FLAGGED_WORDS(CR_MAX_ACCUMULATOR_BYTES)];
        status = cr_wait_for_words(r->fast->result_host, count,
                                   r->fast->sequence, read, stream, error);
        if (status == CR_OK) {
            cr_unpack_flagged(read, count, result, r->acc_size);
        }
        return status;
    }
    CR_CHECK(cudaMemcpyAsync(result, r->device_result, r->acc_size,
                             cudaMemcpyDeviceToHost, stream));
    CR_CHECK(cudaStreamSynchronize(stream));
done:
    return status;
}

void
cr_reducer_close(cr_reducer *r, cudaStream_t stream, int healthy)
{
    if (r->scratch != NULL) {
        (void)cudaFreeAsync(r->scratch, stream);
    }
    if (r->fast != NULL) {
        cr_workspaces.release(r->fast, healthy);
    }
}


cr_rows_finishing
cr_rows_finishes(const cr_dispatch_entry *entry)
{
    return entry->rows_finishing;
}

int
cr_rows_any_order(const cr_dispatch_entry *entry)
{
    return entry->rows_any_order;
}

cr_status
cr_rows_run_pass(const cr_dispatch_entry *entry, const cr_rows_plan *plan,
                 int p, const void *in, const cr_rows_geometry *geometry,
                 int64_t rows, int64_t stride, void *out,
                 int64_t chunk_bytes, const cr_rows_finish *finish,
                 cudaStream_t stream, cr_error *error)
{
    return entry->run_rows(plan, p, in, geometry, rows, stride, out,
                           chunk_bytes, finish, stream, error);
}

cr_status
cr_rows_run_cub(const cr_dispatch_entry *entry, const void *in,
                int64_t rows, int64_t length, void *temp,
                size_t *temp_bytes, void *results, cudaStream_t stream,
                cr_error *error)
{
    return entry->run_cub_rows(in, rows, length, temp, temp_bytes, results,
                               stream, error);
}

cr_status
cr_fold_partials(const cr_dispatch_entry *entry, const void *partials,
                 int64_t count, int64_t chunk, void *result,
                 cudaStream_t stream, cr_error *error)
{
    return entry->run_fold(partials, count, chunk, result, stream, error);
}

int
cr_route_empty_value(const cr_route *route, void *result)
{
    int identity = 0;
    if (!cr_op_identity(route->entry->op, &identity)) {
        return 0;
    }
    route->entry->write_identity(result);
    return 1;
}
