/* instances_all.cu: the instances of all, the product into bool (a
 * logical and; also min of bool). */
#define CR_UNIT CR_UNIT_ALL
#include "runners_impl.cuh"
