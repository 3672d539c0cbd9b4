/* check.cuh: the error idiom of the CUDA layer.
 *
 * A function that can fail returns a cr_status and fills the caller's
 * cr_error.  CR_CHECK wraps each CUDA call: on failure it records the
 * error (code, CUDA's name and text, the failing call) in `status` and
 * jumps to the function's `done:` label, the one exit, through which
 * success flows too and which frees what the function owns (a failure-only
 * release tests status there).  Any other failure is reported with
 * cr_fail (fail.h).  Nothing here aborts the process.
 */
#ifndef CUDAREDUCE_CHECK_CUH
#define CUDAREDUCE_CHECK_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"
#include "fail.h"

/* Records a CUDA error; returns the cr_status it maps to (device.cu). */
cr_status cr_record_cuda_error(cudaError_t code, const char *call,
                               cr_error *error);

/* Needs `cr_status status`, `cr_error *error` and a `done:` label. */
#define CR_CHECK(call)                                                  \
    do {                                                                \
        cudaError_t cr_check_code_ = (call);                            \
        if (cr_check_code_ != cudaSuccess) {                            \
            status = cr_record_cuda_error(cr_check_code_, #call, error); \
            goto done;                                                  \
        }                                                               \
    } while (0)

#endif /* CUDAREDUCE_CHECK_CUH */
