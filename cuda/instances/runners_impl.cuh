/* runners_impl.cuh: the definitions of run_passes, run_fast, run_cub,
 * run_fold and run_rows (declared in runners.cuh), instantiated for the
 * rows of instances.def.  Included by instances.cu only, which is
 * compiled once per unit of instances.def with CR_UNIT defined: the rows
 * it compiles.
 */
#ifndef CUDAREDUCE_RUNNERS_IMPL_CUH
#define CUDAREDUCE_RUNNERS_IMPL_CUH

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "dependent_launch.cuh"
#include "kernels/fast.cuh"
#include "kernels/ladder.cuh"
#include "kernels/rows.cuh"
#include "kernels/rows_columns.cuh"
#include "kernels/rows_short.cuh"
#include "kernels/rows_staged.cuh"
#include "runners.cuh"

template <class T, class Acc>
using kernel_fn = void (*)(const T *, Acc *, int64_t);

/* Whether a row compiled as INSTANCES (instances.def) has the instance
 * at block size BLOCK of a kernel that takes the block size as a
 * template parameter: a row compiled once has the default size's only. */
template <cr_instances INSTANCES, unsigned int BLOCK>
inline constexpr bool has_block_size =
    INSTANCES == CR_EVERY_BLOCK_SIZE || BLOCK == CR_DEFAULT_THREADS;

/* Kernel template k at block size BLOCK as a `fn`, where the row has it,
 * else null: a request for that size is refused before any launch
 * (cr_method_takes_threads), and k is not instantiated there. */
#define CR_SIZED_KERNEL(fn, BLOCK, k, ...)                                 \
    [] {                                                                   \
        if constexpr (has_block_size<INSTANCES, BLOCK>) {                  \
            return static_cast<fn>(k<BLOCK, __VA_ARGS__>);                 \
        }                                                                  \
        else {                                                             \
            return static_cast<fn>(nullptr);                               \
        }                                                                  \
    }()

/* The instances of kernel template k for each block size, in
 * block_size_index order; the other template arguments follow. */
#define CR_PER_BLOCK_SIZE(fn, k, ...)                                      \
    {CR_SIZED_KERNEL(fn, 64, k, __VA_ARGS__),                              \
     CR_SIZED_KERNEL(fn, 128, k, __VA_ARGS__),                             \
     CR_SIZED_KERNEL(fn, 256, k, __VA_ARGS__),                             \
     CR_SIZED_KERNEL(fn, 512, k, __VA_ARGS__),                             \
     CR_SIZED_KERNEL(fn, 1024, k, __VA_ARGS__)}

static int
block_size_index(int threads)
{
    int index = 0;
    while ((CR_MIN_THREADS << index) < threads) {
        index++;
    }
    return index;
}

/* [ladder method][block size] -> kernel, from methods.def's ladder rows:
 * a kernel that reads blockDim serves every block size with one instance
 * (ANY_BLOCK_SIZE), one that takes it as a template has one per size of
 * the row (PER_BLOCK_SIZE). */
template <class T, class Acc, class Op, cr_instances INSTANCES>
struct kernel_table {
    using fn = kernel_fn<T, Acc>;
#define CR_KERNELS_ANY_BLOCK_SIZE(k)                                       \
    {k<T, Acc, Op>, k<T, Acc, Op>, k<T, Acc, Op>, k<T, Acc, Op>,          \
     k<T, Acc, Op>}
#define CR_KERNELS_PER_BLOCK_SIZE(k)                                       \
    CR_PER_BLOCK_SIZE(fn, k, T, Acc, Op)
#define CR_KERNEL_ROW(NAME, name, BLOCK, elements, grid_stride,            \
                      single_pass, description)                           \
    CR_KERNELS_##BLOCK(reduce_##name),
    static constexpr fn kernels[CR_LADDER_COUNT][CR_BLOCK_SIZE_COUNT] = {
        CR_LADDER_METHODS(CR_KERNEL_ROW)
    };
#undef CR_KERNELS_ANY_BLOCK_SIZE
#undef CR_KERNELS_PER_BLOCK_SIZE
#undef CR_KERNEL_ROW
};

/* The partials of a launch that read the input from element `base` on:
 * an index they hold counts from there, and is made the input's. */
template <class Acc>
__global__ void rebase_partials(Acc *partials, int64_t count, int64_t base)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
         k < count; k += step) {
        partials[k] = rebased(partials[k], base);
    }
}

