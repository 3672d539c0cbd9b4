/* runners.cuh: the typed runners of one (element, accumulator, operator):
 * run_passes (the ladder's passes of a plan), run_fast and run_cub, the
 * combine of the host path's chunk results (run_fold), a pass of a
 * reduction along axes (run_rows), and the identity an empty reduction
 * gives.
 *
 * They are the only typed entry points: everything around them
 * (allocation, copies, streams) works on bytes, so one instance per
 * combination is all the typing the library needs.  They are declared here
 * with type-erased signatures, defined in runners_impl.cuh and
 * instantiated explicitly by instances.cu, compiled once per unit of
 * instances.def, the units in parallel.
 */
#ifndef CUDAREDUCE_RUNNERS_CUH
#define CUDAREDUCE_RUNNERS_CUH

#include <climits>
#include <cstdint>
#include <cstring>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "check.cuh"
#include "cudareduce.h"
/* The types instances.def's rows name: operators, skipping_nan,
 * unsigned_bits. */
#include "kernels/casts.cuh"
#include "kernels/float_results.cuh"
#include "kernels/operators.cuh"
#include "kernels/values.cuh"
#include "rows_plan.h"

/* Launches every pass of `plan` on `stream`: pass 0 reads the elements at
 * `in`, later passes re-reduce the partials in `workspace` (room for
 * pass 0's and pass 1's).  *final points at the one result.  pass_ends
 * (the bench's, else NULL): an event recorded after each pass.  INSTANCES:
 * how the row's kernels were compiled (instances.def); a plan at a size
 * the row has no kernel for fails with CR_ERR_INVALID (dispatch.cu
 * refuses it before). */
typedef cr_status (*cr_passes_fn)(cr_method method, const cr_plan *plan,
                                  const void *in, void *workspace,
                                  cudaStream_t stream,
                                  const cudaEvent_t *pass_ends,
                                  void **final, cr_error *error);

template <class T, class Acc, class Op, cr_instances INSTANCES>
cr_status run_passes(cr_method method, const cr_plan *plan, const void *in,
                     void *workspace, cudaStream_t stream,
                     const cudaEvent_t *pass_ends, void **final,
                     cr_error *error);

/* The fast method's one launch (fast.cuh): `pass` from its plan, the
 * blocks' slots in `slots` (CR_FLAGGED_BYTES of the accumulator each,
 * zero before, cleared again after), the ticket counter (zero before,
 * re-armed to zero after) and the one result, written to `result`, or
 * with `words` set (mapped host memory) to its flagged words, flagged
 * `sequence` (flagged_words.cuh). */
typedef cr_status (*cr_fast_fn)(const cr_pass *pass, const void *in,
                                void *slots, unsigned int *tickets,
                                void *result, unsigned long long *words,
                                unsigned int sequence, cudaStream_t stream,
                                cr_error *error);

template <class T, class Acc, class Op, cr_instances INSTANCES>
cr_status run_fast(const cr_pass *pass, const void *in, void *slots,
                   unsigned int *tickets, void *result,
                   unsigned long long *words, unsigned int sequence,
                   cudaStream_t stream, cr_error *error);

/* cub::DeviceReduce::Reduce of n elements into the device slot `result`,
 * with the same operator and accumulator; with temp == NULL it only sets
 * *temp_bytes, as CUB does. */
typedef cr_status (*cr_cub_fn)(const void *in, int64_t n, void *temp,
                               size_t *temp_bytes, void *result,
                               cudaStream_t stream, cr_error *error);

template <class T, class Acc, class Op>
cr_status run_cub(const void *in, int64_t n, void *temp, size_t *temp_bytes,
                  void *result, cudaStream_t stream, cr_error *error);

/* Combines `count` accumulators at `partials` in device memory, the k-th
 * the result of the elements from k * chunk on (the host path's chunks:
 * an index it holds counts from there), into `result` (device memory), in
 * one block whose threads each take the partials in order. */
