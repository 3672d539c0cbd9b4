/* store.cu: the last step of a reduction whose result stays on the device,
 * as csrc/ takes it on the host for a result returned to Python: NumPy's
 * unsafe cast of the accumulator's value to the reduced dtype, and for a
 * mean the divide by the count in double (`ret / rcount`, an intp) and the
 * cast to the result dtype (nanmean's by the count of its non-NaN
 * elements); of argmin and argmax, the index.  One thread a result
 * (one result, or a reduction along axes' many), one small kernel: the
 * types are read at run time from types.def's rows, but for the many
 * results of a float sum or mean along axes, whose kernel has them at
 * compile time (store_float_results). */
#include <cuda_fp16.h>
#include <cstddef>
#include <cstring>

#include "check.cuh"
#include "kernels/float_results.cuh"
#include "kernels/results.cuh"
#include "kernels/rows.cuh"
#include "kernels/values.cuh"
#include "store.cuh"

/* A value of any element type, by kind: NumPy's casts go through these. */
typedef struct {
    char kind;          /* 'i' signed or bool, 'u' unsigned, 'f' float,
                         * 'c' complex (d the real part, im the imaginary) */
    int64_t i;
    uint64_t u;
    double d;
    double im;
} any_value;

/* A float or complex value: d holds it, or its real part. */
__device__ bool
is_inexact(const any_value &v)
{
    return v.kind == 'f' || v.kind == 'c';
}

template <class T>
__device__ any_value
value_of(T x)
{
    any_value v = {};
    if constexpr (cuda::std::is_floating_point<T>::value) {
        v.kind = 'f';
        v.d = (double)x;
    }
    else if constexpr (cuda::std::is_signed<T>::value) {
        v.kind = 'i';
        v.i = (int64_t)x;
        v.u = (uint64_t)v.i;
    }
    else {
        v.kind = 'u';
        v.u = (uint64_t)x;
        v.i = (int64_t)v.u;
    }
    return v;
}

__device__ any_value
value_of(__half x)
{
    return value_of((double)__half2float(x));
}

__device__ any_value
value_of(__nv_bfloat16 x)
{
    return value_of((double)__bfloat162float(x));
}

__device__ any_value
value_of(numpy_bool x)
{
    return value_of((int64_t)(x.byte != 0));
}

template <class F>
__device__ any_value
value_of(complex_value<F> x)
{
    any_value v = value_of((double)x.re);
    v.kind = 'c';
    v.im = (double)x.im;
    return v;
}

/* NumPy's unsafe cast of v to T: integers keep their low bits, floats
 * truncate into integers, integers round into floats; a complex value
 * into a real type is its real part, a real one into a complex type the
 * real part. */
template <class T>
__device__ T
cast_value(const any_value &v)
{
    if constexpr (is_complex<T>::value) {
        using Part = decltype(T::re);
        return T(cast_value<Part>(v), v.kind == 'c' ? (Part)v.im : Part(0));
    }
    else if constexpr (cuda::std::is_floating_point<T>::value) {
        return is_inexact(v) ? (T)v.d : v.kind == 'i' ? (T)v.i : (T)v.u;
    }
    else {
        return is_inexact(v) ? (T)v.d : (T)v.u;
    }
}

template <>
__device__ __half
cast_value<__half>(const any_value &v)
{
    return is_inexact(v) ? float_cast<__half>(v.d)
           : v.kind == 'i' ? __ll2half_rn((long long)v.i)
                           : __ull2half_rn((unsigned long long)v.u);
}

/* Through float, as ml_dtypes casts (float_cast). */
template <>
__device__ __nv_bfloat16
cast_value<__nv_bfloat16>(const any_value &v)
{
    return is_inexact(v) ? float_cast<__nv_bfloat16>(v.d)
           : __float2bfloat16_rn(v.kind == 'i' ? (float)v.i : (float)v.u);
}

template <>
__device__ numpy_bool
cast_value<numpy_bool>(const any_value &v)
{
    return numpy_bool{(unsigned char)(is_inexact(v)
                                          ? v.d != 0.0 || v.im != 0.0
                                          : v.u != 0)};
}

__device__ any_value
load_value(const void *p, cr_type type)
{
    switch (type) {
#define CR_LOAD_CASE(NAME, name, kind, bits, T, SUM_ACC, MINMAX_ACC, M,  \
                     PROD_ACC, ProdAcc)                                  \
    case CR_TYPE_##NAME:                                                 \
        return value_of(*static_cast<const T *>(p));
        CR_TYPES(CR_LOAD_CASE)
#undef CR_LOAD_CASE
    default:
        return any_value{};
    }
}

