/* instances_max.cu: the instances of max in the element type (float16
 * compared as float32, which holds every float16 exactly; bool's is any). */
#define CR_UNIT CR_UNIT_MAX
#include "runners_impl.cuh"
