/* gather.cu: copies a device array into a contiguous buffer, so that the
 * ladder kernels (which read consecutive elements) serve every layout
 * unchanged, and casts it on the way where a reduction reads its elements
 * as another type (dispatch.cuh's cast pass).  A plain gather moves words
 * of the element's size, whatever they mean; a cast is instantiated per
 * (element type, target type). */
#include <cstdint>
#include <cstring>

#include "check.cuh"
#include "gather.cuh"
#include "kernels/casts.cuh"
#include "kernels/values.cuh"

/* The layout by value: kernel parameters live in constant memory. */
struct gather_layout {
    int ndim;
    int64_t shape[CR_MAX_DIMS];
    int64_t strides[CR_MAX_DIMS];
};

/* A plain gather's element: its bytes. */
struct copy_words {
    template <class Word>
    __device__ Word operator()(Word x) const { return x; }
};

/* A cast's element: NumPy's cast of its value, a NaN first replaced or
 * kept as the rule says (gather.cuh). */
template <class To>
struct cast_elements {
    cr_nan_rule nan;
    template <class From>
    __device__ To operator()(From x) const
    {
        auto value = plain_value(x);
        using Value = decltype(value);
        if constexpr (cuda::std::is_floating_point_v<Value>
                      || is_complex<Value>::value) {
            if (nan.replace && value != value) {
                value = Value(nan.value);
            }
            else if (nan.keep && value != value) {
                return numpy_cast<To>(value_limits<Value>::nan());
            }
        }
        return numpy_cast<To>(value);
    }
};

/* Element i of the output is the array's element of C-order index i of the
 * simplified layout, whose innermost dimension has the smallest stride:
 * consecutive threads read nearby addresses. */
template <class From, class To, class Convert>
__global__ void gather_strided(const unsigned char *base,
                               gather_layout layout, To *out, int64_t n,
                               Convert convert)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        int64_t rest = i;
        int64_t offset = 0;
        for (int d = layout.ndim - 1; d >= 0; d--) {
            offset += (rest % layout.shape[d]) * layout.strides[d];
            rest /= layout.shape[d];
        }
        out[i] = convert(*reinterpret_cast<const From *>(base + offset));
    }
}

/* The launch of one instance. */
template <class From, class To, class Convert>
static void
launch_gather(const unsigned char *base, const gather_layout &layout,
              void *out, int64_t n, Convert convert, cudaStream_t stream)
{
    const int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    if (blocks > 65536) {
        blocks = 65536;     /* the grid-stride loop covers the rest */
    }
    gather_strided<From, To, Convert>
        <<<(unsigned int)blocks, threads, 0, stream>>>(
            base, layout, static_cast<To *>(out), n, convert);
}

typedef void (*copy_launch)(const unsigned char *, const gather_layout &,
                            void *, int64_t, copy_words, cudaStream_t);

/* Plain gathers by element size. */
#define COPY_ROW(Word) {sizeof(Word), launch_gather<Word, Word, copy_words>}
static const struct {
    size_t size;
    copy_launch launch;
} copies[] = {COPY_ROW(uint8_t), COPY_ROW(uint16_t), COPY_ROW(uint32_t),
              COPY_ROW(uint64_t), COPY_ROW(uint4)};
#undef COPY_ROW

/* The types a cast pass converts into (cr_route's staged types): the
 * converts of NumPy's casts from floats to integers (int32, int64,
 * uint64), float16 and bfloat16, and the accumulators a dtype= asks for
 * (bool, float32, float64, complex64, complex128). */
#define CR_CAST_TARGETS(X, From, FROM)                                     \
    X(From, FROM, numpy_bool, BOOL)                                        \
    X(From, FROM, __half, FLOAT16)                                         \
    X(From, FROM, __nv_bfloat16, BFLOAT16)                                 \
    X(From, FROM, float, FLOAT32)                                          \
    X(From, FROM, double, FLOAT64)                                         \
    X(From, FROM, int32_t, INT32)                                          \
    X(From, FROM, int64_t, INT64)                                          \
    X(From, FROM, uint64_t, UINT64)                                        \
    X(From, FROM, complex_value<float>, COMPLEX64)                         \
    X(From, FROM, complex_value<double>, COMPLEX128)

typedef void (*cast_launch)(const unsigned char *, const gather_layout &,
                            void *, int64_t, cr_nan_rule, cudaStream_t);

/* A cast's launch, in the one signature of the table. */
template <class From, class To>
static void
launch_cast(const unsigned char *base, const gather_layout &layout,
            void *out, int64_t n, cr_nan_rule nan, cudaStream_t stream)
{
    launch_gather<From, To>(base, layout, out, n, cast_elements<To>{nan},
                            stream);
}

#define CAST_ROW(From, FROM, To, TO)                                       \
    {CR_TYPE_##FROM, CR_TYPE_##TO, launch_cast<From, To>},
#define CAST_ROWS(NAME, name, kind, bits, T, SUM_ACC, MINMAX_ACC, Minmax,  \
                  PROD_ACC, ProdAcc)                                       \
    CR_CAST_TARGETS(CAST_ROW, T, NAME)
static const struct {
    cr_type from;
    cr_type to;
    cast_launch launch;
} casts[] = {CR_TYPES(CAST_ROWS)};
#undef CAST_ROWS
#undef CAST_ROW

#define COUNT(table) (sizeof(table) / sizeof((table)[0]))

cr_status
cr_gather(const void *start, const cr_layout *layout, int64_t n,
          cr_type from, cr_type to, const cr_nan_rule *nan, void *out,
          cudaStream_t stream, cr_error *error)
{
    cr_status status = CR_OK;
    const size_t item = cr_type_size(from);
    const unsigned char *base = static_cast<const unsigned char *>(start);
    gather_layout by_value = {};

    if (layout != NULL) {
        by_value.ndim = layout->ndim;
        memcpy(by_value.shape, layout->shape, sizeof(by_value.shape));
        memcpy(by_value.strides, layout->strides, sizeof(by_value.strides));
    }
    else {
        by_value.ndim = 1;
        by_value.shape[0] = n;
        by_value.strides[0] = (int64_t)item;
    }
    if (n == 0) {
        goto done;
    }
    /* Kept NaNs stay NaN in a copy. */
    if (from == to && (nan == NULL || !nan->replace)) {
        for (size_t k = 0; k < COUNT(copies); k++) {
            if (item == copies[k].size) {
                copies[k].launch(base, by_value, out, n, copy_words{},
                                 stream);
                CR_CHECK(cudaGetLastError());
                goto done;
            }
        }
    }
    for (size_t k = 0; k < COUNT(casts); k++) {
        if (casts[k].from == from && casts[k].to == to) {
            casts[k].launch(base, by_value, out, n,
                            nan != NULL ? *nan : cr_nan_rule{}, stream);
            CR_CHECK(cudaGetLastError());
            goto done;
        }
    }
    status = cr_fail(error, CR_ERR_INVALID, "no gather from type %d to %d",
                     (int)from, (int)to);
done:
    return status;
}
