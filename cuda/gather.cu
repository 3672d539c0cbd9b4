/* gather.cu: copies a strided device array into a contiguous buffer, so
 * that the ladder kernels (which read consecutive elements) serve every
 * layout unchanged.  Templated on the element's size alone: a gather moves
 * bytes, whatever they mean. */
#include <cstdint>
#include <cstring>

#include "check.cuh"
#include "gather.cuh"

/* The layout by value: kernel parameters live in constant memory. */
struct gather_layout {
    int ndim;
    int64_t shape[CR_MAX_DIMS];
    int64_t strides[CR_MAX_DIMS];
};

/* Element i of the output is the array's element of C-order index i of the
 * simplified layout, whose innermost dimension has the smallest stride:
 * consecutive threads read nearby addresses. */
template <class Word>
__global__ void gather_strided(const unsigned char *base,
                               gather_layout layout, Word *out, int64_t n)
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
        out[i] = *reinterpret_cast<const Word *>(base + offset);
    }
}

/* The launch for one element size. */
template <class Word>
static void
launch_gather(const unsigned char *base, const gather_layout &layout,
              void *out, int64_t n, cudaStream_t stream)
{
    const int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    if (blocks > 65536) {
        blocks = 65536;     /* the grid-stride loop covers the rest */
    }
    gather_strided<Word><<<(unsigned int)blocks, threads, 0, stream>>>(
        base, layout, static_cast<Word *>(out), n);
}

/* The launches by element size: a gather moves words, whatever they mean. */
#define GATHER_ROW(Word) {sizeof(Word), launch_gather<Word>}
static const struct {
    size_t size;
    void (*launch)(const unsigned char *, const gather_layout &, void *,
                   int64_t, cudaStream_t);
} gathers[] = {GATHER_ROW(uint8_t), GATHER_ROW(uint16_t),
               GATHER_ROW(uint32_t), GATHER_ROW(uint64_t)};
#undef GATHER_ROW
#define GATHER_SIZES (sizeof(gathers) / sizeof(gathers[0]))

cr_status
cr_gather(const void *start, const cr_layout *layout, size_t itemsize,
          void *out, cudaStream_t stream, cr_error *error)
{
    cr_status status = CR_OK;
    gather_layout by_value;
    const unsigned char *base = static_cast<const unsigned char *>(start);

    by_value.ndim = layout->ndim;
    memcpy(by_value.shape, layout->shape, sizeof(by_value.shape));
    memcpy(by_value.strides, layout->strides, sizeof(by_value.strides));
    for (size_t k = 0; k < GATHER_SIZES; k++) {
        if (itemsize == gathers[k].size) {
            gathers[k].launch(base, by_value, out, layout->n, stream);
            CR_CHECK(cudaGetLastError());
            goto done;
        }
    }
    status = cr_fail(error, CR_ERR_INVALID, "no gather for %zu-byte elements",
                     itemsize);
done:
    return status;
}