/* Launches one pass.  A grid is at most 2^31 - 1 blocks wide; a wider pass
 * (only steps 1-6 on > 2^37 elements) is cut into launches, each seeing
 * its slice of the input and of the output (argmin's indices then count
 * from the slice's start, and are rebased). */
template <class T, class Acc, class Op, cr_instances INSTANCES>
static cr_status
launch_pass(cr_method method, const cr_pass *pass, const T *in, Acc *out,
            cudaStream_t stream, cr_error *error)
{
    cr_status status = CR_OK;
    kernel_fn<T, Acc> kernel = kernel_table<T, Acc, Op, INSTANCES>::kernels
        [method][block_size_index(pass->threads)];
    if (kernel == NULL) {
        return cr_fail(error, CR_ERR_INVALID, "no kernel at %d threads per "
                       "block", pass->threads);
    }
    const int64_t per_block =
        (int64_t)pass->threads
        * cr_method_elements_per_thread(method, sizeof(T));
    for (int64_t first = 0; first < pass->blocks; first += INT_MAX) {
        int64_t grid = pass->blocks - first;
        if (grid > INT_MAX) {
            grid = INT_MAX;
        }
        const int64_t offset = first * per_block;
        kernel<<<(unsigned int)grid, pass->threads, pass->shared_bytes,
                 stream>>>(in + offset, out + first, pass->n_in - offset);
        CR_CHECK(cudaGetLastError());
        if constexpr (is_indexed<Acc>::value
                      && !cuda::std::is_same_v<T, Acc>) {
            if (offset != 0) {
                const int64_t blocks = grid / 256 + 1;
                rebase_partials<<<(unsigned int)(blocks < 65535 ? blocks
                                                                : 65535),
                                  256, 0, stream>>>(out + first, grid,
                                                    offset);
                CR_CHECK(cudaGetLastError());
            }
        }
    }
done:
    return status;
}

template <class T, class Acc, class Op, cr_instances INSTANCES>
cr_status
run_passes(cr_method method, const cr_plan *plan, const void *in,
           void *workspace, cudaStream_t stream, const cudaEvent_t *pass_ends,
           void **final, cr_error *error)
{
    Acc *partials = static_cast<Acc *>(workspace);
    Acc *buffers[2] = {partials, partials + plan->pass[0].blocks};
    cr_status status = CR_OK;
    for (int p = 0; p < plan->count; p++) {
        status = p == 0
            ? launch_pass<T, Acc, Op, INSTANCES>(method, &plan->pass[0],
                                             static_cast<const T *>(in),
                                             buffers[0], stream, error)
            : launch_pass<Acc, Acc, Op, INSTANCES>(method, &plan->pass[p],
                                               buffers[(p - 1) % 2],
                                               buffers[p % 2], stream,
                                               error);
        if (status != CR_OK) {
            goto done;
        }
        if (pass_ends != NULL) {
            CR_CHECK(cudaEventRecord(pass_ends[p], stream));
        }
    }
    *final = buffers[(plan->count - 1) % 2];
done:
    return status;
}

template <class T, class Acc, class Op, cr_instances INSTANCES>
cr_status
run_fast(const cr_pass *pass, const void *in, void *slots,
         unsigned int *tickets, void *result, unsigned long long *words,
         unsigned int sequence, cudaStream_t stream, cr_error *error)
{
    using fast_fn = void (*)(const T *, int64_t, unsigned long long *,
                             unsigned int *, Acc *, unsigned long long *,
                             unsigned int);
    /* A row compiled once runs every block size on one instance that
     * reads blockDim (BLOCK 0, fast.cuh); a row compiled per block size
     * has every size's. */
    fast_fn kernel;
    if constexpr (INSTANCES == CR_ONE_INSTANCE) {
        kernel = reduce_fast<0, T, Acc, Op>;
    }
    else {
        static constexpr fast_fn kernels[CR_BLOCK_SIZE_COUNT] =
            CR_PER_BLOCK_SIZE(fast_fn, reduce_fast, T, Acc, Op);
        kernel = kernels[block_size_index(pass->threads)];
    }
    cr_status status = CR_OK;
    /* The plan caps the grid at 32 blocks per SM: it fits an int. */
    kernel<<<(unsigned int)pass->blocks, pass->threads, 0, stream>>>(
        static_cast<const T *>(in), pass->n_in,
        static_cast<unsigned long long *>(slots), tickets,
        static_cast<Acc *>(result), words, sequence);
    CR_CHECK(cudaGetLastError());
done:
    return status;
}

