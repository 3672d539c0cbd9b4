/* instances_sum_signed.cu: the instances of sums of bool and signed
 * integers (64-bit wrapping, float32 and float64 accumulators). */
#define CR_UNIT CR_UNIT_SUM_SIGNED
#include "runners_impl.cuh"
