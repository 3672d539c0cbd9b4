/* kernels_sum_unsigned.cu: sums of unsigned integers (64-bit wrapping,
 * float32 and float64 accumulators). */
#include "passes_impl.cuh"

CR_INSTANTIATE_SUM_INTEGER(uint8_t)
CR_INSTANTIATE_SUM_INTEGER(uint16_t)
CR_INSTANTIATE_SUM_INTEGER(uint32_t)
CR_INSTANTIATE_SUM_INTEGER(uint64_t)
