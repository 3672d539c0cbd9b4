/* operators.cuh: reduction operators, each an identity and a combine, and
 * the conversion of an element to the accumulator.
 *
 * Kernels are written once against this shape and instantiated per
 * (element type, accumulator, operator, block size).
 */
#ifndef CUDAREDUCE_OPERATORS_CUH
#define CUDAREDUCE_OPERATORS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/std/cstddef>
#include <cuda/std/cstdint>
#include <cuda/std/limits>
#include <cuda/std/type_traits>

#include "cudareduce.h"

/* A complex element or accumulator, as NumPy lays it out (real part,
 * imaginary part), with NumPy's arithmetic: the plain product formula,
 * and the order of its min, max, argmin and argmax, by real part, then
 * imaginary part (a NaN in either part is handled by the operators:
 * `x != x` says it).  Aligned to 8 bytes, complex128 too, so that beside
 * an int64 index or count (indexed, counted) it leaves no padding, whose
 * bytes the host would copy unwritten; device inputs are aligned to their
 * whole item size all the same (csrc/input.c). */
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
        return value_limits<Acc>::greatest();
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
        return value_limits<Acc>::least();
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
        return value_limits<Acc>::nan();
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
        return value_limits<Acc>::nan();
    }
    __device__ Acc operator()(Acc a, Acc b) const
    {
        return (b > a || a != a) ? b : a;
    }
};

/* The zero bytes after a value of V beside a wider word of W (an index,
 * a count), where the compiler would leave padding.  The host copies a
 * result whole, so none of its bytes may be padding that no store writes:
 * CUB's kernels, fast and fold_partials stored a float sum and its count
 * as two fields, and compute-sanitizer's initcheck reported the 4 bytes
 * between unwritten (12 errors, H100, 2026-11-24).  The constructors
 * write these zeros, so every store covers the whole accumulator.
 *
 * Each accumulator below takes them in a partial specialisation for a
 * narrow V.  An empty [[no_unique_address]] member for a wide V would
 * have served both in one template, but nvcc 13.0's device code does not
 * honour it: PTX gave indexed<double> a 32-byte stride while sizeof said
 * 16, and the GPU suite faulted (1731 failures, H100, 2026-11-26). */
template <class V, class W>
struct zero_fill {
    unsigned char bytes[sizeof(W) - sizeof(V)];
};

/* The accumulator of argmin and argmax (and of complex min and max): an
 * element's value beside its C-order index, laid out as cudareduce.h's
 * cr_indexed_result, as long as cr_result_size says: the value padded to
 * 8 bytes.  (An int index serves positions inside one vector load:
 * fast.cuh.) */
template <class V, class I = int64_t, bool NARROW = (sizeof(V) < sizeof(I))>
struct indexed {
    I index;
    V value;

    indexed() = default;
    __host__ __device__ constexpr indexed(I index_, V value_)
        : index(index_), value(value_)
    {
    }
};

template <class V, class I>
struct indexed<V, I, true> {
    I index;
    V value;
    zero_fill<V, I> zero;

    indexed() = default;
    __host__ __device__ constexpr indexed(I index_, V value_)
        : index(index_), value(value_), zero{}
    {
    }
};

/* The narrowest, a real and the widest value it holds. */
static_assert(sizeof(indexed<bool>) == 16 && sizeof(indexed<double>) == 16
              && sizeof(indexed<complex_value<double>>) == 24
              && offsetof(indexed<bool>, value)
                     == offsetof(cr_indexed_result, value)
              && offsetof(indexed<complex_value<double>>, value)
                     == offsetof(cr_indexed_result, value)
              && sizeof(indexed<complex_value<double>>)
                     <= sizeof(cr_indexed_result),
              "indexed<V> is laid out as cr_indexed_result");

template <class Acc>
struct is_indexed : cuda::std::false_type {};
template <class V, class I, bool NARROW>
struct is_indexed<indexed<V, I, NARROW>> : cuda::std::true_type {};

/* An index operator's combine, from Choice::choose(a, b, b_after):
 * operator() for any two accumulators, later(a, b) where every index of
 * b is past a's (and a is not the identity), so that a tie keeps a with
 * no index compared. */
template <class Choice, class V>
struct choosing {
    __device__ indexed<V> operator()(indexed<V> a, indexed<V> b) const
    {
        return Choice::choose(a, b, false);
    }
    template <class I>
    __device__ indexed<V, I> later(indexed<V, I> a, indexed<V, I> b) const
    {
        return Choice::choose(a, b, true);
    }
};

/* numpy.argmin and argmax: the extreme's first index, a NaN the extreme
 * of all (the first NaN's).  Elements are ordered by (NaN first, value,
 * index), a total order, so that any order of combining gives NumPy's
 * answer; the identity's index, past every element's, loses every tie. */
