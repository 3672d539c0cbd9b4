/* kernels_min.cu: the instances of min in the element type (float16
 * compared as float32, which holds every float16 exactly). */
#define CR_UNIT CR_UNIT_MIN
#include "passes_impl.cuh"