/* Element i as the accumulator, for CUB: with its index, for argmin, or
 * counted, for nanmean. */
template <class T, class Acc>
struct element_as_accumulator {
    const T *in;
    __device__ Acc operator()(int64_t i) const
    {
        return to_accumulator<Acc>(in[i], i);
    }
};

/* CUB reads the elements through a pointer (its vectorized loads) where
 * an element converts to the accumulator by itself, else through an
 * iterator that pairs each with its index or its count (or makes a
 * complex one the bool of any and all).
 * (cub::DeviceReduce::ArgMin's order is `<` alone, which NaN defeats:
 * NumPy's NaN rules need Reduce with our operator.) */
template <class T, class Acc, class Op>
cr_status
run_cub(const void *in, int64_t n, void *temp, size_t *temp_bytes,
        void *result, cudaStream_t stream, cr_error *error)
{
    cr_status status = CR_OK;
    const T *elements = static_cast<const T *>(in);
    if constexpr (!cuda::std::is_convertible_v<T, Acc>) {
        CR_CHECK(cub::DeviceReduce::Reduce(
            temp, *temp_bytes,
            thrust::make_transform_iterator(
                thrust::counting_iterator<int64_t>(0),
                element_as_accumulator<T, Acc>{elements}),
            static_cast<Acc *>(result), n, Op(), Op::identity(), stream));
    }
    else {
        CR_CHECK(cub::DeviceReduce::Reduce(temp, *temp_bytes, elements,
                                           static_cast<Acc *>(result), n,
                                           Op(), Op::identity(), stream));
    }
    if (temp != NULL) {
        CR_CHECK(cudaGetLastError());
    }
done:
    return status;
}

/* Element i of contiguous rows of `length` as the accumulator, an
 * index operator's index its place in its row. */
template <class T, class Acc>
struct element_in_row {
    const T *in;
    int64_t length;
    __device__ Acc operator()(int64_t i) const
    {
        return to_accumulator<Acc>(in[i], i % length);
    }
};

/* Where row r of contiguous rows of `length` begins. */
struct row_begin {
    int64_t length;
    __device__ int64_t operator()(int64_t r) const
    {
        return r * length;
    }
};

template <class T, class Acc, class Op>
cr_status
run_cub_rows(const void *in, int64_t rows, int64_t length, void *temp,
             size_t *temp_bytes, void *results, cudaStream_t stream,
             cr_error *error)
{
    cr_status status = CR_OK;
    const auto begins = thrust::make_transform_iterator(
        thrust::counting_iterator<int64_t>(0), row_begin{length});
    CR_CHECK(cub::DeviceSegmentedReduce::Reduce(
        temp, *temp_bytes,
        thrust::make_transform_iterator(
            thrust::counting_iterator<int64_t>(0),
            element_in_row<T, Acc>{static_cast<const T *>(in), length}),
        static_cast<Acc *>(results), rows, begins, begins + 1, Op(),
        Op::identity(), stream));
    if (temp != NULL) {
        CR_CHECK(cudaGetLastError());
    }
done:
    return status;
}

template <class Acc, class Op>
__global__ void __launch_bounds__(CR_FOLD_THREADS)
fold_partials(const Acc *partials, int64_t count, int64_t chunk,
              Acc *result)
{
    const Op op;
    Acc v = Op::identity();
    for (int64_t k = threadIdx.x; k < count; k += CR_FOLD_THREADS) {
        v = op(v, rebased(partials[k], k * chunk));
    }
    v = block_reduce<CR_FOLD_THREADS, Acc, Op>(v);
    if (threadIdx.x == 0) {
        *result = v;
    }
}

template <class T, class Acc, class Op>
cr_status
run_fold(const void *partials, int64_t count, int64_t chunk, void *result,
         cudaStream_t stream, cr_error *error)
{
    cr_status status = CR_OK;
    fold_partials<Acc, Op><<<1, CR_FOLD_THREADS, 0, stream>>>(
        static_cast<const Acc *>(partials), count, chunk,
        static_cast<Acc *>(result));
    CR_CHECK(cudaGetLastError());
done:
    return status;
}

