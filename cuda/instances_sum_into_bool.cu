/* instances_sum_into_bool.cu: the instances of sums into bool
 * (dtype=bool): a logical or, the max of the elements cast to bool. */
#define CR_UNIT CR_UNIT_SUM_INTO_BOOL
#include "runners_impl.cuh"
