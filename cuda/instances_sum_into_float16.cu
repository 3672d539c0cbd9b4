/* instances_sum_into_float16.cu: the instances of sums into float16
 * (dtype=float16): each element rounded to float16, summed in float32. */
#define CR_UNIT CR_UNIT_SUM_INTO_FLOAT16
#include "runners_impl.cuh"
