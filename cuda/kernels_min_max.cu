/* kernels_min_max.cu: min and max, in the element type (float16 compared
 * as float32, which holds every float16 exactly). */
#include "passes_impl.cuh"

CR_INSTANTIATE_MIN_MAX(bool, bool)
CR_INSTANTIATE_MIN_MAX(int8_t, int8_t)
CR_INSTANTIATE_MIN_MAX(int16_t, int16_t)
CR_INSTANTIATE_MIN_MAX(int32_t, int32_t)
CR_INSTANTIATE_MIN_MAX(int64_t, int64_t)
CR_INSTANTIATE_MIN_MAX(uint8_t, uint8_t)
CR_INSTANTIATE_MIN_MAX(uint16_t, uint16_t)
CR_INSTANTIATE_MIN_MAX(uint32_t, uint32_t)
CR_INSTANTIATE_MIN_MAX(uint64_t, uint64_t)
CR_INSTANTIATE_MIN_MAX(__half, float)
CR_INSTANTIATE_MIN_MAX(float, float)
CR_INSTANTIATE_MIN_MAX(double, double)
