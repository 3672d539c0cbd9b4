/* instances_sum_unsigned.cu: the instances of sums of unsigned integers
 * (64-bit wrapping, and float64 for a mean). */
#define CR_UNIT CR_UNIT_SUM_UNSIGNED
#include "runners_impl.cuh"
