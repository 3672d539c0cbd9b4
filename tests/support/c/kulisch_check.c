/* kulisch_check.c: the exact accumulator (cuda/exact/kulisch.h) and the
 * per-thread window flushed into it (cuda/exact/window.h), without a GPU.
 * Built and fed by tests/test_kulisch.py.
 *
 * First checks the accumulator's capacity (2^62 times the largest double,
 * of either sign, doubled by merging an accumulator into itself) and
 * names each failed check on stderr.  Then reads cases from the file
 * named by its argument, whitespace-separated:
 *
 *   KIND THREADS CUTS c_1 .. c_CUTS N x_1 .. x_N
 *
 * KIND "d" adds the values as doubles, "f" as floats (each must be one);
 * the values are as strtod reads them (hex floats, inf, nan).  For each
 * case it prints a line: whether the accumulator of the finite values is
 * zero, then the result (cr_exact_result) of five ways of summing them:
 * in order; in reverse order; cut at c_1 <= .. <= c_CUTS into chunks,
 * each summed into its own accumulator and specials, merged last chunk
 * first; through one window (cr_window64 for doubles, cr_window32 for
 * floats) flushed into the accumulator; and, as a GPU's threads would,
 * through THREADS windows, thread t taking values t, t + THREADS, ..,
 * each flushed into its own accumulator and specials, merged last.  A
 * result is, for float64, float32, float16 and bfloat16, its bits in hex
 * and its overflow flag.  Last on the line, what the one window did: how
 * many times it was flushed at its count's bound, and how many times it
 * was re-based (its first element's placing included).
 *
 * A case of KIND "q" is a mean instead:
 *
 *   q D N x_1 .. x_N
 *
 * the values' exact sum divided by the count D (1 .. 2^63 - 1; any, not
 * only N), rounded once (cr_exact_mean_result): its line is the four
 * formats' results.  Exits 1 if a check failed or the file could not be
 * read, else 0. */
#include <float.h>
#include <inttypes.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include "exact/kulisch.h"
#include "exact/window.h"

static int failures = 0;

#define CHECK(condition)                                                   \
    do {                                                                   \
        if (!(condition)) {                                                \
            fprintf(stderr, "line %d: %s\n", __LINE__, #condition);       \
            failures++;                                                    \
        }                                                                  \
    } while (0)

static const cr_exact_format formats[] = {
    CR_EXACT_FLOAT64, CR_EXACT_FLOAT32, CR_EXACT_FLOAT16, CR_EXACT_BFLOAT16};

/* x times 2^62, by 62 doublings of an accumulator. */
static cr_kulisch
times_2_62(double x)
{
    cr_kulisch acc;
    cr_kulisch_clear(&acc);
    cr_kulisch_add_double(&acc, x);
    for (int k = 0; k < 62; k++) {
        cr_kulisch_merge(&acc, &acc);
    }
    return acc;
}

static void
check_capacity(void)
{
    cr_kulisch big = times_2_62(DBL_MAX), small = times_2_62(-DBL_MAX);
    cr_kulisch sum = big;
    int overflow;

    CHECK(cr_kulisch_round(&big, CR_EXACT_FLOAT64, &overflow)
          == UINT64_C(0x7ff0000000000000) && overflow);
    CHECK(cr_kulisch_round(&small, CR_EXACT_FLOAT64, &overflow)
          == UINT64_C(0xfff0000000000000) && overflow);
    cr_kulisch_merge(&sum, &small);
    CHECK(cr_kulisch_is_zero(&sum));
    /* 2^62 DBL_MAX - (2^62 - 1) DBL_MAX: no bit lost at the top. */
    cr_kulisch_add_double(&small, DBL_MAX);
    cr_kulisch_merge(&small, &big);
    CHECK(cr_kulisch_round(&small, CR_EXACT_FLOAT64, &overflow)
          == UINT64_C(0x7fefffffffffffff) && !overflow);
    cr_kulisch_clear(&big);
    CHECK(cr_kulisch_is_zero(&big));
}

/* Adds values [begin, end) in order (step 1) or reversed (step -1). */
static void
add_values(cr_kulisch *acc, cr_specials *specials, const double *values,
           long begin, long end, int step, int as_float)
{
    for (long k = 0; k < end - begin; k++) {
        const double x = values[step > 0 ? begin + k : end - 1 - k];
        if (cr_specials_note(specials, x)) {
            if (as_float) {
                cr_kulisch_add_float(acc, (float)x);
            }
            else {
                cr_kulisch_add_double(acc, x);
            }
        }
    }
}

/* Where x takes the window's common path, the kernels' put by the float
 * units (cr_window32_units, cr_window64_units) must add what the integer
 * put adds: checked on a copy of the window. */
static void
check_units32(const cr_window32 *w, float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof(bits));
    if ((bits >> 23 & 0xff) - (uint32_t)w->base < CR_WINDOW_SPAN
        && w->count < CR_WINDOW32_ADDS) {
        cr_window32 copy = *w;
        cr_window32_put(&copy, (bits & 0x7fffff) | 0x800000,
                        (bits >> 23 & 0xff) - (uint32_t)w->base,
                        (uint32_t)((int32_t)bits >> 31));
        CHECK((int64_t)(copy.sum - w->sum) == cr_window32_units(w, x));
    }
}