/* Casts v to `type`, stores it at p, and gives back what was stored. */
__device__ any_value
store_value(void *p, cr_type type, const any_value &v)
{
    switch (type) {
#define CR_STORE_CASE(NAME, name, kind, bits, T, SUM_ACC, MINMAX_ACC, M, \
                      PROD_ACC, ProdAcc)                                 \
    case CR_TYPE_##NAME: {                                               \
        T stored = cast_value<T>(v);                                     \
        *static_cast<T *>(p) = stored;                                   \
        return value_of(stored);                                         \
    }
        CR_TYPES(CR_STORE_CASE)
#undef CR_STORE_CASE
    default:
        return any_value{};
    }
}

/* A result's bytes, by value (a kernel argument): an accumulator, a
 * cr_indexed_result or a cr_counted_result, the largest. */
typedef struct {
    alignas(8) unsigned char bytes[sizeof(cr_indexed_result)];
} result_bytes;

/* How a result is finished (cr_request's steps, as the kernels read
 * them).  The stored value is the result's at `value_offset`, of type
 * `value_type` (an index operator's index; nanmean's sum; complex min's
 * value beside its index); with `none_if_nan`, the index is -1 where the
 * value beside it, of type `acc`, is NaN (every element was).  With
 * `divide`, the divide is by n, or with `counted` by the count beside the
 * sum. */
typedef struct {
    size_t value_offset;
    cr_type value_type;
    cr_type acc;
    int none_if_nan;
    int counted;
    cr_type reduced;
    int divide;
    cr_type result;
} finish_steps;

/* The result at `bytes`, of n elements, finished into `out`. */
__device__ void
finish(const unsigned char *bytes, const finish_steps &steps, int64_t n,
       void *out)
{
    any_value value = load_value(bytes + steps.value_offset,
                                 steps.value_type);
    if (steps.none_if_nan) {
        const any_value beside = load_value(
            bytes + offsetof(cr_indexed_result, value), steps.acc);
        if (beside.d != beside.d || beside.im != beside.im) {
            value = value_of((int64_t)-1);
        }
    }
    if (steps.counted) {
        memcpy(&n, bytes + offsetof(cr_counted_result, count), sizeof(n));
    }
    /* The value as the reduced type, then (a mean) the quotient. */
    uint64_t reduced_bits = 0;
    const any_value sum = store_value(&reduced_bits, steps.reduced, value);
    if (!steps.divide) {
        (void)store_value(out, steps.result, sum);
        return;
    }
    if (sum.kind == 'c') {
        /* NumPy's complex divide (Smith's) by n + 0j, in complex128: a
         * multiply by 1/n, and x * 0 kept, which makes the other part NaN
         * where one is NaN or infinite. */
        const double scale = 1.0 / (double)n;
        (void)store_value(out, steps.result,
                          value_of(complex_value<double>(
                              (sum.d + sum.im * 0.0) * scale,
                              (sum.im - sum.d * 0.0) * scale)));
        return;
    }
    const double numerator = sum.kind == 'f' ? sum.d
                             : sum.kind == 'i' ? (double)sum.i
                                               : (double)sum.u;
    (void)store_value(out, steps.result,
                      value_of(numerator / (double)n));
}

/* One result, in device memory at `device_value` or with that NULL in
 * `host_bytes`. */
__global__ void
store_result(const void *device_value, result_bytes host_bytes,
             finish_steps steps, int64_t n, void *out)
{
    finish(device_value != NULL
               ? static_cast<const unsigned char *>(device_value)
               : host_bytes.bytes,
           steps, n, out);
}

/* The results of `count` rows of n elements: row r's at values + its in
 * offset, finished into out + its out offset (geometry). */
__global__ void
store_results(const unsigned char *values, cr_rows_geometry geometry,
              int64_t count, finish_steps steps, int64_t n,
              unsigned char *out)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
         r < count; r += step) {
        int64_t in_offset, out_offset;
        row_offsets(geometry, r, &in_offset, &out_offset);
        finish(values + in_offset, steps, n, out + out_offset);
    }
}

/* store_results for the commonest steps, the types known at compile
 * time: a float accumulator's value (a sum) finished into a float
 * `Result` by finish_float, as finish does (its any_value path folds away
 * there).  finish with the types read at run time took about 160
 * instructions a result: 134 us to cast 2^24 float32 sums to float16
 * (docs/recorded/axis-dtypes-2026-11-27-h200.txt, item 6).  Where the
 * last pass along axes writes the out itself, it finishes so too
 * (rows.cuh's store_finished). */
