/* instances_prod.cu: the instances of products (integers wrapping in
 * 64 bits, float16 and bfloat16 in a float32 accumulator) and of nanprods
 * of floats and complex types. */
#define CR_UNIT CR_UNIT_PROD
#include "runners_impl.cuh"
