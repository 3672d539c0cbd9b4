/* instances_sum_float.cu: the instances of sums and nansums of floats and
 * complex types (float16 and bfloat16 in a float32 accumulator). */
#define CR_UNIT CR_UNIT_SUM_FLOAT
#include "runners_impl.cuh"
