/* flagged_words.cuh: a value of up to 8 bytes carried as 64-bit words,
 * each 32 bits of it in a word's low half beside a flag in its high half.
 * An aligned 64-bit store is seen whole or not at all, by another block
 * and by the host polling mapped memory alike, so a reader that sees the
 * flag in every word has the value, with no fence between the value and
 * a separate flag: the fast method's partials cross the grid this way,
 * and its result reaches the host so. */
#ifndef CUDAREDUCE_FLAGGED_WORDS_CUH
#define CUDAREDUCE_FLAGGED_WORDS_CUH

#include <cstdint>
#include <cstring>

#include "tuning.h"

/* The words of a value of `size` bytes, and their bytes. */
#define CR_FLAGGED_WORDS(size) (((size) + 3) / 4)
#define CR_FLAGGED_BYTES(size) (CR_FLAGGED_WORDS(size) * 8)

/* `value` into its words, each flagged `flag` (not 0). */
template <class V>
__device__ __forceinline__ void
cr_store_flagged(V value, unsigned long long *words, unsigned int flag)
{
    constexpr int COUNT = CR_FLAGGED_WORDS(sizeof(V));
    unsigned int bits[COUNT] = {};
    memcpy(bits, &value, sizeof(V));
#pragma unroll
    for (int w = 0; w < COUNT; w++) {
        *(volatile unsigned long long *)(words + w) =
            (unsigned long long)flag << 32 | bits[w];
    }
}

/* The value of `size` bytes in `count` words read whole. */
__host__ __device__ inline void
cr_unpack_flagged(const unsigned long long *read, int count, void *value,
                  size_t size)
{
    unsigned int bits[CR_FLAGGED_WORDS(CR_MAX_ACCUMULATOR_BYTES)] = {};
    for (int w = 0; w < count
                    && w < CR_FLAGGED_WORDS(CR_MAX_ACCUMULATOR_BYTES); w++) {
        bits[w] = (unsigned int)read[w];
    }
    memcpy(value, bits, size);
}

#endif /* CUDAREDUCE_FLAGGED_WORDS_CUH */
