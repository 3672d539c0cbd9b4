/* kulisch_check.c: the exact accumulator (cuda/exact/kulisch.h), without
 * a GPU.  Built and fed by tests/test_kulisch.py.
 *
 * First checks the accumulator's capacity (2^62 times the largest double,
 * of either sign, doubled by merging an accumulator into itself) and
 * names each failed check on stderr.  Then reads cases from the file
 * named by its argument, whitespace-separated:
 *
 *   KIND CUTS c_1 .. c_CUTS N x_1 .. x_N
 *
 * KIND "d" adds the values as doubles, "f" as floats (each must be one);
 * the values are as strtod reads them (hex floats, inf, nan).  For each
 * case it prints a line: whether the accumulator of the finite values is
 * zero, then the result (cr_exact_result) of three ways of summing them:
 * in order; in reverse order; and cut at c_1 <= .. <= c_CUTS into chunks,
 * each summed into its own accumulator and specials, merged last chunk
 * first.  A result is, for float64, float32, float16 and bfloat16, its
 * bits in hex and its overflow flag.  Exits 1 if a check failed or the
 * file could not be read, else 0. */
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "exact/kulisch.h"

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

/* Reads and sums one case; 0 at the end of the file, -1 on bad input. */
static int
run_case(FILE *file)
{
    char kind[2], text[64];
    long cuts, n;
    long *cut;
    double *values;
    cr_kulisch acc, part;
    cr_specials specials, part_specials;

    if (fscanf(file, "%1s", kind) != 1) {
        return 0;
    }
    if (fscanf(file, "%ld", &cuts) != 1 || cuts < 0) {
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
    values = malloc((size_t)(n + 1) * sizeof(*values));
    for (long k = 0; k < n; k++) {
        if (fscanf(file, "%63s", text) != 1) {
            free(cut);
            free(values);
            return -1;
        }
        values[k] = strtod(text, NULL);
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
    printf("\n");
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
