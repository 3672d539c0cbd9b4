/* instances_argmin.cu: the instances of argmin (every type, its value in
 * the min's accumulator beside its index) and of nanargmin (floats). */
#define CR_UNIT CR_UNIT_ARGMIN
#include "runners_impl.cuh"
