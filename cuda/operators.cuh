/* operators.cuh: reduction operators, each an identity and a combine.
 *
 * Kernels are written once against this shape and instantiated per
 * (element type, accumulator, operator, block size).
 */
#ifndef CUDAREDUCE_OPERATORS_CUH
#define CUDAREDUCE_OPERATORS_CUH

template <class Acc>
struct SumOp {
    __host__ __device__ static constexpr Acc identity() { return Acc(0); }
    __device__ Acc operator()(Acc a, Acc b) const { return a + b; }
};

#endif /* CUDAREDUCE_OPERATORS_CUH */
