/* instances_argmax.cu: the instances of argmax (every type, its value in
 * the max's accumulator beside its index) and of nanargmax (floats). */
#define CR_UNIT CR_UNIT_ARGMAX
#include "runners_impl.cuh"
