/* axis_passes.cu: the passes of a reduction along an axis (run_rows, as
 * cuda/axes.cu runs them into a device out) of one tree's kernels, timed
 * alone: the sums of int8, float16 and float32 over the --axis bench's
 * shapes, so that trees (commits, or a kernel's variants) compare in one
 * device call without building the whole extension for each.
 *
 * It links the tree's own instance units of those sums (instances.def's
 * SUM_INTEGER and SUM_FLOAT, units 1 and 2), compiled as setup.py
 * compiles them: the kernels are the library's, instruction for
 * instruction (the same kernel compiled into another file came out
 * another size: the compiler's choices depend on the file).  Build it
 * against a tree T:
 *   F="-O3 -std=c++17 --expt-relaxed-constexpr -lineinfo
 *      -gencode=arch=compute_90,code=sm_90 -I$T/cuda -I$T/cuda/include"
 *   nvcc $F -DCR_UNIT=1 -c $T/cuda/instances/instances.cu -o sums1.o
 *   nvcc $F -DCR_UNIT=2 -c $T/cuda/instances/instances.cu -o sums2.o
 *   nvcc $F -DCR_UNIT=10 -c $T/cuda/instances/instances.cu -o argmax.o
 *   nvcc $F -o axis_passes benchmarks/axis_passes.cu sums1.o sums2.o
 *     argmax.o
 *     $T/cuda/rows_plan.c $T/cuda/facts.c $T/cuda/fail.c
 *     $T/cuda/bench/stream_hold.cu
 * Run: ./axis_passes [label [dtype rows columns axis]] (dtype int8,
 * float16, float32 or argmax, whose elements are float32; the second form
 * runs that case alone, for a profiler: its first launches are the
 * untimed call's passes); a line a case: the median of back-to-back
 * calls (a batch queued behind the bench's stream holder,
 * cudareduce_timing.h, inputs rotated past L2), in us, and whether
 * the results were checked right against the host's (integers exact,
 * floats within 1e-3 relative of a double sum).
 *
 * The trees since the harness differ in cr_rows_plan_passes' arguments
 * (+ whether any order of combining gives the same bits: the integer
 * sums') and run_rows' (+ the last pass's finish); plan_of and run_pass
 * take each.  A tree whose plan has dependent_launches launches its later
 * passes as programmatic dependents of the pass before, as the library
 * does on compute capability 9.0 and later, unless AXIS_PASSES_DEPENDENT
 * is 0 in the environment (the same kernels launched the ordinary way).
 * Beside the sums, float32 argmax over (32, 2^17) along axis 1, the
 * --axis bench's index case (instances.def's CR_UNIT_ARGMAX, 10).
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <type_traits>
#include <vector>

#include "harness_errors.h"
#include "runners.cuh"

template <class F>
static void plan_of(F passes, const cr_rows *rows, size_t item,
                    int any_order, cr_rows_plan *plan)
{
    if constexpr (std::is_invocable_v<F, const cr_rows *, size_t,
                                      cr_rows_plan *>) {
        passes(rows, item, plan);
    }
    else {
        passes(rows, item, any_order, plan);
    }
}

/* Sets the plan's dependent_launches where the tree has the field. */
template <class P>
static auto set_dependent(P &plan, int dependent, int)
    -> decltype(plan.dependent_launches = dependent, void())
{
    plan.dependent_launches = dependent;
}

template <class P>
static void set_dependent(P &, int, long)
{
}

/* A pass by run_rows, writing accumulators: the trees from the last
 * pass's own finish on (float sums into the out's dtype) take that
 * finish as an argument, NULL here. */
template <class F>
static cr_status run_pass(F run, const cr_rows_plan *plan, int p,
                          const void *in, const cr_rows_geometry *geometry,
                          int64_t rows, int64_t stride, void *out,
                          int64_t chunk_bytes, cudaStream_t stream,
                          cr_error *error)
{
    if constexpr (std::is_invocable_v<F, const cr_rows_plan *, int,
                                      const void *, const cr_rows_geometry *,
                                      int64_t, int64_t, void *, int64_t,
                                      cudaStream_t, cr_error *>) {
        return run(plan, p, in, geometry, rows, stride, out, chunk_bytes,
                   stream, error);
    }
    else {
        return run(plan, p, in, geometry, rows, stride, out, chunk_bytes,
                   nullptr, stream, error);
    }
}

/* One reduction of a (rows_count, columns) C-contiguous array along
 * `axis` into a packed device out, as axes.cu runs it. */
template <class T, class Acc, class Op>
struct axis_call {
    cr_rows rows{};
    cr_rows_plan plan{};
    unsigned char *partials[2] = {nullptr, nullptr};
    unsigned char *out = nullptr;

