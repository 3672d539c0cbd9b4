/* kernels_max.cu: max in the element type (float16 compared as float32,
 * which holds every float16 exactly). */
#include "passes_impl.cuh"

CR_INSTANTIATE_MAX(bool, bool)
CR_INSTANTIATE_MAX(int8_t, int8_t)
CR_INSTANTIATE_MAX(int16_t, int16_t)
CR_INSTANTIATE_MAX(int32_t, int32_t)
CR_INSTANTIATE_MAX(int64_t, int64_t)
CR_INSTANTIATE_MAX(uint8_t, uint8_t)
CR_INSTANTIATE_MAX(uint16_t, uint16_t)
CR_INSTANTIATE_MAX(uint32_t, uint32_t)
CR_INSTANTIATE_MAX(uint64_t, uint64_t)
CR_INSTANTIATE_MAX(__half, float)
CR_INSTANTIATE_MAX(float, float)
CR_INSTANTIATE_MAX(double, double)
