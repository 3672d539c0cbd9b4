/* instances.cu: the explicit instances of one unit of instances.def's rows
 * (run_passes, run_fast, run_cub, run_fold and run_rows:
 * runners_impl.cuh).
 *
 * setup.py compiles this file once per unit that instances.def #defines
 * (CR_UNIT_<NAME> k), with -DCR_UNIT=k, into instances_<name>.o, so that
 * the units compile in parallel; the list of units is instances.def's
 * alone.
 */
#ifndef CR_UNIT
#error "instances.cu is compiled once per unit, with -DCR_UNIT=k (setup.py)"
#endif

#include "instances/runners_impl.cuh"
