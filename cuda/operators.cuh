/* operators.cuh: reduction operators, each an identity and a combine, and
 * the conversion of an element to the accumulator.
 *
 * Kernels are written once against this shape and instantiated per
 * (element type, accumulator, operator, block size).
 */
#ifndef CUDAREDUCE_OPERATORS_CUH
#define CUDAREDUCE_OPERATORS_CUH

#include <cuda_fp16.h>
#include <cuda/std/limits>

template <class Acc>
struct SumOp {
    __host__ __device__ static constexpr Acc identity() { return Acc(0); }
    __device__ Acc operator()(Acc a, Acc b) const { return a + b; }
};

/* Min and max propagate NaN as NumPy does: `b != b` is true only for a NaN
 * (and folds away for integers), and a NaN in `a` is kept because every
 * comparison with it is false. */
template <class Acc>
struct MinOp {
    __host__ __device__ static constexpr Acc identity()
    {
        return cuda::std::numeric_limits<Acc>::has_infinity
                   ? cuda::std::numeric_limits<Acc>::infinity()
                   : cuda::std::numeric_limits<Acc>::max();
    }
    __device__ Acc operator()(Acc a, Acc b) const
    {
        return (b < a || b != b) ? b : a;
    }
};

template <class Acc>
struct MaxOp {
    __host__ __device__ static constexpr Acc identity()
    {
        return cuda::std::numeric_limits<Acc>::has_infinity
                   ? -cuda::std::numeric_limits<Acc>::infinity()
                   : cuda::std::numeric_limits<Acc>::lowest();
    }
    __device__ Acc operator()(Acc a, Acc b) const
    {
        return (b > a || b != b) ? b : a;
    }
};

/* An element as the accumulator.  Integers into a 64-bit unsigned
 * accumulator wrap modulo 2^64 (sign-extended first), which is exactly
 * NumPy's wrapping integer sum, without signed-overflow undefined
 * behaviour.  __half has several conversion operators, so it goes through
 * float explicitly. */
template <class Acc, class T>
__device__ __forceinline__ Acc to_accumulator(T x)
{
    return Acc(x);
}

template <class Acc>
__device__ __forceinline__ Acc to_accumulator(__half x)
{
    return Acc(__half2float(x));
}

#endif /* CUDAREDUCE_OPERATORS_CUH */
