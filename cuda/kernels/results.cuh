/* results.cuh: the accumulators that carry more than a value, laid out as
 * cudareduce.h's results the host copies whole: indexed (a value beside
 * its index: argmin, argmax, complex min and max), counted (nanmean's sum
 * beside its count), the zero_fill that leaves them no padding, and
 * is_indexed, is_counted.
 */
#ifndef CUDAREDUCE_RESULTS_CUH
#define CUDAREDUCE_RESULTS_CUH

#include <cuda/std/cstddef>
#include <cuda/std/cstdint>
#include <cuda/std/type_traits>

#include "cudareduce.h"
#include "kernels/values.cuh"

/* The zero bytes after a value of V beside a wider word of W (an index,
 * a count), where the compiler would leave padding.  The host copies a
 * result whole, so none of its bytes may be padding that no store writes:
 * CUB's kernels, fast and fold_partials stored a float sum and its count
 * as two fields, and compute-sanitizer's initcheck reported the 4 bytes
 * between unwritten.  The constructors
 * write these zeros, so every store covers the whole accumulator.
 *
 * Each accumulator below takes them in a partial specialisation for a
 * narrow V.  An empty [[no_unique_address]] member for a wide V would
 * have served both in one template, but nvcc 13.0's device code does not
 * honour it: PTX gave indexed<double> a 32-byte stride while sizeof said
 * 16, and the GPU suite faulted
 * (docs/recorded/complex-2026-11-26-h100.txt). */
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

#endif /* CUDAREDUCE_RESULTS_CUH */
