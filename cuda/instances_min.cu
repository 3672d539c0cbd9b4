/* instances_min.cu: the instances of min in the element type (float16
 * compared as float32, which holds every float16 exactly; bool's is all). */
#define CR_UNIT CR_UNIT_MIN
#include "runners_impl.cuh"
