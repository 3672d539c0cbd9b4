/* dependent_launch.cuh: programmatic dependent launch (compute capability
 * 9.0 on): a kernel that reads what the kernel before it in the stream
 * wrote (a later pass of a reduction along axes, the exact sum's
 * rounding) is launched while that one drains, not after it, and waits
 * on the device for it to finish before it touches memory.  That hides
 * the launch between the two where they run back to back: 1.1 to 1.8 us
 * a call on an H200 (docs/recorded/axis-staged-2026-11-28-h200.txt).
 *
 * A kernel that may be launched so calls wait_for_prerequisite() before
 * any access to global memory; one that may be followed so calls
 * let_dependents_launch() early.  Both are no-ops in a kernel launched
 * the ordinary way (PTX ISA, griddepcontrol), and below sm_90, where
 * they are not compiled.  Only the kernel right before a dependent one
 * runs beside it, and it was itself launched after everything before it
 * finished (or waited for that), so the stream's order holds for every
 * other kernel and copy.
 */
#ifndef CUDAREDUCE_DEPENDENT_LAUNCH_CUH
#define CUDAREDUCE_DEPENDENT_LAUNCH_CUH

#include <cuda_runtime.h>

#include <utility>

/* Lets a kernel launched as this one's dependent start once every block
 * of this one has called this or exited. */
__device__ __forceinline__ void let_dependents_launch()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* Waits for the kernel this one was launched as a dependent of to finish
 * and its writes to be visible; at once if it was launched the ordinary
 * way. */
__device__ __forceinline__ void wait_for_prerequisite()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* Launches `kernel` on `stream`, as a programmatic dependent of the
 * kernel before it there where `dependent` (the caller asks
 * cr_current_dependent_launches whether the device has them), else the
 * ordinary way.  Returns the launch's error. */
template <class... Params, class... Args>
static cudaError_t
launch_kernel(bool dependent, void (*kernel)(Params...), dim3 grid,
              dim3 block, size_t shared_bytes, cudaStream_t stream,
              Args &&...args)
{
    cudaLaunchAttribute attribute = {};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = dependent ? 1 : 0;
    return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

#endif /* CUDAREDUCE_DEPENDENT_LAUNCH_CUH */