template <class Acc, class Reduced, class Result>
__global__ void
store_float_results(const unsigned char *values, cr_rows_geometry geometry,
                    int64_t count, int divide, int64_t n, unsigned char *out)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
         r < count; r += step) {
        int64_t in_offset, out_offset;
        row_offsets(geometry, r, &in_offset, &out_offset);
        *reinterpret_cast<Result *>(out + out_offset) =
            finish_float<Acc, Reduced, Result>(
                *reinterpret_cast<const Acc *>(values + in_offset), divide,
                n);
    }
}

/* Calls f with a value of the float type `type` (float16, bfloat16,
 * float32, float64); false for any other type. */
template <class F>
static bool
with_float_type(cr_type type, F f)
{
    switch (type) {
    case CR_TYPE_FLOAT16:
        f(__half{});
        return true;
    case CR_TYPE_BFLOAT16:
        f(__nv_bfloat16{});
        return true;
    case CR_TYPE_FLOAT32:
        f(0.0f);
        return true;
    case CR_TYPE_FLOAT64:
        f(0.0);
        return true;
    default:
        return false;
    }
}

/* The request's finishing steps. */
static finish_steps
steps_of(const cr_request *request)
{
    const int indexed = cr_op_gives_index(request->op);
    finish_steps steps;
    steps.value_offset = cr_result_value_offset(request->acc, request->op);
    steps.value_type = cr_result_value_type(request->acc, request->op);
    steps.acc = request->acc;
    steps.none_if_nan = indexed && cr_op_skips_nan(request->op);
    steps.counted = cr_op_counts(request->op);
    steps.reduced = request->reduced;
    steps.divide = request->divide_by_n;
    steps.result = request->result;
    return steps;
}

int
cr_store_is_copy(const cr_request *request)
{
    return cr_result_size(request->acc, request->op)
               == cr_type_size(request->acc)
           && !request->divide_by_n && request->reduced == request->acc
           && request->result == request->acc;
}

cr_status
cr_store_result(const cr_request *request, const void *device_value,
                const void *host_value, cudaStream_t stream, cr_error *error)
{
    cr_status status = CR_OK;
    result_bytes host_bytes = {};
    if (device_value == NULL) {
        memcpy(host_bytes.bytes, host_value,
               cr_result_size(request->acc, request->op));
    }
    store_result<<<1, 1, 0, stream>>>(device_value, host_bytes,
                                      steps_of(request), request->n,
                                      request->out);
    CR_CHECK(cudaGetLastError());
done:
    return status;
}

cr_status
cr_store_results(const cr_request *request, const void *values,
                 const cr_rows_geometry *geometry, void *out,
                 cudaStream_t stream, cr_error *error)
{
    cr_status status = CR_OK;
    const int64_t count = request->rows->rows;
    int64_t blocks = (count + CR_ROWS_THREADS - 1) / CR_ROWS_THREADS;
    if (blocks > CR_ROWS_MAX_BLOCKS) {
        blocks = CR_ROWS_MAX_BLOCKS;
    }
    const finish_steps steps = steps_of(request);
    const unsigned char *in = static_cast<const unsigned char *>(values);
    unsigned char *to = static_cast<unsigned char *>(out);
    const int64_t n = request->rows->length;
    /* A sum or mean of floats: the steps' types at compile time. */
    const bool typed = steps.value_offset == 0 && !steps.none_if_nan
                       && !steps.counted && steps.value_type == steps.acc
                       && (steps.acc == CR_TYPE_FLOAT32
                           || steps.acc == CR_TYPE_FLOAT64)
                       && with_float_type(steps.reduced, [](auto) {})
                       && with_float_type(steps.result, [](auto) {});
    auto launch = [&](auto acc) {
        with_float_type(steps.reduced, [&](auto reduced) {
            with_float_type(steps.result, [&](auto result) {
                store_float_results<decltype(acc), decltype(reduced),
                                    decltype(result)>
                    <<<(unsigned int)blocks, CR_ROWS_THREADS, 0, stream>>>(
                        in, *geometry, count, steps.divide, n, to);
            });
        });
    };
    if (typed && steps.acc == CR_TYPE_FLOAT32) {
        launch(0.0f);
    }
    else if (typed) {
        launch(0.0);
    }
    else {
        store_results<<<(unsigned int)blocks, CR_ROWS_THREADS, 0,
                        stream>>>(in, *geometry, count, steps, n, to);
    }
    CR_CHECK(cudaGetLastError());
done:
    return status;
}