static void
check_units64(const cr_window64 *w, double x)
{
    uint64_t bits, low;
    int64_t high;
    memcpy(&bits, &x, sizeof(bits));
    if ((uint32_t)(bits >> 52 & 0x7ff) - (uint32_t)w->base < CR_WINDOW_SPAN
        && w->count < CR_WINDOW64_ADDS) {
        cr_window64 copy = *w;
        cr_window64_put(&copy, (bits & ((UINT64_C(1) << 52) - 1))
                                   | UINT64_C(1) << 52,
                        (uint32_t)(bits >> 52 & 0x7ff) - (uint32_t)w->base,
                        (uint32_t)((int64_t)bits >> 63));
        cr_window64_units(w, x, &low, &high);
        CHECK(copy.low - w->low == low
              && copy.high - w->high == (uint64_t)high);
    }
}

/* Sums values begin, begin + stride, .. below end through a window,
 * flushed into acc at the end; counts into moves[0] its flushes at the
 * count's bound (the base stays, the count drops) and into moves[1] its
 * re-basings (the base changes). */
static void
window_values(cr_kulisch *acc, cr_specials *specials, const double *values,
              long begin, long end, long stride, int as_float, long *moves)
{
    cr_window32 w32;
    cr_window64 w64;

    cr_window32_clear(&w32);
    cr_window64_clear(&w64);
    for (long k = begin; k < end; k += stride) {
        const int32_t base = as_float ? w32.base : w64.base;
        const uint32_t count = as_float ? w32.count : w64.count;
        if (as_float) {
            check_units32(&w32, (float)values[k]);
            cr_window32_add(&w32, acc, specials, (float)values[k]);
        }
        else {
            check_units64(&w64, values[k]);
            cr_window64_add(&w64, acc, specials, values[k]);
        }
        if ((as_float ? w32.base : w64.base) != base) {
            moves[1]++;
        }
        else if ((as_float ? w32.count : w64.count) < count) {
            moves[0]++;
        }
        CHECK(w32.count <= CR_WINDOW32_ADDS && w64.count <= CR_WINDOW64_ADDS);
    }
    cr_window32_flush(&w32, acc);
    cr_window64_flush(&w64, acc);
    CHECK(w32.sum == 0 && w32.count == 0);
    CHECK(w64.low == 0 && w64.high == 0 && w64.count == 0);
}

static void
print_results(const cr_kulisch *acc, const cr_specials *specials)
{
    for (int f = 0; f < 4; f++) {
        int overflow;
        const uint64_t bits = cr_exact_result(acc, specials, formats[f],
                                              &overflow);
        printf(" %" PRIx64 " %d", bits, overflow);
    }
}

/* Reads n values into a new array (NULL on bad input). */
static double *
read_values(FILE *file, long n)
{
    char text[64];
    double *values = malloc((size_t)(n + 1) * sizeof(*values));
    for (long k = 0; k < n; k++) {
        if (fscanf(file, "%63s", text) != 1) {
            free(values);
            return NULL;
        }
        values[k] = strtod(text, NULL);
    }
    return values;
}

