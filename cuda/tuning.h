/* tuning.h: the CUDA layer's tuning constants, and the compile-time checks
 * that tie the ones that depend on each other.  Private to cuda/ (plain C,
 * for facts.c and plan.c as well as the .cu files). */
#ifndef CUDAREDUCE_TUNING_H
#define CUDAREDUCE_TUNING_H

#include "cudareduce.h"

/* Resident threads per SM that a grid-stride grid (multi_element, fast)
 * aims to fill: A100 and H100 hold 2048; a smaller GPU runs the grid in
 * two waves. */
#define CR_THREADS_PER_SM 2048

/* The most blocks per SM such a plan asks for (CR_THREADS_PER_SM of the
 * smallest block): the fast method's workspace holds one partial per
 * block of this many per SM (workspace.cu). */
#define CR_MAX_BLOCKS_PER_SM (CR_THREADS_PER_SM / CR_MIN_THREADS)

/* A workspace partial's size: it must hold every accumulator, argmin's
 * value and index and nanmean's sum and count included (a complex128
 * value beside its index or count: 24 bytes). */
#define CR_MAX_ACCUMULATOR_BYTES 24
#define CR_CHECK_ACCUMULATOR_FITS(NAME, name, kind, bits, T, SUM_ACC,      \
                                  MINMAX_ACC, Minmax)                      \
    typedef char cr_accumulator_fits_##NAME                                \
        [(bits) <= 8 * CR_MAX_ACCUMULATOR_BYTES ? 1 : -1];
CR_TYPES(CR_CHECK_ACCUMULATOR_FITS)
#undef CR_CHECK_ACCUMULATOR_FITS
typedef char cr_indexed_result_fits
    [sizeof(cr_indexed_result) <= CR_MAX_ACCUMULATOR_BYTES ? 1 : -1];
typedef char cr_counted_result_fits
    [sizeof(cr_counted_result) <= CR_MAX_ACCUMULATOR_BYTES ? 1 : -1];

/* The fast method's threads per block when the caller names none, by the
 * input's bytes: 256 below CR_FAST_512_THREADS_BYTES, 512 below
 * CR_FAST_1024_THREADS_BYTES, 1024 from there: the fastest of the three
 * at each size on the H100, back to back, and 1024 at or above cub from
 * 2^22 to 2^28 elements, where 256 fell 1% below it
 * (docs/recorded/fast-threads-2026-11-24-h100.txt). */
#define CR_FAST_512_THREADS_BYTES ((int64_t)4 << 20)
#define CR_FAST_1024_THREADS_BYTES ((int64_t)16 << 20)

/* The fast method: 16-byte loads, this many in flight per thread.  On
 * the H100, 2 ran faster than 4 for int8 and float16 and within 2% of
 * it for float32, and at 4 complex argmin's value and index spill
 * (complex128 argmax 3,043 against 1,015 GB/s at 2^28:
 * docs/recorded/complex-fast-cub-2026-11-25-h100.txt). */
#define CR_FAST_UNROLL 2

/* How long a call polls the mapped slot that the fast kernel writes its
 * result to before it blocks in cudaStreamSynchronize: longer than a
 * small call takes (n = 2^22 float32: 21.8 us a call on the H100,
 * docs/recorded/peers-2026-11-24-h100.json), so that polling saves those
 * the synchronize, and short enough that a long reduction does not keep
 * a core spinning. */
#define CR_POLL_SPIN_NS 50000

/* The bench's stream-holding kernel gives up after this long, so that a
 * launch queue that fills before the host lets it go cannot hang the
 * process (nvbench does the same); queuing the largest batch the bench
 * times takes milliseconds. */
#define CR_HOLD_TIMEOUT_NS 10000000000ULL

/* Threads of the one block that combines the host path's chunk results
 * (a few hundred at most: 16 MiB chunks of an 8 GiB array are 512). */
#define CR_FOLD_THREADS 256

/* Reductions along axes (kernels/rows.cuh): a row longer than
 * CR_ROW_CHUNK elements is reduced chunk by chunk, and its chunks'
 * partials by the same procedure, pass after pass.  The chunk is part of
 * the one order every kernel keeps, so a result's bits depend on it:
 * changing it changes results.  It must give a full warp of lanes.  A
 * chunk's 32 lanes are its parallelism: 1,024 (32 elements a lane) keeps
 * few long rows on every SM, where 8,192 left an argmax over (32, 2^17)
 * 16,384 threads; it costs rows cut into several chunks
 * (docs/recorded/axis-tuning-2026-11-27-h200.txt, item 2). */
#define CR_ROW_CHUNK 1024
typedef char cr_row_chunk_fills_a_warp[CR_ROW_CHUNK >= 32 ? 1 : -1];

/* The row kernel's threads per block (warps, each a row or a few short
 * ones), and the column kernel's fewest (32 adjacent rows or more, by
 * the lanes each takes). */
#define CR_ROWS_THREADS 256

/* Loads in flight a lane of the row and column kernels (kernels/
 * rows.cuh): a lane's elements are 32 apart, so that its loads cannot be
 * widened, and a chunk's 32 lanes are all of its parallelism.  16 spilled
 * (ptxas, sm_90: float min and max; the column kernel's narrow types
 * under its 1,024-thread bound). */
#define CR_ROWS_UNROLL 8

/* Rows of at most this many elements are read a thread a row
 * (reduce_short_rows), each element of the order's lanes in a register;
 * longer ones by lanes.  A power of two, at most 32. */
#define CR_SHORT_ROW 8
typedef char cr_short_row_is_a_group[
    CR_SHORT_ROW >= 1 && CR_SHORT_ROW <= 32
    && (CR_SHORT_ROW & (CR_SHORT_ROW - 1)) == 0 ? 1 : -1];

/* The most blocks a row or column kernel is launched with: a
 * grid-stride loop covers more rows, and keeps gridDim.x in range. */
#define CR_ROWS_MAX_BLOCKS 65536

/* The read-ceiling probe: 16-byte loads, a block of this many threads,
 * enough blocks per SM to fill CR_THREADS_PER_SM. */
#define CR_PROBE_THREADS 512

#endif
