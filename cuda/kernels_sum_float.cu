/* kernels_sum_float.cu: sums of floating-point elements (float16 in a
 * float32 accumulator; any float into float32 or float64). */
#include "passes_impl.cuh"

CR_INSTANTIATE_SUM_FLOAT(__half, float, double)
CR_INSTANTIATE_SUM_FLOAT(float, float, double)
CR_INSTANTIATE_SUM_FLOAT(double, double, float)
