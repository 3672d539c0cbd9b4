/* kernels_sum_signed.cu: sums of bool and signed integers (64-bit
 * wrapping, float32 and float64 accumulators). */
#include "passes_impl.cuh"

CR_INSTANTIATE_SUM_INTEGER(bool)
CR_INSTANTIATE_SUM_INTEGER(int8_t)
CR_INSTANTIATE_SUM_INTEGER(int16_t)
CR_INSTANTIATE_SUM_INTEGER(int32_t)
CR_INSTANTIATE_SUM_INTEGER(int64_t)
