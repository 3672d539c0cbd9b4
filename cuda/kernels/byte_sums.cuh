/* byte_sums.cuh: the fast kernel's sums of int8 and uint8, four bytes an
 * instruction.
 *
 * Element by element, each byte of a 16-byte load is a conversion and a
 * 64-bit add: the int8 sum was bound by those instructions, at 60% of the
 * floor at 2^24 elements (H100, issue 46).  __dp4a(word, 0x01010101,
 * lane) adds a word's four bytes to a 32-bit lane in one instruction,
 * signed for int8 and unsigned for uint8; a turn's loads go into one
 * lane, which is widened to the accumulator once.  A turn of the int8
 * sum's loop went from 143 instructions to 22 (the mean's from 156 to
 * 24), and its registers from 38 to 28, so that two blocks of 1,024
 * threads fit an SM where one did (cuobjdump and ptxas, sm_90, 1,024
 * threads).  On the H200, back to back, the int8 sum then ran at 61% of
 * the floor at 2^24 and 97% at 2^28
 * (docs/recorded/axis-finish-2026-11-28-h200.txt, item 5).
 *
 * No lane overflows, whatever n: a lane starts at 0 in each sum_bytes and
 * adds its LOADS * 16 bytes, each at most 128 (int8) or 255 (uint8) in
 * magnitude, so |lane| <= LOADS * 16 * 255 (8,160 at CR_FAST_UNROLL 2),
 * below 2^31 (the static_assert).  The bound is one turn's, not n's: a
 * longer run, to n = 2^62 and past, is only more turns, each widened.
 * Widened, an int8 lane is sign-extended and a uint8 lane zero-extended
 * into the 64-bit accumulator, whose additions wrap modulo 2^64 as
 * NumPy's int64 and uint64 sums do, so the sum is NumPy's for every n.
 * Into float64 (a mean's sum) each lane is exact, and every partial below
 * 2^53 as before.
 */
#ifndef CUDAREDUCE_BYTE_SUMS_CUH
#define CUDAREDUCE_BYTE_SUMS_CUH

#include <cuda/std/cstdint>
#include <cuda/std/limits>
#include <cuda/std/type_traits>

#include "kernels/operators.cuh"

/* Whether T's sums into Acc go through sum_bytes: int8's and uint8's.
 * Not bool's: a numpy_bool byte other than 0 counts 1, where a byte sum
 * would add its value. */
template <class T, class Acc, class Op>
inline constexpr bool sums_bytes =
    (cuda::std::is_same_v<T, int8_t> || cuda::std::is_same_v<T, uint8_t>)
    && cuda::std::is_same_v<Op, SumOp<Acc>>;

/* The bytes of LOADS 16-byte loads of T at `bits` added up in one 32-bit
 * lane, widened to the accumulator. */
template <class T, class Acc, int LOADS>
__device__ __forceinline__ Acc sum_bytes(const uint4 *bits)
{
    using Lane = cuda::std::conditional_t<cuda::std::is_signed_v<T>, int,
                                          unsigned int>;
    static_assert(LOADS * 16 * 255 <= cuda::std::numeric_limits<int>::max(),
                  "a turn's bytes overflow a 32-bit lane");
    constexpr Lane ONES = 0x01010101;
    Lane lane = 0;
#pragma unroll
    for (int l = 0; l < LOADS; l++) {
        lane = __dp4a(Lane(bits[l].x), ONES, lane);
        lane = __dp4a(Lane(bits[l].y), ONES, lane);
        lane = __dp4a(Lane(bits[l].z), ONES, lane);
        lane = __dp4a(Lane(bits[l].w), ONES, lane);
    }
    return Acc(lane);
}

#endif /* CUDAREDUCE_BYTE_SUMS_CUH */
