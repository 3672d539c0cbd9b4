/* harness_errors.h: how the CUDA harnesses of benchmarks/ (axis_passes.cu,
 * exact_launches.cu) end on an error: a CUDA call's failure, a CUDA error
 * recorded by the library code they link, or the bench's stream holder
 * giving up, each said on stderr and exit status 1.  Included once a
 * harness: it defines device.cu's cr_record_cuda_error, which they do not
 * link. */
#ifndef CUDAREDUCE_HARNESS_ERRORS_H
#define CUDAREDUCE_HARNESS_ERRORS_H

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "cudareduce_timing.h"

#define CHECK_CUDA(call)                                                  \
    do {                                                                  \
        cudaError_t e_ = (call);                                          \
        if (e_ != cudaSuccess) {                                          \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,            \
                    cudaGetErrorString(e_));                              \
            exit(1);                                                      \
        }                                                                 \
    } while (0)

/* device.cu's: a CUDA error in the library's code ends the run. */
cr_status
cr_record_cuda_error(cudaError_t code, const char *call, cr_error *error)
{
    (void)error;
    fprintf(stderr, "%s: %s\n", call, cudaGetErrorString(code));
    exit(1);
}

/* Ends the run where the stream holder fails (it gave up waiting). */
static void
check_hold(cr_status status, const cr_error &error)
{
    if (status != CR_OK) {
        fprintf(stderr, "stream holder: %s\n", error.message);
        exit(1);
    }
}

#endif /* CUDAREDUCE_HARNESS_ERRORS_H */
