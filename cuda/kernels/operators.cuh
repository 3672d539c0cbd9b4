/* operators.cuh: reduction operators, each an identity and a combine
 * (the index operators' combine a choice between two indexed values).
 *
 * Kernels are written once against this shape and instantiated per
 * (element type, accumulator, operator, block size).  The values they
 * combine are values.cuh's and results.cuh's; an element becomes an
 * accumulator in casts.cuh.
 */
#ifndef CUDAREDUCE_OPERATORS_CUH
#define CUDAREDUCE_OPERATORS_CUH

#include <cuda/std/cstdint>
#include <cuda/std/limits>

#include "kernels/results.cuh"
#include "kernels/values.cuh"

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

/* argmin and argmax; the index operators (those and their NaN-skipping
 * forms). */
template <class Op>
struct is_arg_extreme : cuda::std::false_type {};
template <class V, bool MAX>
struct is_arg_extreme<ArgExtremeOp<V, MAX>> : cuda::std::true_type {};
template <class Op>
struct is_index_operator : is_arg_extreme<Op> {};
template <class V, bool MAX>
struct is_index_operator<NanArgExtremeOp<V, MAX>> : cuda::std::true_type {};

/* Whether Op's results over Acc are the same bits in any order of
 * combining: an index operator's (a total order of value and index), an
 * integer's or bool's (exact, or wrapping modulo 2^64); not a float's
 * (rounding, a zero's sign, a NaN's payload).  Along axes their rows'
 * chunks follow the shape (rows_plan.c). */
template <class Acc, class Op>
inline constexpr bool any_order =
    is_index_operator<Op>::value || cuda::std::is_integral_v<Acc>;

#endif /* CUDAREDUCE_OPERATORS_CUH */
