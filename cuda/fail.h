/* fail.h: the one way the CUDA layer reports a failure that is not a CUDA
 * error (fail.c; CUDA's own: cr_record_cuda_error in check.cuh).  Plain C,
 * for plan.c as well as the .cu files. */
#ifndef CUDAREDUCE_FAIL_H
#define CUDAREDUCE_FAIL_H

#include "cudareduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills `error` (no CUDA code, the message printf-formatted) and returns
 * `status`. */
cr_status cr_fail(cr_error *error, cr_status status, const char *format,
                  ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif /* CUDAREDUCE_FAIL_H */
