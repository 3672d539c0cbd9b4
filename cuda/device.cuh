/* device.cuh: what the CUDA layer asks of the current device, kept
 * (device.cu). */
#ifndef CUDAREDUCE_DEVICE_CUH
#define CUDAREDUCE_DEVICE_CUH

#include "cudareduce.h"

/* The current device's SM count, which sizes the grids: asked of CUDA
 * once per device (it never changes), as a small call plans its grid on
 * every call. */
cr_status cr_current_sm_count(int *sm_count, cr_error *error);

/* Whether the current device launches kernels as programmatic dependents
 * of the one before them (dependent_launch.cuh): compute capability 9.0
 * on; asked of CUDA once per device. */
cr_status cr_current_dependent_launches(int *allowed, cr_error *error);

#endif /* CUDAREDUCE_DEVICE_CUH */
