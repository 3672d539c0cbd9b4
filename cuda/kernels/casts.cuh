/* casts.cuh: an element as the kernels load it: to_accumulator (an element
 * as the accumulator, NaN-skipping elements, an index or a count beside
 * it) and rebased, and NumPy's casts between the dtypes (numpy_cast, with
 * x86-64's float-to-integer converts) for the cast pass (gather.cu).
 */
#ifndef CUDAREDUCE_CASTS_CUH
#define CUDAREDUCE_CASTS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/std/cstdint>
#include <cuda/std/limits>
#include <cuda/std/type_traits>

#include "kernels/results.cuh"
#include "kernels/values.cuh"

/* An element as the accumulator.  Integers into a 64-bit unsigned
 * accumulator wrap modulo 2^64 (sign-extended first), which is exactly
 * NumPy's wrapping integer sum and product, without signed-overflow
 * undefined behaviour.  __half and __nv_bfloat16 have several conversion
 * operators, so they go through float explicitly. */
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

template <class Acc>
__device__ __forceinline__ Acc to_accumulator(__nv_bfloat16 x)
{
    return Acc(__bfloat162float(x));
}

template <class Acc>
__device__ __forceinline__ Acc to_accumulator(numpy_bool x)
{
    return Acc(x.byte != 0);
}

template <class T, class Op>
struct skip_nan {
    using Acc = decltype(Op::identity());
    T value;
    /* For CUB, as numpy_bool's. */
    __device__ operator Acc() const
    {
        const Acc v = to_accumulator<Acc>(value);
        return v != v ? Op::identity() : v;
    }
};

template <class Acc, class T, class Op>
__device__ __forceinline__ Acc to_accumulator(skip_nan<T, Op> x)
{
    return Acc(x);
}

/* The element of C-order index `index` (in the input the kernel reads) as
 * the accumulator: its value, with its index where the accumulator keeps
 * one, or counted (0 and 0 for a NaN) where it counts, unless the element
 * is an accumulator already (a partial of an earlier pass, which carries
 * its own). */
template <class Acc, class T>
__device__ __forceinline__ Acc to_accumulator(T x, int64_t index)
{
    if constexpr (cuda::std::is_same_v<T, Acc>) {
        return x;
    }
    else if constexpr (is_indexed<Acc>::value) {
        return Acc{index, to_accumulator<decltype(Acc::value)>(x)};
    }
    else if constexpr (is_counted<Acc>::value) {
        const auto v = to_accumulator<decltype(Acc::sum)>(x);
        const bool number = v == v;
        return Acc{number ? v : decltype(v)(0), number};
    }
    else {
        return to_accumulator<Acc>(x);
    }
}

/* A partial whose indices count from `base` elements into the array (a
 * chunk's, a slice's), with its index counted from the array's start. */
template <class Acc>
__device__ __forceinline__ Acc rebased(Acc x, int64_t base)
{
    if constexpr (is_indexed<Acc>::value) {
        x.index += base;
    }
    return x;
}

/* skip_nan<T, Op> with a single comma-free name, for instances.def's
 * macro rows: skipping_nan<Op>::element<T>. */
template <class Op>
struct skipping_nan {
    template <class T>
    using element = skip_nan<T, Op>;
};

/* NumPy's C casts of a float to an integer, as x86-64 computes them (the
 * machines NumPy's answers are taken from): the convert instruction
 * truncates toward zero and gives the "integer indefinite" value, the
 * lowest one, for NaN and anything outside its range.  NumPy casts to
 * int8..int32 and uint8/uint16 through a 32-bit convert (then keeps the
 * low bits), to uint32 and int64 through a 64-bit one, and to uint64 by
 * subtracting 2^63 first from values at or above it.  Inside the target
 * type's range every platform agrees; outside it, C leaves the cast
 * undefined and NumPy's answer is x86's. */
template <class I, class F>
__device__ __forceinline__ I convert_truncating(F x)
{
    /* -2^(bits-1), exact in float and double. */
    constexpr F low = F(cuda::std::numeric_limits<I>::min());
    if (x >= low && x < -low) {
        return static_cast<I>(x);
    }
    return cuda::std::numeric_limits<I>::min();
}

template <class F>
__device__ __forceinline__ uint64_t convert_to_uint64(F x)
{
    constexpr F two_63 = F(9223372036854775808.0);
    if (x >= two_63) {
        return static_cast<uint64_t>(convert_truncating<int64_t>(x - two_63))
               ^ (uint64_t(1) << 63);
    }
    return static_cast<uint64_t>(convert_truncating<int64_t>(x));
}

/* An element as a plain C value: numpy_bool as 0 or 1, __half and
 * __nv_bfloat16 as float. */
template <class T>
__device__ __forceinline__ T plain_value(T x)
{
    return x;
}

__device__ __forceinline__ float plain_value(__half x)
{
    return __half2float(x);
}

__device__ __forceinline__ float plain_value(__nv_bfloat16 x)
{
    return __bfloat162float(x);
}

__device__ __forceinline__ unsigned char plain_value(numpy_bool x)
{
    return x.byte != 0;
}

/* numpy_cast<To>(x): the plain value x as NumPy casts it to To.  Into a
 * complex type each part as into its real type (a real x is the real
 * part); from a complex x into a real type, its real part (NumPy warns,
 * csrc/). */
template <class To, class T>
__device__ __forceinline__ To numpy_cast(T x)
{
    constexpr bool from_float = cuda::std::is_floating_point_v<T>;
    if constexpr (is_complex<To>::value) {
        using Part = decltype(To::re);
        if constexpr (is_complex<T>::value) {
            return To(numpy_cast<Part>(x.re), numpy_cast<Part>(x.im));
        }
        else {
            return To(numpy_cast<Part>(x), Part(0));
        }
    }
    else if constexpr (is_complex<T>::value) {
        if constexpr (cuda::std::is_same_v<To, numpy_bool>) {
            return numpy_bool{static_cast<unsigned char>(bool(x))};
        }
        else {
            return numpy_cast<To>(x.re);
        }
    }
    else if constexpr (cuda::std::is_same_v<To, numpy_bool>) {
        return numpy_bool{static_cast<unsigned char>(x != T(0))};
    }
    else if constexpr (cuda::std::is_same_v<To, __half>) {
        /* float -> float16 rounds once; every integer that float16 can
         * hold is exact in float, and a larger one overflows either way,
         * so converting through float rounds once too. */
        if constexpr (cuda::std::is_same_v<T, double>) {
            return __double2half(x);
        }
        else {
            return __float2half_rn(static_cast<float>(x));
        }
    }
    else if constexpr (cuda::std::is_same_v<To, __nv_bfloat16>) {
        /* Through float, from double too: ml_dtypes casts so (1 + 2^-8 +
         * 2^-30 becomes 1, not the nearer 1 + 2^-7). */
        return __float2bfloat16_rn(static_cast<float>(x));
    }
    else if constexpr (from_float && cuda::std::is_same_v<To, uint64_t>) {
        return convert_to_uint64(x);
    }
    else if constexpr (from_float && cuda::std::is_integral_v<To>) {
        return convert_truncating<To>(x);
    }
    else {
        return static_cast<To>(x);
    }
}

#endif /* CUDAREDUCE_CASTS_CUH */