/* The short-row kernel's launch of `pass` (rows_plan.c plans it), as a
 * dependent of the pass before where `dependent` (here and below): its
 * instance for rows of at most half CR_SHORT_ROW where they are that
 * short, in gangs where reduce_short_row_gangs can read them (pass 0 of
 * GANGS, rows side by side), on the pass's grid and block as
 * rows_plan.c plans them (8 rows a thread: two gangs of float32's).
 * Returns the launch's error. */
template <class T, class Acc, class Op, class Store, bool GANGS>
static cudaError_t
launch_short_rows(const cr_rows_pass *pass, bool dependent, dim3 grid,
                  dim3 block, const unsigned char *in,
                  const cr_rows_geometry *geometry, int64_t rows,
                  int64_t stride, unsigned char *out,
                  const cr_rows_finish &finish, cudaStream_t stream)
{
    constexpr int GANG = short_row_gang<T, Acc, CR_SHORT_ROW / 2>;
    if constexpr (GANGS && GANG > 1) {
        if (pass->length <= CR_SHORT_ROW / 2 && geometry->ndim == 1
            && geometry->in_strides[0] == (int64_t)sizeof(T)
            && stride % 16 == 0 && reinterpret_cast<uintptr_t>(in) % 16 == 0) {
            return launch_kernel(
                dependent,
                reduce_short_row_gangs<T, Acc, Op, Store, CR_SHORT_ROW / 2>,
                grid, block, 0, stream, in, *geometry, rows,
                (int)pass->length, stride, out, finish);
        }
    }
    if (pass->length <= CR_SHORT_ROW / 2) {
        return launch_kernel(
            dependent, reduce_short_rows<T, Acc, Op, Store, CR_SHORT_ROW / 2>,
            grid, block, 0, stream, in, *geometry, rows, (int)pass->length,
            stride, out, finish);
    }
    return launch_kernel(
        dependent, reduce_short_rows<T, Acc, Op, Store, CR_SHORT_ROW>, grid,
        block, 0, stream, in, *geometry, rows, (int)pass->length, stride,
        out, finish);
}

/* Whether the row kernel of an operator of any order (rows_by_vectors)
 * reads pass 0's chunks of T by 16-byte vectors: adjacent elements in
 * chunks of whole vectors, a lane group of 32, and every row's first
 * element 16-byte aligned. */
template <class T>
static bool
by_vectors(const cr_rows_pass *pass, const unsigned char *in,
           const cr_rows_geometry *geometry, int64_t stride)
{
    if (stride != (int64_t)sizeof(T)
        || pass->group != 32 || pass->chunk * (int64_t)sizeof(T) % 16 != 0
        || reinterpret_cast<uintptr_t>(in) % 16 != 0) {
        return false;
    }
    for (int d = 0; d < geometry->ndim; d++) {
        if (geometry->in_strides[d] % 16 != 0) {
            return false;
        }
    }
    return true;
}

/* Pass p of `plan` by its kernel, writing as Store writes: pass 0 reads
 * elements of T, later passes the partials (Acc) before them, launched
 * as dependents of the pass before where the plan says. */
template <class T, class Acc, class Op, class Store>
static cudaError_t
launch_pass(const cr_rows_plan *plan, int p, const unsigned char *in,
            const cr_rows_geometry *geometry, int64_t rows, int64_t stride,
            unsigned char *out, int64_t chunk_bytes,
            const cr_rows_finish &finish, cudaStream_t stream)
{
    const cr_rows_pass *pass = &plan->pass[p];
    const bool dependent = p > 0 && plan->dependent_launches;
    const dim3 grid((unsigned int)pass->blocks), block(pass->threads_x);
    switch (pass->kernel) {
    case CR_ROWS_KERNEL_STAGED:     /* later passes only */
        return launch_kernel(dependent, reduce_staged<Acc, Op, Store>, grid,
                             block, 0, stream, in, *geometry, rows,
                             pass->length, stride, (int)pass->chunk,
                             pass->chunks, out, chunk_bytes, finish);
    case CR_ROWS_KERNEL_SHORT:
        if (p > 0) {
            return launch_short_rows<Acc, Acc, Op, Store, false>(
                pass, dependent, grid, block, in, geometry, rows, stride,
                out, finish, stream);
        }
        return launch_short_rows<T, Acc, Op, Store, true>(
            pass, dependent, grid, block, in, geometry, rows, stride, out,
            finish, stream);
    case CR_ROWS_KERNEL_COLUMNS:    /* in its shape: CR_COLUMN_THREADS
                                     * threads a row, or a thread a lane */
        return launch_kernel(
            dependent,
            pass->threads_y == CR_COLUMN_THREADS
                ? reduce_columns<T, Acc, Op, Store, CR_COLUMN_THREADS>
                : reduce_columns<T, Acc, Op, Store, 32>,
            grid, dim3(pass->threads_x, pass->threads_y), 0, stream, in,
            *geometry, rows, pass->length, stride, (int)pass->chunk,
            pass->chunks, pass->group, out, chunk_bytes, finish);
    default: {
        auto kernel = p > 0 ? reduce_rows<Acc, Acc, Op, Store>
                            : reduce_rows<T, Acc, Op, Store>;
        if constexpr (rows_by_vectors<T, Acc, Op>) {
            if (p == 0 && by_vectors<T>(pass, in, geometry, stride)) {
                kernel = reduce_rows<T, Acc, Op, Store, true>;
            }
        }
        return launch_kernel(dependent, kernel, grid, block, 0, stream, in,
                             *geometry, rows, pass->length, stride,
                             (int)pass->chunk, pass->chunks, pass->group,
                             out, chunk_bytes, finish);
    }
    }
}

