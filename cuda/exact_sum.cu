/* exact_sum.cu: exact sums on the device (exact_sum.cuh): the state of
 * a call, the grid of kernels/exact.cuh's adding kernel, and its
 * rounding. */
#include "check.cuh"
#include "device.cuh"
#include "exact_sum.cuh"
#include "kernels/exact.cuh"
#include "memory/exact_states.cuh"
#include "memory/pool.cuh"

static int
is_exact_type(cr_type type)
{
    return type == CR_TYPE_FLOAT16 || type == CR_TYPE_BFLOAT16
           || type == CR_TYPE_FLOAT32 || type == CR_TYPE_FLOAT64;
}

/* cr_exact_check's rules but the method's and the layout's: the op and
 * the types. */
static cr_status
check_sum(const cr_request *request, cr_error *error)
{
    if (request->op != CR_OP_SUM && request->op != CR_OP_NANSUM
        && request->op != CR_OP_NANMEAN) {
        return cr_fail(error, CR_ERR_INVALID, "exact=True is for sum, "
                       "nansum, mean and nanmean");
    }
    if (!is_exact_type(request->reduced)
        || !is_exact_type(request->result)) {
        return cr_fail(error, CR_ERR_INVALID, "exact=True sums float16, "
                       "bfloat16, float32 and float64 values into one of "
                       "them (complex sums are not built yet)");
    }
    return CR_OK;
}

cr_status
cr_exact_check(const cr_request *request, cr_error *error)
{
    cr_status status = check_sum(request, error);
    if (status != CR_OK) {
        return status;
    }
    if (request->rows != NULL) {
        return cr_fail(error, CR_ERR_INVALID, "exact=True reduces the "
                       "whole array only, for now: not along axes");
    }
    if (request->method != CR_METHOD_FAST) {
        return cr_fail(error, CR_ERR_INVALID, "exact=True runs the method "
                       "'fast' only, for now: not %s",
                       cr_method_name(request->method));
    }
    if (request->exact_state && request->out != NULL) {
        return cr_fail(error, CR_ERR_INVALID, "an exact sum's state goes "
                       "to the host: no out");
    }
    return CR_OK;
}

cr_status
cr_exact_open(cr_exact_sum *s, cudaStream_t stream, int capturing,
              cr_error *error)
{
    cr_status status = CR_OK;
    if (capturing) {
        /* A graph's replays run after this call, each beside whatever
         * else runs then: their state is the graph's own, zeroed by a
         * node of it before the kernel's. */
        CR_POOL_MALLOC(&s->scratch, CR_EXACT_SCRATCH_BYTES, stream,
                       capturing);
        CR_CHECK(cudaMemsetAsync(s->scratch, 0, sizeof(cr_exact_state),
                                 stream));
    }
    else {
        status = cr_exact_states.acquire_fitting(
            &s->kept,
            [stream](const cr_exact_kept *kept) {
                return kept->stream == stream;
            },
            CR_EXACT_KEPT_STATES, error);
        if (status != CR_OK) {
            goto done;
        }
        s->scratch = s->kept->scratch;
        CR_CHECK(cudaStreamWaitEvent(stream, s->kept->released, 0));
    }
    s->device_result = static_cast<char *>(s->scratch)
                       + CR_EXACT_STATE_BYTES;
done:
    return status;
}

/* How `request`'s sum is rounded, and where it goes: into `out` as it
 * is (its value alone), or into `result`, nanmean's count first
 * (cr_counted_result's layout); `out` is request->out or, for a rounding
 * on the host into a device out, the host's copy of it. */
static cr_exact_rounding
rounding_into(const cr_request *request, void *out, void *result)
{
    const cr_type type = request->result;
    const int counted = cr_op_counts(request->op);
    unsigned char *bytes = static_cast<unsigned char *>(result);
    cr_exact_rounding rounding;
    rounding.format = type == CR_TYPE_FLOAT64   ? CR_EXACT_FLOAT64
                      : type == CR_TYPE_FLOAT32 ? CR_EXACT_FLOAT32
                      : type == CR_TYPE_FLOAT16 ? CR_EXACT_FLOAT16
                                                : CR_EXACT_BFLOAT16;
    rounding.divide = counted || request->divide_by_n;
    rounding.n = request->n;
    rounding.count = out == NULL && counted
                     ? reinterpret_cast<int64_t *>(bytes) : NULL;
    rounding.value = out != NULL
        ? static_cast<unsigned char *>(out)
        : bytes + (counted ? sizeof(int64_t) : 0);
    return rounding;
}

