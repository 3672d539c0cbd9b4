/* cudareduce_testing.h: hooks for the tests (host_path.cu). */
#ifndef CUDAREDUCE_TESTING_H
#define CUDAREDUCE_TESTING_H

#include "cudareduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For tests: the next host reduction that reaches chunk `chunk` (from 0)
 * fails there, with that chunk's copy and reduction queued, as if a CUDA
 * call had run out of memory; a negative chunk cancels.  No input can
 * reach that error path, because a host call allocates everything before
 * its first chunk. */
void cr_inject_host_fault(int64_t chunk);

#ifdef __cplusplus
}
#endif

#endif /* CUDAREDUCE_TESTING_H */