template <class T, class Acc, class Op>
cr_status
run_rows(const cr_rows_plan *plan, int p, const void *in,
         const cr_rows_geometry *geometry, int64_t rows, int64_t stride,
         void *out, int64_t chunk_bytes, const cr_rows_finish *finish,
         cudaStream_t stream, cr_error *error)
{
    cr_status status = CR_OK;
    const unsigned char *bytes = static_cast<const unsigned char *>(in);
    unsigned char *results = static_cast<unsigned char *>(out);
    if (finish == NULL) {
        CR_CHECK((launch_pass<T, Acc, Op, store_accumulator<Acc>>(
            plan, p, bytes, geometry, rows, stride, results, chunk_bytes,
            cr_rows_finish{}, stream)));
    }
    else if constexpr (rows_finishing<T, Acc, Op> == CR_ROWS_FINISH_FLOAT) {
        CR_CHECK((launch_pass<T, Acc, Op, store_finished<T>>(
            plan, p, bytes, geometry, rows, stride, results, chunk_bytes,
            *finish, stream)));
    }
    else if constexpr (rows_finishing<T, Acc, Op> == CR_ROWS_FINISH_INDEX) {
        CR_CHECK((launch_pass<T, Acc, Op, store_index>(
            plan, p, bytes, geometry, rows, stride, results, chunk_bytes,
            *finish, stream)));
    }
    else {
        return cr_fail(error, CR_ERR_INVALID, "rows: this operator's last "
                       "pass writes its accumulator only");
    }
    CR_CHECK(cudaGetLastError());
done:
    return status;
}

/* Explicit instances: instances.cu, compiled with -DCR_UNIT=k, includes
 * this file, and the rows of instances.def in its unit are instantiated here;
 * a shared row's are another row's. */
#define CR_INSTANCE(TYPE, ACC, OP, INSTANCES, T, Acc, Op)                  \
    template cr_status run_passes<T, Acc, Op, CR_##INSTANCES>(            \
        cr_method, const cr_plan *, const void *, void *, cudaStream_t,   \
        const cudaEvent_t *, void **, cr_error *);                        \
    template cr_status run_fast<T, Acc, Op, CR_##INSTANCES>(              \
        const cr_pass *, const void *, void *, unsigned int *, void *,    \
        unsigned long long *, unsigned int, cudaStream_t, cr_error *);    \
    template cr_status run_cub<T, Acc, Op>(                               \
        const void *, int64_t, void *, size_t *, void *, cudaStream_t,    \
        cr_error *);                                                      \
    template cr_status run_fold<T, Acc, Op>(                              \
        const void *, int64_t, int64_t, void *, cudaStream_t, cr_error *); \
    template cr_status run_rows<T, Acc, Op>(                              \
        const cr_rows_plan *, int, const void *, const cr_rows_geometry *, \
        int64_t, int64_t, void *, int64_t, const cr_rows_finish *,         \
        cudaStream_t, cr_error *);                                        \
    template cr_status run_cub_rows<T, Acc, Op>(                          \
        const void *, int64_t, int64_t, void *, size_t *, void *,          \
        cudaStream_t, cr_error *);

#define CR_SHARED_INSTANCE(TYPE, ACC, OP, INSTANCES, T, Acc, Op)

#include "instances/instances.def"

#endif /* CUDAREDUCE_RUNNERS_IMPL_CUH */
