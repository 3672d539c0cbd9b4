/* instances_nan.cu: the instances of the NaN-skipping operators of
 * floats (nansum, nanprod, nanmin, nanmax, nanmean). */
#define CR_UNIT CR_UNIT_NAN
#include "runners_impl.cuh"
