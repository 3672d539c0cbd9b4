/* operators.cuh: reduction operators, each an identity and a combine, and
 * the conversion of an element to the accumulator.
 *
 * Kernels are written once against this shape and instantiated per
 * (element type, accumulator, operator, block size).
 */
#ifndef CUDAREDUCE_OPERATORS_CUH
#define CUDAREDUCE_OPERATORS_CUH

#include <cuda_fp16.h>
#include <cuda/std/cstdint>
#include <cuda/std/limits>
#include <cuda/std/type_traits>

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

template <class Acc>
struct ProdOp {
    __host__ __device__ static constexpr Acc identity() { return Acc(1); }
    __device__ Acc operator()(Acc a, Acc b) const { return a * b; }
};

/* NaN-skipping min and max (floats only): NaN is the identity, so a NaN
 * on either side gives the other, and only an all-NaN input gives NaN,
 * which is what numpy.nanmin and nanmax return (with a warning) there. */
template <class Acc>
struct NanMinOp {
    __host__ __device__ static constexpr Acc identity()
    {
        return cuda::std::numeric_limits<Acc>::quiet_NaN();
    }
    __device__ Acc operator()(Acc a, Acc b) const
    {
        return (b < a || a != a) ? b : a;
    }
};

template <class Acc>
struct NanMaxOp {
    __host__ __device__ static constexpr Acc identity()
    {
        return cuda::std::numeric_limits<Acc>::quiet_NaN();
    }
    __device__ Acc operator()(Acc a, Acc b) const
    {
        return (b > a || a != a) ? b : a;
    }
};

/* Elements as the kernels read them.  Most are the C type of their NumPy
 * dtype; two are views of the same bytes that say how an element becomes
 * a value:
 *
 * numpy_bool: NumPy's bool is one byte, and any non-zero byte is True
 * (NumPy's own TestBool::test_sum sums 0xff bytes to their count).  A C++
 * bool may only hold 0 or 1, so reading such bytes as bool is undefined
 * (the sum came out -200 for 200 bytes of 0xff).
 *
 * skip_nan<T, Op>: an element of a NaN-skipping sum or product (numpy.
 * nansum, nanprod), which becomes Op's identity where it is NaN; same size
 * and alignment as T. */
struct numpy_bool {
    unsigned char byte;
    /* For CUB, which hands elements to the operator as they are. */
    __host__ __device__ operator bool() const { return byte != 0; }
};

/* An element as the accumulator.  Integers into a 64-bit unsigned
 * accumulator wrap modulo 2^64 (sign-extended first), which is exactly
 * NumPy's wrapping integer sum and product, without signed-overflow
 * undefined behaviour.  __half has several conversion operators, so it
 * goes through float explicitly. */
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

/* An element as a plain C value: numpy_bool as 0 or 1, __half as float. */
template <class T>
__device__ __forceinline__ T plain_value(T x)
{
    return x;
}

__device__ __forceinline__ float plain_value(__half x)
{
    return __half2float(x);
}

__device__ __forceinline__ unsigned char plain_value(numpy_bool x)
{
    return x.byte != 0;
}

/* numpy_cast<To>(x): the plain value x as NumPy casts it to To. */
template <class To, class T>
__device__ __forceinline__ To numpy_cast(T x)
{
    constexpr bool from_float = cuda::std::is_floating_point_v<T>;
    if constexpr (cuda::std::is_same_v<To, numpy_bool>) {
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

#endif /* CUDAREDUCE_OPERATORS_CUH */