template <class V, bool MAX>
struct ArgExtremeOp : choosing<ArgExtremeOp<V, MAX>, V> {
    __host__ __device__ static constexpr indexed<V> identity()
    {
        return {cuda::std::numeric_limits<int64_t>::max(),
                MAX ? MaxOp<V>::identity() : MinOp<V>::identity()};
    }
    template <class I>
    __device__ static indexed<V, I> choose(indexed<V, I> a, indexed<V, I> b,
                                           bool b_after)
    {
        const bool a_nan = a.value != a.value;
        const bool b_nan = b.value != b.value;
        const bool b_beyond = (b_nan && !a_nan)
            || (MAX ? b.value > a.value : b.value < a.value);
        const bool level = a_nan == b_nan && (a_nan || a.value == b.value);
        const bool b_first =
            b_beyond || (!b_after && level && b.index < a.index);
        return b_first ? b : a;
    }
};

/* numpy.nanargmin and nanargmax, which replace NaN by +inf (-inf) and
 * take argmin (argmax): [nan, inf] gives 0.  The value kept is NaN only
 * where both sides' are, so that a result whose value is NaN says every
 * element was (NumPy's "All-NaN slice encountered"): a NaN that wins a
 * tie against a number takes its value (+inf), and of two NaNs the first
 * keeps its own, so that an all-NaN complex nanmin or nanmax is the first
 * element itself, as NumPy's is. */
template <class V, bool MAX>
struct NanArgExtremeOp : choosing<NanArgExtremeOp<V, MAX>, V> {
    __host__ __device__ static constexpr indexed<V> identity()
    {
        return {cuda::std::numeric_limits<int64_t>::max(),
                value_limits<V>::nan()};
    }
    template <class I>
    __device__ static indexed<V, I> choose(indexed<V, I> a, indexed<V, I> b,
                                           bool b_after)
    {
        constexpr V nan_as = MAX ? value_limits<V>::minus_infinity()
                                 : value_limits<V>::infinity();
        const V a_key = a.value != a.value ? nan_as : a.value;
        const V b_key = b.value != b.value ? nan_as : b.value;
        const bool b_beyond = MAX ? b_key > a_key : b_key < a_key;
        const bool b_first =
            b_beyond || (!b_after && b_key == a_key && b.index < a.index);
        indexed<V, I> winner = b_first ? b : a;
        const V other = b_first ? a.value : b.value;
        if (winner.value != winner.value && other == other) {
            winner.value = other;
        }
        return winner;
    }
};

/* The accumulator of numpy.nanmean: the count of the non-NaN elements
 * and their sum, laid out as cudareduce.h's cr_counted_result, as long as
 * cr_result_size says (the count first: the sum is 4 to 16 bytes). */
template <class V, bool NARROW = (sizeof(V) < sizeof(int64_t))>
struct counted {
    int64_t count;
    V sum;

    counted() = default;
    __host__ __device__ constexpr counted(V sum_, int64_t count_)
        : count(count_), sum(sum_)
    {
    }
};

template <class V>
struct counted<V, true> {
    int64_t count;
    V sum;
    zero_fill<V, int64_t> zero;

    counted() = default;
    __host__ __device__ constexpr counted(V sum_, int64_t count_)
        : count(count_), sum(sum_), zero{}
    {
    }
};

static_assert(sizeof(counted<float>) == 16 && sizeof(counted<double>) == 16
              && sizeof(counted<complex_value<double>>) == 24
              && offsetof(counted<float>, sum)
                     == offsetof(cr_counted_result, sum)
              && offsetof(counted<complex_value<double>>, sum)
                     == offsetof(cr_counted_result, sum)
              && sizeof(counted<complex_value<double>>)
                     <= sizeof(cr_counted_result),
              "counted<V> is laid out as cr_counted_result");

template <class Acc>
struct is_counted : cuda::std::false_type {};
template <class V, bool NARROW>
struct is_counted<counted<V, NARROW>> : cuda::std::true_type {};

template <class V>
struct NanMeanOp {
    __host__ __device__ static constexpr counted<V> identity()
    {
        return {V(0), 0};
    }
    __device__ counted<V> operator()(counted<V> a, counted<V> b) const
    {
        return {a.sum + b.sum, a.count + b.count};
    }
};

template <class V>
using ArgMinOp = ArgExtremeOp<V, false>;
template <class V>
using ArgMaxOp = ArgExtremeOp<V, true>;
template <class V>
using NanArgMinOp = NanArgExtremeOp<V, false>;
template <class V>
using NanArgMaxOp = NanArgExtremeOp<V, true>;

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

#endif /* CUDAREDUCE_OPERATORS_CUH */
