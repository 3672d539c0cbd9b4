/* instances_sum_signed.cu: the instances of sums of bool and signed
 * integers (64-bit wrapping, and float64 for a mean). */
#define CR_UNIT CR_UNIT_SUM_SIGNED
#include "runners_impl.cuh"