    axis_call(int64_t rows_count, int64_t columns, int axis)
    {
        rows.kept_ndim = 1;
        rows.rows = axis == 1 ? rows_count : columns;
        rows.length = axis == 1 ? columns : rows_count;
        rows.stride = axis == 1 ? sizeof(T) : columns * sizeof(T);
        rows.kept_shape[0] = rows.rows;
        rows.kept_strides[0] = axis == 1 ? columns * sizeof(T) : sizeof(T);
        rows.out_strides[0] = sizeof(Acc);
        /* operators.cuh's any_order of these operators, written out:
         * the trees before it have no such name. */
        plan_of(cr_rows_plan_passes, &rows, sizeof(T),
                std::is_integral_v<Acc> || is_indexed<Acc>::value, &plan);
        const char *dependent = getenv("AXIS_PASSES_DEPENDENT");
        set_dependent(plan, dependent == nullptr || atoi(dependent) != 0,
                      0);
        for (int p = 0; p + 1 < plan.count && p < 2; p++) {
            CHECK_CUDA(cudaMalloc(&partials[p], rows.rows
                                  * plan.pass[p].chunks * sizeof(Acc)));
        }
        CHECK_CUDA(cudaMalloc(&out, rows.rows * sizeof(Acc)));
    }

    ~axis_call()
    {
        cudaFree(partials[0]);
        cudaFree(partials[1]);
        cudaFree(out);
    }

    void run(const void *in, cudaStream_t stream)
    {
        const int64_t acc = sizeof(Acc);
        for (int p = 0; p < plan.count; p++) {
            const bool last = p == plan.count - 1;
            cr_rows_geometry geometry{};
            geometry.ndim = 1;
            geometry.shape[0] = rows.rows;
            geometry.in_strides[0] = p == 0 ? rows.kept_strides[0]
                                            : plan.pass[p].length * acc;
            geometry.out_strides[0] = last ? acc : plan.pass[p].chunks * acc;
            cr_rows_merge(&geometry);
            cr_error error{};
            if (run_pass(run_rows<T, Acc, Op>, &plan, p,
                         p == 0 ? in : partials[(p - 1) % 2], &geometry,
                         rows.rows, p == 0 ? rows.stride : acc,
                         last ? out : partials[p % 2], acc, stream,
                         &error) != CR_OK) {
                fprintf(stderr, "run_rows failed: %s\n", error.message);
                exit(1);
            }
        }
    }
};

/* Elements from a hash of their index: small integers, exact in every
 * type's sum. */
template <class T>
__global__ void fill(T *p, int64_t n, uint32_t seed)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint32_t x = (uint32_t)i * 2654435761u ^ seed;
        x ^= x >> 13;
        x *= 0x5bd1e995u;
        x ^= x >> 15;
        p[i] = T((int)(x % 7) - 3);
    }
}

template <class T>
static double host_value(T v)
{
    if constexpr (std::is_same_v<T, __half>) {
        return (double)__half2float(v);
    }
    else {
        return (double)v;
    }
}

template <class T, class Acc, class Op>
static const char *checked(axis_call<T, Acc, Op> &call, const T *device,
                           int64_t rows_count, int64_t columns, int axis)
{
    std::vector<T> h(rows_count * columns);
    CHECK_CUDA(cudaMemcpy(h.data(), device, h.size() * sizeof(T),
                          cudaMemcpyDeviceToHost));
    std::vector<Acc> got(call.rows.rows);
    CHECK_CUDA(cudaMemcpy(got.data(), call.out, got.size() * sizeof(Acc),
                          cudaMemcpyDeviceToHost));
    if constexpr (is_indexed<Acc>::value) {
        /* argmax: the first index of the row's largest element */
        for (int64_t r = 0; r < call.rows.rows; r++) {
            int64_t best = 0;
            for (int64_t k = 1; k < call.rows.length; k++) {
                if (h[r * columns + k] > h[r * columns + best]) {
                    best = k;
                }
            }
            if (axis != 1 || got[r].index != best) {
                return "WRONG";
            }
        }
    }
    else {
        for (int64_t r = 0; r < call.rows.rows; r++) {
            double sum = 0;
            for (int64_t k = 0; k < call.rows.length; k++) {
                sum += host_value(axis == 1 ? h[r * columns + k]
                                            : h[k * columns + r]);
            }
            const double value = std::is_integral_v<Acc>
                                 ? (double)(int64_t)got[r] : (double)got[r];
            if (std::fabs(value - sum)
                > (std::is_integral_v<Acc> ? 0.0
                                           : 1e-3 * std::fabs(sum) + 1e-3)) {
                return "WRONG";
            }
        }
    }
    return "ok";
}

/* The median over 15 batches of 10 calls of the time a call. */
template <class F>
static double back_to_back(F call, cudaStream_t stream,
                           cr_stream_hold *hold)
{
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    std::vector<double> us;
    int k = 0;
    for (int r = -2; r < 15; r++) {
        cr_error error{};
        check_hold(cr_stream_hold_hold(hold, 0, &error), error);
        CHECK_CUDA(cudaEventRecord(start, stream));
        for (int i = 0; i < 10; i++) {
            call(k++);
        }
        CHECK_CUDA(cudaEventRecord(stop, stream));
        check_hold(cr_stream_hold_release(hold, &error), error);
        float ms;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        if (r >= 0) {
            us.push_back(ms * 1e3 / 10);
        }
    }
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
}