typedef cr_status (*cr_fold_fn)(const void *partials, int64_t count,
                                int64_t chunk, void *result,
                                cudaStream_t stream, cr_error *error);

template <class T, class Acc, class Op>
cr_status run_fold(const void *partials, int64_t count, int64_t chunk,
                   void *result, cudaStream_t stream, cr_error *error);

/* Pass p of `plan`, a reduction along axes (kernels/rows.cuh), over
 * `rows` rows laid out as `geometry` says (merged): pass 0 reads the
 * elements (`stride` bytes apart in a row) with the row or the column
 * kernel, as the plan says, a later pass the partials of the one before
 * with the row kernel.  Chunk c of row r goes to out + r's out offset +
 * c * chunk_bytes: its accumulator, or with `finish` (the last pass of a
 * row whose rows_finishing is not CR_ROWS_FINISH_NONE) the result, a
 * float sum or mean finished as `finish` says into the element's dtype,
 * an index as int64. */
typedef cr_status (*cr_rows_fn)(const cr_rows_plan *plan, int p,
                                const void *in,
                                const cr_rows_geometry *geometry,
                                int64_t rows, int64_t stride, void *out,
                                int64_t chunk_bytes,
                                const cr_rows_finish *finish,
                                cudaStream_t stream, cr_error *error);

/* What run_rows' last pass of (T, Acc, Op) can write into a device out
 * besides its accumulator: the sums and means of float16, bfloat16,
 * float32 and float64, finished; argmin's and argmax's index (other rows'
 * results the store pass finishes). */
template <class T, class Acc, class Op>
inline constexpr cr_rows_finishing rows_finishing =
    is_float_dtype<T> && cuda::std::is_same_v<Op, SumOp<Acc>>
        ? CR_ROWS_FINISH_FLOAT
    : is_arg_extreme<Op>::value ? CR_ROWS_FINISH_INDEX
                                : CR_ROWS_FINISH_NONE;

template <class T, class Acc, class Op>
cr_status run_rows(const cr_rows_plan *plan, int p, const void *in,
                   const cr_rows_geometry *geometry, int64_t rows,
                   int64_t stride, void *out, int64_t chunk_bytes,
                   const cr_rows_finish *finish, cudaStream_t stream,
                   cr_error *error);

/* cub::DeviceSegmentedReduce::Reduce of `rows` contiguous rows of
 * `length` >= 1 elements at `in` (row r from element r * length on),
 * each into results[r] (an Acc), with the same operator and accumulator;
 * with temp == NULL it only sets *temp_bytes, as CUB does.  The
 * elements are read through an iterator, never by CUB's vectorized
 * loads, which it takes where a row's first element is aligned: a row's
 * order then depends on its length alone. */
typedef cr_status (*cr_cub_rows_fn)(const void *in, int64_t rows,
                                    int64_t length, void *temp,
                                    size_t *temp_bytes, void *results,
                                    cudaStream_t stream, cr_error *error);

template <class T, class Acc, class Op>
cr_status run_cub_rows(const void *in, int64_t rows, int64_t length,
                       void *temp, size_t *temp_bytes, void *results,
                       cudaStream_t stream, cr_error *error);

/* Writes Op's identity, as an Acc, to `out`: an empty reduction's value. */
typedef void (*cr_identity_fn)(void *out);

template <class Acc, class Op>
void
write_identity(void *out)
{
    const Acc identity = Op::identity();
    memcpy(out, &identity, sizeof(identity));
}

/* Partial results of every pass: pass 0 writes the first `blocks` slots,
 * later passes ping-pong between them and the slots after. */
static inline size_t
workspace_bytes(const cr_plan *plan, size_t acc_size)
{
    int64_t slots = plan->pass[0].blocks
        + (plan->count > 1 ? plan->pass[1].blocks : 0);
    return (size_t)slots * acc_size;
}

#endif /* CUDAREDUCE_RUNNERS_CUH */
