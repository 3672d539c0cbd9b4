/* kernels_min.cu: min in the element type (float16 compared as float32,
 * which holds every float16 exactly). */
#include "passes_impl.cuh"

CR_INSTANTIATE_MIN(bool, bool)
CR_INSTANTIATE_MIN(int8_t, int8_t)
CR_INSTANTIATE_MIN(int16_t, int16_t)
CR_INSTANTIATE_MIN(int32_t, int32_t)
CR_INSTANTIATE_MIN(int64_t, int64_t)
CR_INSTANTIATE_MIN(uint8_t, uint8_t)
CR_INSTANTIATE_MIN(uint16_t, uint16_t)
CR_INSTANTIATE_MIN(uint32_t, uint32_t)
CR_INSTANTIATE_MIN(uint64_t, uint64_t)
CR_INSTANTIATE_MIN(__half, float)
CR_INSTANTIATE_MIN(float, float)
CR_INSTANTIATE_MIN(double, double)
