/* exact_launches.cu: an exact sum's launches (exact=True into a device
 * out: the adding kernel of cuda/kernels/exact.cuh and its rounding, as
 * cuda/exact_sum.cu queues them) of several trees, timed alone in one
 * run, so that the trees' kernels and the ways they are launched compare
 * on one GPU without building the extension for each.
 *
 * One file, two roles.  Compiled with -DTREE=name against a tree T, it is
 * that tree's unit: T's kernels inside namespace `name` (the same kernel
 * template of two trees is otherwise one symbol, and the linker keeps one
 * of them), and run_name(), which queues one call the way T's
 * exact_sum.cu does, told by -DLAUNCHES=:
 *   1  the state zeroed by a memset, the adding kernel, the rounding
 *      kernel (2456d88);
 *   2  the adding kernel, whose last block rounds and zeroes the state
 *      (3f84ed4);
 *   3  the adding kernel, then the rounding kernel, which zeroes the
 *      state (this tree where the device has no programmatic dependent
 *      launch);
 *   4  the same, the rounding launched as the adding kernel's
 *      programmatic dependent (dependent_launch.cuh: this tree on
 *      compute capability 9.0 and later).
 *   F="-O3 -std=c++17 --expt-relaxed-constexpr -lineinfo
 *      -gencode=arch=compute_90,code=sm_90"
 *   nvcc $F -I$T/cuda -I$T/cuda/include -DTREE=now -DLAUNCHES=3
 *        -c benchmarks/exact_launches.cu -o now.o
 * Compiled with -DTREES='X(before)X(now)...' (no spaces or commas,
 * which nvcc splits options at: X(unit) a call, ADDS(unit) its additions
 * alone, for LAUNCHES=2 a launch that adds only), it is the timer, linked
 * with the units and with the bench's stream holder of any tree:
 *   nvcc $F -I$T/cuda -I$T/cuda/include -DTREES='X(before)X(now)'
 *        -o exact_launches benchmarks/exact_launches.cu now.o ...
 *        $T/cuda/bench/stream_hold.cu $T/cuda/fail.c
 * Run: ./exact_launches; a line a dtype and size (float32 and float64,
 * 2^20 .. 2^28, standard normal data made on the device), each tree's
 * median us a call, back to back (a batch queued behind the stream
 * holder, inputs rotated past L2), and "(BITS DIFFER)" where a rounding
 * call's result is not the first tree's.
 */
#include <cuda_runtime.h>

#if defined(TREE)

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <utility>

namespace TREE {
#include "kernels/exact.cuh"

template <class T>
static void
queue_call(const void *in, long long n, void *state, void *out, int sm_count,
           int round, cudaStream_t stream)
{
    /* exact_sum.cu's grid (its lower bound never binds up to 2^28). */
    const long long vectors = n / (16 / (long long)sizeof(T)) + 1;
    long long blocks = (vectors + CR_EXACT_THREADS - 1) / CR_EXACT_THREADS;
    if (blocks > (long long)sm_count * CR_EXACT_BLOCKS_PER_SM) {
        blocks = (long long)sm_count * CR_EXACT_BLOCKS_PER_SM;
    }
    cr_exact_rounding rounding = {};
    rounding.format = sizeof(T) == 8 ? CR_EXACT_FLOAT64 : CR_EXACT_FLOAT32;
    rounding.n = n;
    rounding.value = static_cast<unsigned char *>(out);
    const T *data = static_cast<const T *>(in);
    cr_exact_state *held = static_cast<cr_exact_state *>(state);
#if LAUNCHES == 1
    cudaMemsetAsync(state, 0, sizeof(cr_exact_state), stream);
#endif
#if LAUNCHES == 2
    if (!round) {
        rounding.value = NULL;
    }
    exact_sum_kernel<T, false><<<(unsigned)blocks, CR_EXACT_THREADS, 0,
                                 stream>>>(data, n, held, rounding);
#else
    exact_sum_kernel<T, false><<<(unsigned)blocks, CR_EXACT_THREADS, 0,
                                 stream>>>(data, n, held);
    if (round) {
#if LAUNCHES == 4
        launch_kernel(true, exact_round_kernel, dim3(1), dim3(32), 0, stream,
                      held, rounding);
#else
        exact_round_kernel<<<1, 32, 0, stream>>>(held, rounding);
#endif
    }
#endif
}
}  // namespace TREE

#define NAMED(a, b) a##b
#define RUNNER(tree) NAMED(run_, tree)

extern "C" void
RUNNER(TREE)(int float64, const void *in, long long n, void *state,
             void *out, int sm_count, int round, cudaStream_t stream)
{
    if (float64) {
        TREE::queue_call<double>(in, n, state, out, sm_count, round, stream);
    }
    else {
        TREE::queue_call<float>(in, n, state, out, sm_count, round, stream);
    }
}

#elif defined(TREES)

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "harness_errors.h"

typedef void (*runner)(int, const void *, long long, void *, void *, int,
                       int, cudaStream_t);

