/* instances_sum_float.cu: the instances of sums of floats (float16 in a
 * float32 accumulator; any float into float32 or float64, and into
 * integers through NumPy's casts). */
#define CR_UNIT CR_UNIT_SUM_FLOAT
#include "runners_impl.cuh"
