/* instances_any.cu: the instances of any, the sum into bool (a logical
 * or; also max of bool). */
#define CR_UNIT CR_UNIT_ANY
#include "runners_impl.cuh"
