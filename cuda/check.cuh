/* check.cuh: CR_CHECK, the one way a CUDA call's failure is handled.
 *
 * On failure it fills the caller's cr_error (status code, CUDA error name and
 * text, the failing call) and jumps to the function's `error:` label, which
 * frees what the function owns.  Nothing here aborts the process.
 */
#ifndef CUDAREDUCE_CHECK_CUH
#define CUDAREDUCE_CHECK_CUH

#include <cuda_runtime.h>

#include "cudareduce.h"

/* Records a CUDA error; returns the cr_status it maps to. */
cr_status cr_record_cuda_error(cudaError_t code, const char *call,
                               cr_error *error);

/* Needs `cr_status status`, `cr_error *error` and an `error:` label. */
#define CR_CHECK(call)                                                  \
    do {                                                                \
        cudaError_t cr_check_code_ = (call);                            \
        if (cr_check_code_ != cudaSuccess) {                            \
            status = cr_record_cuda_error(cr_check_code_, #call, error); \
            goto error;                                                 \
        }                                                               \
    } while (0)

#endif /* CUDAREDUCE_CHECK_CUH */
