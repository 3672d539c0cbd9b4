/* instances_sum_integer.cu: the instances of sums of bool and integers
 * (64-bit wrapping, and float64 for a mean). */
#define CR_UNIT CR_UNIT_SUM_INTEGER
#include "runners_impl.cuh"
