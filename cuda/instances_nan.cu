/* instances_nan.cu: the instances of nanmin and nanmax of floats and of
 * nanmean (nansum and nanprod are with sum and prod). */
#define CR_UNIT CR_UNIT_NAN
#include "runners_impl.cuh"