#define X(tree)                                                           \
    extern "C" void run_##tree(int, const void *, long long, void *,      \
                               void *, int, int, cudaStream_t);
#define ADDS(tree) X(tree)
TREES
#undef X
#undef ADDS

struct tree_run {
    const char *name;
    runner run;
    int round;
};

#define X(tree) {#tree, run_##tree, 1},
#define ADDS(tree) {#tree " adding", run_##tree, 0},
static const tree_run runs[] = {TREES};
#undef X
#undef ADDS
static const int run_count = (int)(sizeof runs / sizeof runs[0]);

__device__ static unsigned long long
mix(unsigned long long x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ x >> 33;
}

/* Standard normal values, by Box-Muller of two hashes of the index. */
template <class T>
__global__ void
fill_normal(T *x, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
         i < n; i += (long long)gridDim.x * blockDim.x) {
        const double u = ((mix(2 * i) >> 11) + 1) * 0x1p-53;
        const double v = (mix(2 * i + 1) >> 11) * 0x1p-53;
        x[i] = (T)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
    }
}

int
main()
{
    const size_t pool_bytes = (size_t)4 << 30;
    const int samples = 60;
    const int warmup = 5;
    int sm_count = 0;
    cudaStream_t stream;
    cr_error error = {};
    cr_stream_hold *hold = nullptr;
    char *pool;
    void *state;
    unsigned long long *outs;
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaDeviceGetAttribute(&sm_count,
                                      cudaDevAttrMultiProcessorCount, 0));
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    check_hold(cr_stream_hold_create((uintptr_t)stream, &hold, &error),
               error);
    CHECK_CUDA(cudaMalloc(&pool, pool_bytes));
    /* Every tree's state is the same 68 limbs and three words, or less. */
    CHECK_CUDA(cudaMalloc(&state, 4096));
    CHECK_CUDA(cudaMemset(state, 0, 4096));
    CHECK_CUDA(cudaMalloc(&outs, sizeof(*outs) * run_count));
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    for (int float64 = 0; float64 < 2; float64++) {
        const size_t item = float64 ? 8 : 4;
        if (float64) {
            fill_normal<<<4096, 256>>>((double *)pool, pool_bytes / item);
        }
        else {
            fill_normal<<<4096, 256>>>((float *)pool, pool_bytes / item);
        }
        CHECK_CUDA(cudaDeviceSynchronize());
        for (int lg = 20; lg <= 28; lg += 2) {
            const long long n = 1LL << lg;
            const size_t bytes = (size_t)n * item;
            /* Inputs rotated past L2 (50-60 MiB on a Hopper), at least
             * two; batches of about 256 MiB read, 2 to 32 calls. */
            const int buffers = (int)std::max<size_t>(
                2, std::min<size_t>(pool_bytes / bytes, 64));
            const int batch = (int)std::max<size_t>(
                2, std::min<size_t>(32, ((size_t)256 << 20) / bytes + 1));
            unsigned long long first_bits = 0;
            int first = 1;
            printf("%s 2^%d", float64 ? "float64" : "float32", lg);
            for (int r = 0; r < run_count; r++) {
                std::vector<float> us;
                int k = 0;
                for (int s = 0; s < warmup + samples; s++) {
                    float ms;
                    check_hold(cr_stream_hold_hold(hold, 0, &error), error);
                    CHECK_CUDA(cudaEventRecord(start, stream));
                    for (int b = 0; b < batch; b++, k++) {
                        runs[r].run(float64, pool + (size_t)(k % buffers)
                                                 * bytes,
                                    n, state, outs + r, sm_count,
                                    runs[r].round, stream);
                    }
                    CHECK_CUDA(cudaGetLastError());
                    CHECK_CUDA(cudaEventRecord(stop, stream));
                    check_hold(cr_stream_hold_release(hold, &error), error);
                    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
                    if (s >= warmup) {
                        us.push_back(ms * 1000 / batch);
                    }
                }
                if (!runs[r].round) {
                    /* Its additions piled up: zero for the next tree. */
                    CHECK_CUDA(cudaMemset(state, 0, 4096));
                }
                std::sort(us.begin(), us.end());
                printf("  %s %.1f", runs[r].name, us[us.size() / 2]);
                if (runs[r].round) {
                    /* Every tree's last call summed the same buffer. */
                    unsigned long long bits = 0;
                    CHECK_CUDA(cudaMemcpy(&bits, outs + r, item,
                                          cudaMemcpyDeviceToHost));
                    if (first) {
                        first_bits = bits;
                        first = 0;
                    }
                    else if (bits != first_bits) {
                        printf("(BITS DIFFER)");
                    }
                }
            }
            printf("\n");
            fflush(stdout);
        }
    }
    cr_stream_hold_destroy(hold);
    return 0;
}

#else
#error "compile with -DTREE=name -DLAUNCHES=k (a unit) or -DTREES=... (the timer)"
#endif
