/* instances_sum_unsigned.cu: the instances of sums of unsigned integers
 * (64-bit wrapping, float32 and float64 accumulators). */
#define CR_UNIT CR_UNIT_SUM_UNSIGNED
#include "runners_impl.cuh"
