// CUB's GPU-to-GPU deterministic sum (cub::DeviceReduce::Reduce with
// cuda::execution::determinism::gpu_to_gpu, CCCL >= 3.1) as a shared
// library that `python -m cudareduce.bench --exact --gpu-to-gpu LIB` loads
// with ctypes and times beside exact=True, as issue 44 asks.  It is a
// bench-only peer, outside the extension: the toolkit's CCCL (3.0.1 in
// CUDA 13.0) has no gpu_to_gpu, and the extension builds with the
// toolkit's.
//
// Build (CCCL's headers from a checkout of NVIDIA/cccl, tag v3.1.0 or
// later, in $CCCL):
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC \
//        -I$CCCL/cub -I$CCCL/libcudacxx/include -I$CCCL/thrust \
//        -o cub_gpu_to_gpu.so benchmarks/cub_gpu_to_gpu.cu
//
// The call is CUB's public one: temporary storage comes from the
// stream-ordered pool of the device (cudaMallocAsync, cudaFreeAsync on
// the call's stream), which keeps its memory here (its release threshold
// raised once) as CuPy's and PyTorch's caching allocators keep theirs.
#include <cub/device/device_reduce.cuh>
#include <cuda/std/execution>
#include <cuda/std/functional>
#include <cuda/stream_ref>
#include <cuda/version>

#include <cstdint>

namespace {

cudaError_t keep_pool_memory()
{
    static cudaError_t kept = [] {
        int device = 0;
        cudaMemPool_t pool;
        cudaError_t error = cudaGetDevice(&device);
        if (error == cudaSuccess) {
            error = cudaDeviceGetDefaultMemPool(&pool, device);
        }
        if (error == cudaSuccess) {
            std::uint64_t threshold = UINT64_MAX;
            error = cudaMemPoolSetAttribute(
                pool, cudaMemPoolAttrReleaseThreshold, &threshold);
        }
        return error;
    }();
    return kept;
}

template <typename T>
cudaError_t sum(const void *in, void *out, long long n, cudaStream_t stream)
{
    auto env = cuda::std::execution::env{
        cuda::stream_ref{stream},
        cuda::execution::require(cuda::execution::determinism::gpu_to_gpu)};
    return cub::DeviceReduce::Reduce(static_cast<const T *>(in),
                                     static_cast<T *>(out), n,
                                     cuda::std::plus<T>{}, T{0}, env);
}

}  // namespace

extern "C" {

// The sum of n elements at `in` (dtype 0: float32, 1: float64) written to
// `out`, queued on `stream`; a cudaError_t.
int cub_gpu_to_gpu_sum(const void *in, void *out, long long n, int dtype,
                       void *stream)
{
    cudaError_t error = keep_pool_memory();
    if (error != cudaSuccess) {
        return error;
    }
    auto s = static_cast<cudaStream_t>(stream);
    switch (dtype) {
    case 0:
        error = sum<float>(in, out, n, s);
        break;
    case 1:
        error = sum<double>(in, out, n, s);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return error != cudaSuccess ? error : cudaGetLastError();
}

const char *cub_gpu_to_gpu_error_name(int error)
{
    return cudaGetErrorName(static_cast<cudaError_t>(error));
}

// CCCL's version, major * 1000000 + minor * 1000 + patch.
int cub_gpu_to_gpu_cccl_version(void)
{
    return CCCL_VERSION;
}

}  // extern "C"
