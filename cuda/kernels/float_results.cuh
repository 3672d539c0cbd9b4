/* float_results.cuh: a float sum's accumulator finished as NumPy finishes
 * it (finish_float): cast to the reduced dtype, for a mean divided by the
 * count in double (`ret / rcount`), cast to the result dtype.  The store
 * pass (store.cu) and the last pass along axes (rows.cuh, where it writes
 * a device out) both finish so, and give the same bits.
 */
#ifndef CUDAREDUCE_FLOAT_RESULTS_CUH
#define CUDAREDUCE_FLOAT_RESULTS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/std/cstdint>
#include <cuda/std/type_traits>

/* float16, bfloat16, float32 and float64: the dtypes finish_float takes. */
template <class F>
inline constexpr bool is_float_dtype =
    cuda::std::is_floating_point_v<F> || cuda::std::is_same_v<F, __half>
    || cuda::std::is_same_v<F, __nv_bfloat16>;

/* x, exactly. */
template <class F>
__device__ __forceinline__ double float_value(F x)
{
    if constexpr (cuda::std::is_same_v<F, __half>) {
        return (double)__half2float(x);
    }
    else if constexpr (cuda::std::is_same_v<F, __nv_bfloat16>) {
        return (double)__bfloat162float(x);
    }
    else {
        return (double)x;
    }
}

/* NumPy's cast of a double to F: float16 rounded once; bfloat16 through
 * float, as ml_dtypes casts (2^24 + 2^16 + 1 becomes 2^24). */
template <class F>
__device__ __forceinline__ F float_cast(double d)
{
    if constexpr (cuda::std::is_same_v<F, __half>) {
        return __double2half(d);
    }
    else if constexpr (cuda::std::is_same_v<F, __nv_bfloat16>) {
        return __float2bfloat16_rn((float)d);
    }
    else {
        return (F)d;
    }
}

/* A float sum's accumulator v cast to Reduced, then for a mean (divide)
 * divided by n in double, and cast to Result. */
template <class Acc, class Reduced, class Result>
__device__ __forceinline__ Result finish_float(Acc v, int divide, int64_t n)
{
    const double sum = float_value(float_cast<Reduced>(float_value(v)));
    return float_cast<Result>(divide ? sum / (double)n : sum);
}

#endif /* CUDAREDUCE_FLOAT_RESULTS_CUH */