/* The grid: a thread a 16-byte vector up to the blocks the device holds
 * at once (CR_EXACT_BLOCKS_PER_SM, which the kernel's launch bounds
 * promise), and at least enough blocks that none reads more than
 * CR_EXACT_BLOCK_ELEMENTS (kernels/exact.cuh: its limbs' bound). */
template <class T, bool SKIP_NAN>
static cr_status
launch_add(cr_exact_sum *s, const void *in, int64_t n, cudaStream_t stream,
           cr_error *error)
{
    cr_status status = CR_OK;
    int sm_count = 0;
    const int64_t vectors = n / (16 / (int64_t)sizeof(T)) + 1;
    int64_t blocks;
    status = cr_current_sm_count(&sm_count, error);
    if (status != CR_OK) {
        goto done;
    }
    blocks = (vectors + CR_EXACT_THREADS - 1) / CR_EXACT_THREADS;
    if (blocks > (int64_t)sm_count * CR_EXACT_BLOCKS_PER_SM) {
        blocks = (int64_t)sm_count * CR_EXACT_BLOCKS_PER_SM;
    }
    if (blocks < (n + CR_EXACT_BLOCK_ELEMENTS - 1) / CR_EXACT_BLOCK_ELEMENTS) {
        blocks = (n + CR_EXACT_BLOCK_ELEMENTS - 1) / CR_EXACT_BLOCK_ELEMENTS;
    }
    exact_sum_kernel<T, SKIP_NAN><<<(unsigned)blocks, CR_EXACT_THREADS, 0,
                                    stream>>>(
        static_cast<const T *>(in), n,
        static_cast<cr_exact_state *>(s->scratch));
    CR_CHECK(cudaGetLastError());
done:
    return status;
}

template <class T>
static cr_status
launch_add_of(cr_exact_sum *s, const void *in, int64_t n, int skip_nan,
              cudaStream_t stream, cr_error *error)
{
    return skip_nan ? launch_add<T, true>(s, in, n, stream, error)
                    : launch_add<T, false>(s, in, n, stream, error);
}

static cr_status
launch_add_typed(cr_exact_sum *s, const void *in, int64_t n, cr_type type,
                 int skip_nan, cudaStream_t stream, cr_error *error)
{
    switch (type) {
    case CR_TYPE_FLOAT16:
        return launch_add_of<__half>(s, in, n, skip_nan, stream, error);
    case CR_TYPE_BFLOAT16:
        return launch_add_of<__nv_bfloat16>(s, in, n, skip_nan, stream,
                                            error);
    case CR_TYPE_FLOAT32:
        return launch_add_of<float>(s, in, n, skip_nan, stream, error);
    case CR_TYPE_FLOAT64:
        return launch_add_of<double>(s, in, n, skip_nan, stream, error);
    default:
        return cr_fail(error, CR_ERR_INVALID, "an exact sum of elements "
                       "other than float16, bfloat16, float32 or float64");
    }
}

cr_status
cr_exact_add(cr_exact_sum *s, const cr_request *request, const void *in,
             int64_t n, cr_type type, int last, cudaStream_t stream,
             cr_error *error)
{
    int dependent = 0;
    cr_status status = launch_add_typed(s, in, n, type,
                                        cr_op_skips_nan(request->op), stream,
                                        error);
    if (status == CR_OK && last) {
        status = cr_current_dependent_launches(&dependent, error);
    }
    if (status != CR_OK || !last) {
        goto done;
    }
    CR_CHECK(launch_kernel(dependent, exact_round_kernel, dim3(1), dim3(32),
                           0, stream,
                           static_cast<cr_exact_state *>(s->scratch),
                           rounding_into(request, request->out,
                                         s->device_result)));
    CR_CHECK(cudaGetLastError());
done:
    return status;
}

