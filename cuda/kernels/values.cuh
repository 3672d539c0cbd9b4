/* values.cuh: the values the kernels read and keep beyond C's own types:
 * complex_value (NumPy's complex layout and order), value_limits (the ends
 * of an order, NaN and inf the operators need), numpy_bool (NumPy's bool
 * byte) and unsigned_of_size (an integer's bits as unsigned).
 *
 * Split from operators.cuh (its code unchanged): the accumulators that
 * carry an index or a count are results.cuh, the operators operators.cuh,
 * an element's conversions casts.cuh.
 */
#ifndef CUDAREDUCE_VALUES_CUH
#define CUDAREDUCE_VALUES_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/std/cstddef>
#include <cuda/std/cstdint>
#include <cuda/std/limits>
#include <cuda/std/type_traits>

/* A complex element or accumulator, as NumPy lays it out (real part,
 * imaginary part), with NumPy's arithmetic: the plain product formula,
 * and the order of its min, max, argmin and argmax, by real part, then
 * imaginary part (a NaN in either part is handled by the operators:
 * `x != x` says it).  Aligned to 8 bytes, complex128 too, so that beside
 * an int64 index or count (indexed, counted) it leaves no padding, whose
 * bytes the host would copy unwritten; device inputs are aligned to their
 * whole item size all the same (csrc/cuda_array_interface.c). */
template <class F>
struct alignas(8) complex_value {
    F re;
    F im;

    complex_value() = default;
    __host__ __device__ constexpr complex_value(F re_, F im_ = F(0))
        : re(re_), im(im_)
    {
    }
    /* complex64 into a complex128 accumulator. */
    template <class G>
    __host__ __device__ constexpr explicit complex_value(complex_value<G> z)
        : re(F(z.re)), im(F(z.im))
    {
    }
    /* NumPy's cast to bool (any, all): either part non-zero, NaN too. */
    __host__ __device__ constexpr explicit operator bool() const
    {
        return re != F(0) || im != F(0);
    }
};

template <class F>
__host__ __device__ constexpr complex_value<F>
operator+(complex_value<F> a, complex_value<F> b)
{
    return {a.re + b.re, a.im + b.im};
}

template <class F>
__host__ __device__ constexpr complex_value<F>
operator*(complex_value<F> a, complex_value<F> b)
{
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

template <class F>
__host__ __device__ constexpr bool
operator==(complex_value<F> a, complex_value<F> b)
{
    return a.re == b.re && a.im == b.im;
}

template <class F>
__host__ __device__ constexpr bool
operator!=(complex_value<F> a, complex_value<F> b)
{
    return !(a == b);
}

/* As between floats, no value with a NaN (in either part) is before or
 * after another: the operators' NaN rules decide those. */
template <class F>
__host__ __device__ constexpr bool
operator<(complex_value<F> a, complex_value<F> b)
{
    return a == a && b == b
           && (a.re < b.re || (a.re == b.re && a.im < b.im));
}

template <class F>
__host__ __device__ constexpr bool
operator>(complex_value<F> a, complex_value<F> b)
{
    return b < a;
}

template <class T>
struct is_complex : cuda::std::false_type {};
template <class F>
struct is_complex<complex_value<F>> : cuda::std::true_type {};

/* The values of V that the operators need: past either end of its order
 * (the identities of min and max), NaN, and +inf as NumPy puts it in
 * place of a NaN (numpy.nanargmin; -inf for nanargmax).  A complex
 * order's ends are infinite in both parts, past every element; its inf is
 * NumPy's complex(inf), inf + 0j. */
template <class V>
struct value_limits {
    using limits = cuda::std::numeric_limits<V>;
    __host__ __device__ static constexpr V greatest()
    {
        return limits::has_infinity ? limits::infinity() : limits::max();
    }
    __host__ __device__ static constexpr V least()
    {
        return limits::has_infinity ? -limits::infinity() : limits::lowest();
    }
    __host__ __device__ static constexpr V nan()
    {
        return limits::quiet_NaN();
    }
    __host__ __device__ static constexpr V infinity()
    {
        return limits::infinity();
    }
    __host__ __device__ static constexpr V minus_infinity()
    {
        return -limits::infinity();
    }
};

template <class F>
struct value_limits<complex_value<F>> {
    using limits = cuda::std::numeric_limits<F>;
    __host__ __device__ static constexpr complex_value<F> greatest()
    {
        return {limits::infinity(), limits::infinity()};
    }
    __host__ __device__ static constexpr complex_value<F> least()
    {
        return {-limits::infinity(), -limits::infinity()};
    }
    __host__ __device__ static constexpr complex_value<F> nan()
    {
        return {limits::quiet_NaN(), limits::quiet_NaN()};
    }
    __host__ __device__ static constexpr complex_value<F> infinity()
    {
        return {limits::infinity(), F(0)};
    }
    __host__ __device__ static constexpr complex_value<F> minus_infinity()
    {
        return {-limits::infinity(), F(0)};
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
 * skip_nan<T, Op> (casts.cuh): an element of a NaN-skipping sum or
 * product (numpy.nansum, nanprod), which becomes Op's identity where it is
 * NaN; same size and alignment as T. */
struct numpy_bool {
    unsigned char byte;
    /* For CUB, which hands elements to the operator as they are. */
    __host__ __device__ operator bool() const { return byte != 0; }
};

/* The unsigned integer of BITS bits: whether an element of bool or an
 * integer type of that size is zero is whether it is zero as this type
 * (instances.def: any and all). */
template <int BITS>
struct unsigned_of_size;
template <>
struct unsigned_of_size<8> { using type = uint8_t; };
template <>
struct unsigned_of_size<16> { using type = uint16_t; };
template <>
struct unsigned_of_size<32> { using type = uint32_t; };
template <>
struct unsigned_of_size<64> { using type = uint64_t; };
template <int BITS>
using unsigned_bits = typename unsigned_of_size<BITS>::type;

#endif /* CUDAREDUCE_VALUES_CUH */