template <class T, class Acc, class Op>
static void time_case(const char *label, const char *dtype,
                      int64_t rows_count, int64_t columns, int axis,
                      cudaStream_t stream, cr_stream_hold *hold)
{
    const int64_t n = rows_count * columns;
    const int64_t bytes = n * (int64_t)sizeof(T);
    /* Enough inputs to pass 200 MiB, the H100's and H200's L2 four
     * times over, at most 8. */
    const int count = (int)std::min<int64_t>(8, ((200ll << 20) + bytes - 1)
                                                / bytes);
    std::vector<T *> inputs(count);
    for (auto &input : inputs) {
        CHECK_CUDA(cudaMalloc(&input, bytes));
        fill<<<1024, 256, 0, stream>>>(input, n, (uint32_t)(uintptr_t)input);
        CHECK_CUDA(cudaGetLastError());
    }
    axis_call<T, Acc, Op> call(rows_count, columns, axis);
    /* A first call with the stream not held: the first launch of a kernel
     * loads its module (CUDA's lazy loading), which waits for the device,
     * so behind the holder it would wait for ever (the harness's first
     * run hung so: docs/recorded/axis-passes-2026-11-28-h200.txt). */
    call.run(inputs[0], stream);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    const double us = back_to_back(
        [&](int k) { call.run(inputs[k % count], stream); }, stream,
        hold);
    call.run(inputs[0], stream);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    printf("%s %-8s (%lld, %lld) axis %d %9.1f us  %d passes, pass 0 "
           "kernel %d  %s\n", label, dtype, (long long)rows_count,
           (long long)columns, axis, us, call.plan.count,
           (int)call.plan.pass[0].kernel,
           checked(call, inputs[0], rows_count, columns, axis));
    fflush(stdout);
    for (auto &input : inputs) {
        CHECK_CUDA(cudaFree(input));
    }
}

int main(int argc, char **argv)
{
    const char *label = argc > 1 ? argv[1] : "tree";
    const bool one = argc == 6;
    if (argc > 2 && !one) {
        fprintf(stderr, "usage: %s [label [dtype rows columns axis]]\n",
                argv[0]);
        return 2;
    }
    struct shape {
        int64_t rows, columns;
        int axis;
    };
    const shape shapes[] = {
        {1 << 24, 4, 1},  {4, 1 << 24, 1},       {4096, 4096, 1},
        {4096, 4096, 0},  {1 << 24, 4, 0},       {4, 1 << 24, 0},
        {1 << 16, 1 << 10, 1}, {1 << 16, 1 << 10, 0},
        {1 << 10, 1 << 16, 1}, {1 << 10, 1 << 16, 0},
    };
    const shape argmax_shape = {32, 1 << 17, 1};
    auto wanted = [&](const char *dtype, const shape &s) {
        return !one || (strcmp(argv[2], dtype) == 0
                        && atoll(argv[3]) == s.rows
                        && atoll(argv[4]) == s.columns
                        && atoi(argv[5]) == s.axis);
    };
    if (one && !wanted("argmax", argmax_shape)
        && std::none_of(std::begin(shapes), std::end(shapes),
                        [&](const shape &s) {
                            return wanted("int8", s)
                                   || wanted("float16", s)
                                   || wanted("float32", s);
                        })) {
        fprintf(stderr, "no case is %s (%s, %s) along axis %s\n", argv[2],
                argv[3], argv[4], argv[5]);
        return 2;
    }
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cr_stream_hold *hold = nullptr;
    cr_error error{};
    check_hold(cr_stream_hold_create((uintptr_t)stream, &hold, &error),
               error);
    for (const shape &s : shapes) {
        if (wanted("int8", s)) {
            time_case<int8_t, uint64_t, SumOp<uint64_t>>(
                label, "int8", s.rows, s.columns, s.axis, stream, hold);
        }
        if (wanted("float16", s)) {
            time_case<__half, float, SumOp<float>>(
                label, "float16", s.rows, s.columns, s.axis, stream, hold);
        }
        if (wanted("float32", s)) {
            time_case<float, float, SumOp<float>>(
                label, "float32", s.rows, s.columns, s.axis, stream, hold);
        }
    }
    if (wanted("argmax", argmax_shape)) {
        time_case<float, indexed<float>, ArgMaxOp<float>>(
            label, "argmax", argmax_shape.rows, argmax_shape.columns,
            argmax_shape.axis, stream, hold);
    }
    cr_stream_hold_destroy(hold);
    CHECK_CUDA(cudaStreamDestroy(stream));
    return 0;
}