cr_status
cr_exact_finish(cr_exact_sum *s, const cr_request *request,
                cudaStream_t stream, void *result, cr_error *error)
{
    cr_status status = CR_OK;
    if (request->out == NULL) {
        const size_t count_bytes =
            cr_op_counts(request->op) ? sizeof(int64_t) : 0;
        CR_CHECK(cudaMemcpyAsync(result, s->device_result,
                                 count_bytes + cr_type_size(request->result),
                                 cudaMemcpyDeviceToHost, stream));
        CR_CHECK(cudaStreamSynchronize(stream));
    }
done:
    return status;
}

cr_status
cr_exact_take(cr_exact_sum *s, cudaStream_t stream, cr_exact_state *held,
              cr_error *error)
{
    cr_status status = CR_OK;
    CR_CHECK(cudaMemcpyAsync(held, s->scratch, sizeof(*held),
                             cudaMemcpyDeviceToHost, stream));
    CR_CHECK(cudaMemsetAsync(s->scratch, 0, sizeof(*held), stream));
    CR_CHECK(cudaStreamSynchronize(stream));
done:
    return status;
}

size_t
cr_exact_state_size(void)
{
    return sizeof(cr_exact_state);
}

void
cr_exact_add_states(void *sum, const void *state)
{
    cr_exact_state *to = static_cast<cr_exact_state *>(sum);
    const cr_exact_state *from = static_cast<const cr_exact_state *>(state);
    for (int k = 0; k < CR_KULISCH_LIMBS; k++) {
        to->limb[k] += from->limb[k];
    }
    to->specials |= from->specials;
    to->nans += from->nans;
}

void
cr_exact_state_specials(const void *state, int *nan, int *inf)
{
    const cr_exact_state *s = static_cast<const cr_exact_state *>(state);
    *nan = (s->specials & CR_EXACT_NAN) != 0;
    *inf = (s->specials & (CR_EXACT_POS_INF | CR_EXACT_NEG_INF)) != 0;
}

cr_status
cr_exact_round_state(const cr_request *request, const void *state,
                     void *result, cr_error *error)
{
    const cr_exact_state *s = static_cast<const cr_exact_state *>(state);
    cr_status status = check_sum(request, error);
    if (status == CR_OK) {
        cr_exact_round(s->limb, s->specials, s->nans,
                       rounding_into(request, NULL, result));
    }
    return status;
}

cr_status
cr_exact_finish_taken(const cr_request *request, const cr_exact_state *taken,
                      int count, cudaStream_t stream, void *result,
                      cr_error *error)
{
    cr_status status = CR_OK;
    cr_exact_state sum = {};
    uint64_t out_bits = 0;
    for (int d = 0; d < count; d++) {
        cr_exact_add_states(&sum, &taken[d]);
    }
    if (request->exact_state) {
        memcpy(result, &sum, sizeof(sum));
        goto done;
    }
    cr_exact_round(sum.limb, sum.specials, sum.nans,
                   rounding_into(request,
                                 request->out != NULL ? &out_bits : NULL,
                                 result));
    if (request->out != NULL) {
        CR_CHECK(cudaMemcpyAsync(request->out, &out_bits,
                                 cr_type_size(request->result),
                                 cudaMemcpyHostToDevice, stream));
        CR_CHECK(cudaStreamSynchronize(stream));
    }
done:
    return status;
}

void
cr_exact_close(cr_exact_sum *s, cudaStream_t stream, int healthy)
{
    if (s->kept != NULL) {
        /* The next call to take it waits for this one's last use. */
        healthy = healthy
                  && cudaEventRecord(s->kept->released, stream) == cudaSuccess;
        s->kept->stream = stream;
        if (!healthy) {
            /* Freed only once nothing queued uses it. */
            (void)cudaStreamSynchronize(stream);
        }
        cr_exact_states.release(s->kept, healthy);
        s->kept = NULL;
    }
    else if (s->scratch != NULL) {
        (void)cudaFreeAsync(s->scratch, stream);
    }
    s->scratch = NULL;
}
