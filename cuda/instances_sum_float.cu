/* instances_sum_float.cu: the instances of sums of floats (float16 in a
 * float32 accumulator). */
#define CR_UNIT CR_UNIT_SUM_FLOAT
#include "runners_impl.cuh"
