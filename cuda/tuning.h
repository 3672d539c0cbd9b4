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
                                  MINMAX_ACC, Minmax, PROD_ACC, ProdAcc)   \
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
 * chunk's 32 lanes are its parallelism: shorter chunks keep few long rows
 * on every SM, longer ones take fewer passes and trees.  Of 1,024, 4,096
 * and 8,192 on the shapes, 4,096 was within 10% of the faster of
 * the other two on each but (4, 2^24) along axis 1 (72.8 against 69.1
 * us); 8,192 ran argmax over (32, 2^17) at 17.0 us against 13.3, slower
 * than torch (docs/recorded/axis-kernels-2026-11-27-h200.txt). */
#define CR_ROW_CHUNK 4096
typedef char cr_row_chunk_fills_a_warp[CR_ROW_CHUNK >= 32 ? 1 : -1];

/* An operator whose result is the same bits in any order of combining
 * (kernels/operators.cuh's any_order: an index operator's, an integer's
 * or bool's) has its
 * rows cut into shorter chunks where the row kernel would have fewer than
 * CR_ROWS_FILL_CHUNKS (the warps of 4 blocks of CR_ROWS_THREADS on each
 * of an H100's or H200's 132 SMs, about) to read: halved down to
 * CR_ROWS_MIN_CHUNK, 32 elements a lane, two turns of its loads.  Argmax
 * over (32, 2^17) ran its first pass in 1,024 chunks of 4,096, 128 blocks
 * at 12% of the SM's warps (docs/recorded/axis-kernels-2026-11-27-h200.txt,
 * item 4). */
#define CR_ROWS_FILL_CHUNKS 4096
#define CR_ROWS_MIN_CHUNK 1024
typedef char cr_rows_min_chunk_divides[
    CR_ROW_CHUNK % CR_ROWS_MIN_CHUNK == 0 && CR_ROWS_MIN_CHUNK >= 32 ? 1 : -1];

/* A later pass whose rows of partials are longer than
 * CR_ROWS_STAGED_LENGTH (a turn of a lane's loads, CR_ROWS_UNROLL, for
 * each of a chunk's 32 lanes) and whose chunks are CR_ROWS_STAGED_CHUNKS
 * or fewer is read by the staged kernel: a chunk a block, whose threads
 * load CR_ROWS_STAGED_BYTES of it into shared memory at once, folded
 * there by a warp in the order's way.  The bound on chunks is a choice,
 * not a measurement: with many chunks the row kernel's warps fill the
 * GPU, where all but one warp of each staged block wait while it folds.
 * The row kernel's one warp a chunk took its 4,096 partials in 8 turns
 * of loads, 8.1 us (Nsight Compute) after the 68.6 of the first pass of
 * a float32 sum of (4, 2^24) along axis 1; the staged kernel 4.9
 * (docs/recorded/axis-staged-2026-11-28-h200.txt). */
#define CR_ROWS_STAGED_LENGTH (32 * CR_ROWS_UNROLL)
#define CR_ROWS_STAGED_CHUNKS 1024
#define CR_ROWS_STAGED_BYTES 32768

/* The row kernel's threads per block (warps, each a row or a few short
 * ones), and the column kernel's fewest (32 adjacent rows or more, by
 * the lanes each takes). */
#define CR_ROWS_THREADS 256

/* The blocks an SM the row kernel is bound to hold (64 registers a
 * thread), and the short-row kernels and the column kernel's narrow
 * shape half as many (128: their rows' elements and results, or four
 * lanes' accumulators, take more).  Bound by threads alone, ptxas
 * spilled 12 bytes of the row kernel's int32 min and max at 48
 * registers, and 4 to 16 of the others' at 63 or 64 (sm_90, nvcc 13.0):
 * a register limit of its own lets it use more. */
#define CR_ROWS_BLOCKS_PER_SM (CR_THREADS_PER_SM / 2 / CR_ROWS_THREADS)

/* Loads in flight a lane of the row and column kernels (kernels/
 * rows.cuh): a lane's elements are 32 apart, so that its loads cannot be
 * widened, and a chunk's 32 lanes are all of its parallelism.  16 ran
 * (2^12, 2^12) along axis 1 at 19.3 us against 20.5 for 8, argmax over
 * (32, 2^17) at 13.3 against 16.1
 * (docs/recorded/axis-kernels-2026-11-27-h200.txt). */
#define CR_ROWS_UNROLL 16

/* The column kernel's threads a row (kernels/rows.cuh) where it has
 * CR_COLUMN_ITEMS tiles of adjacent rows' chunks or more, each folding
 * 32 / CR_COLUMN_THREADS lanes of the order at most, blocks of
 * CR_ROWS_THREADS threads, several an SM; where fewer, a thread a lane
 * (blocks of 32 rows by 32), as more threads are then faster.  A thread a
 * lane took (2^10, 2^16) along axis 0 (2,048 tiles) to 94 us, 8 threads a
 * row to 69; 8 took (2^12, 2^12) along axis 0 (128 tiles) from 20 to 40
 * (docs/recorded/axis-kernels-2026-11-27-h200.txt). */
#define CR_COLUMN_THREADS 8
#define CR_COLUMN_ITEMS 512

/* Rows of at most this many elements are read a thread a row
 * (reduce_short_rows), each element of the order's lanes in a register;
 * longer ones by lanes.  A power of two, at most 32. */
#define CR_SHORT_ROW 8
/* The column kernel takes the rows longer than CR_SHORT_ROW, whose
 * groups of lanes are at least twice as many as CR_COLUMN_THREADS. */
typedef char cr_column_threads_fit[
    CR_SHORT_ROW >= CR_COLUMN_THREADS && CR_COLUMN_THREADS <= 32
    && (CR_COLUMN_THREADS & (CR_COLUMN_THREADS - 1)) == 0 ? 1 : -1];
typedef char cr_short_row_is_a_group[
    CR_SHORT_ROW >= 1 && CR_SHORT_ROW <= 32
    && (CR_SHORT_ROW & (CR_SHORT_ROW - 1)) == 0 ? 1 : -1];

/* The most blocks a row or column kernel is launched with: a
 * grid-stride loop covers more rows, and keeps gridDim.x in range. */
#define CR_ROWS_MAX_BLOCKS 65536

/* The fewest blocks the short-row kernel is launched with where its rows
 * allow (a few an SM), so that few rows are not left to a block or two. */
#define CR_ROWS_MIN_BLOCKS 1024

/* The read-ceiling probe: 16-byte loads, a block of this many threads,
 * enough blocks per SM to fill CR_THREADS_PER_SM. */
#define CR_PROBE_THREADS 512

/* Exact sums (kernels/exact.cuh): threads a block, and the blocks an SM
 * its registers are bounded for: 4, half the SM's threads, at 48 to 62
 * registers and no spill (sm_90).  At 2 (108 registers, a quarter of
 * the warps) its float32 kernel took 464 us over 2^28 elements, at 4
 * with the float units' put 307 (docs/recorded/exact-2026-11-27-h200.txt,
 * which says what else changed between them). */
#define CR_EXACT_THREADS 256
#define CR_EXACT_BLOCKS_PER_SM 4

#endif