/* A "q" case: its mean in each format.  1, or -1 on bad input. */
static int
run_quotient_case(FILE *file)
{
    unsigned long long count;
    long n;
    double *values;
    cr_kulisch acc;
    cr_specials specials;

    if (fscanf(file, "%llu", &count) != 1 || count == 0
        || fscanf(file, "%ld", &n) != 1 || n < 0
        || (values = read_values(file, n)) == NULL) {
        return -1;
    }
    cr_kulisch_clear(&acc);
    cr_specials_clear(&specials);
    add_values(&acc, &specials, values, 0, n, 1, 0);
    for (int f = 0; f < 4; f++) {
        int overflow;
        const uint64_t bits = cr_exact_mean_result(&acc, &specials, count,
                                                   formats[f], &overflow);
        printf("%s%" PRIx64 " %d", f ? " " : "", bits, overflow);
    }
    printf("\n");
    free(values);
    return 1;
}

/* Reads and sums one case; 0 at the end of the file, -1 on bad input. */
static int
run_case(FILE *file)
{
    char kind[2];
    long threads, cuts, n;
    long *cut;
    long moves[2] = {0, 0};
    double *values;
    cr_kulisch acc, part, *thread_acc;
    cr_specials specials, part_specials, *thread_specials;

    if (fscanf(file, "%1s", kind) != 1) {
        return 0;
    }
    if (kind[0] == 'q') {
        return run_quotient_case(file);
    }
    if (fscanf(file, "%ld", &threads) != 1 || threads < 1
        || fscanf(file, "%ld", &cuts) != 1 || cuts < 0) {
        return -1;
    }
    cut = malloc((size_t)(cuts + 2) * sizeof(*cut));
    for (long c = 1; c <= cuts; c++) {
        if (fscanf(file, "%ld", &cut[c]) != 1) {
            free(cut);
            return -1;
        }
    }
    if (fscanf(file, "%ld", &n) != 1 || n < 0) {
        free(cut);
        return -1;
    }
    if ((values = read_values(file, n)) == NULL) {
        free(cut);
        return -1;
    }
    cut[0] = 0;
    cut[cuts + 1] = n;
    const int as_float = kind[0] == 'f';

    cr_kulisch_clear(&acc);
    cr_specials_clear(&specials);
    add_values(&acc, &specials, values, 0, n, 1, as_float);
    printf("%d", cr_kulisch_is_zero(&acc));
    print_results(&acc, &specials);

    cr_kulisch_clear(&acc);
    cr_specials_clear(&specials);
    add_values(&acc, &specials, values, 0, n, -1, as_float);
    print_results(&acc, &specials);

    cr_kulisch_clear(&acc);
    cr_specials_clear(&specials);
    for (long c = cuts; c >= 0; c--) {
        cr_kulisch_clear(&part);
        cr_specials_clear(&part_specials);
        add_values(&part, &part_specials, values, cut[c], cut[c + 1], 1,
                   as_float);
        cr_kulisch_merge(&acc, &part);
        cr_specials_merge(&specials, &part_specials);
    }
    print_results(&acc, &specials);

    cr_kulisch_clear(&acc);
    cr_specials_clear(&specials);
    window_values(&acc, &specials, values, 0, n, 1, as_float, moves);
    print_results(&acc, &specials);

    thread_acc = malloc((size_t)threads * sizeof(*thread_acc));
    thread_specials = malloc((size_t)threads * sizeof(*thread_specials));
    for (long t = 0; t < threads; t++) {
        long ignored[2] = {0, 0};
        cr_kulisch_clear(&thread_acc[t]);
        cr_specials_clear(&thread_specials[t]);
        window_values(&thread_acc[t], &thread_specials[t], values, t, n,
                      threads, as_float, ignored);
    }
    for (long t = 1; t < threads; t++) {
        cr_kulisch_merge(&thread_acc[0], &thread_acc[t]);
        cr_specials_merge(&thread_specials[0], &thread_specials[t]);
    }
    print_results(&thread_acc[0], &thread_specials[0]);
    printf(" %ld %ld\n", moves[0], moves[1]);
    free(thread_acc);
    free(thread_specials);
    free(cut);
    free(values);
    return 1;
}

int
main(int argc, char **argv)
{
    FILE *file;
    int status;

    check_capacity();
    if (argc != 2 || !(file = fopen(argv[1], "r"))) {
        fprintf(stderr, "usage: kulisch_check CASES\n");
        return 1;
    }
    while ((status = run_case(file)) == 1) {
    }
    fclose(file);
    if (status < 0) {
        fprintf(stderr, "bad case\n");
    }
    return failures || status < 0;
}
