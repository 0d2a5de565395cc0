/*
 * Two builds of q8.c in one process, timed in turns (tools/native-kernels/ab/ab.sh builds them): random weights of one
 * type in q8.c's interleaved layout (256 rows x 2048 columns, 16 groups, L2-resident), random 8-bit activations,
 * dgr_q8 called in claims of 128 rows as the engine's workers call it. Each repetition times A and B once, in turns
 * whose order alternates, by thread CPU time; prints each build's best, 25th-percentile and median GOPS and B/A of
 * the medians. The machine's speed moves by more than a kernel change in minutes, so only such interleaved figures
 * compare two builds; both must take dgr_q8's current arguments. TYPE is dgr_q8's type number; every type's layout and
 * the ranges of its scales are in ../inputs.h.
 *
 * COPIES > 1 (default 1) lays out that many copies of the weights and gives each call the next one, so that with
 * enough of them (256 rows of 2048 Q4_0 columns are 288 KiB) the weights come from memory, as in a decode step, not
 * from L2; AHEAD is the prefetch distance in bytes then (0, none, by default; the engine passes 4096).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../inputs.h"

typedef void kernel(long, const uint8_t *, long, long, long, long, const int8_t *, const int32_t *, const int32_t *, const float *,
                    const float *, long, long, float *, long, long);
kernel dgr_q8_a, dgr_q8_b;

static unsigned rand_u(void) {
    return (unsigned) rand();
}

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: ab TYPE AMX(0|1) BATCH [REPS [COPIES [AHEAD]]]\n");
        return 2;
    }
    const long type = atol(argv[1]), nBatch = atol(argv[3]), rows = 256, cols = 2048, nb = cols / 32, claim = 128;
    const int amx = atoi(argv[2]), reps = argc > 4 ? atoi(argv[4]) : 2000;
    const long copies = argc > 5 ? atol(argv[5]) : 1, ahead = argc > 6 ? atol(argv[6]) : 0;
    const layout *L = layout_of(type);
    if (!L || nBatch < 1 || reps < 4 || copies < 1 || ahead < 0) {
        fprintf(stderr, "ab: TYPE must be dgr_q8's type number (0 Q4_0, 1 Q8_0, 2 Q4_K, 3 Q6_K, 4 Q5_K, 5 IQ4_NL, 6 IQ4_XS, "
                        "7 MXFP4, 8 Q2_K, 9 Q3_K, 10 Q4_1, 11 Q5_0, 12 Q5_1); BATCH >= 1; REPS >= 4; COPIES >= 1; AHEAD >= 0\n");
        return 2;
    }
    /* Linux grants the AMX tile state only on request (ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) */
    if (amx && syscall(SYS_arch_prctl, 0x1023, 18) != 0) {
        fprintf(stderr, "ab: the OS refused the AMX tile state\n");
        return 1;
    }
    const long groupBytes = group_bytes(L, nb), rowBytes = groupBytes / 16;
    const long matrixBytes = groupBytes * (rows / 16);
    /* one more matrix's bytes after the last copy: a prefetch `ahead` past it stays inside the allocation */
    uint8_t *w = aligned_alloc(64, matrixBytes * (copies + 1));
    srand(7);
    random_weights(L, nb, rows / 16, w, rand_u);
    for (long c = 1; c <= copies; c++) memcpy(w + c * matrixBytes, w, matrixBytes);
    int8_t *aq = aligned_alloc(64, 32 * nb * nBatch);
    int32_t *asum = calloc(nb * nBatch, 4), *half = calloc(2 * nb * nBatch, 4);
    float *ad = malloc(4 * nb * nBatch), *dsum = malloc(4 * nb * nBatch), *out = aligned_alloc(64, 4 * rows * nBatch);
    for (long b = 0; b < nb * nBatch; b++) {
        const int32_t s = asum[b] = random_block(aq + 32 * b, half + 2 * b, rand_u);
        /* block-major, as Q8Input lays them out for the kernel: block j of batch row r at j * nBatch + r */
        const long t = (b % nb) * nBatch + b / nb;
        ad[t] = 0.01f * (float) (1 + (rand() & 15));
        dsum[t] = ad[t] * (float) s;
    }
    double *ta = malloc(8 * reps), *tb = malloc(8 * reps);
    for (int rep = 0; rep < reps; rep++) {
        for (int turn = 0; turn < 2; turn++) {
            kernel *k = (rep + turn) & 1 ? dgr_q8_a : dgr_q8_b;
            const uint8_t *wc = w + ((2L * rep + turn) % copies) * matrixBytes;
            double t0 = cpu_now();
            for (long o = 0; o < rows; o += claim) k(type | (amx ? 256 : 0), wc, rowBytes, o, o + claim, nb, aq, asum, half, ad, dsum, nBatch, nBatch, out, rows, ahead);
            (k == dgr_q8_a ? ta : tb)[rep] = cpu_now() - t0;
        }
    }
    qsort(ta, reps, 8, by_value);
    qsort(tb, reps, 8, by_value);
    const double gop = 2.0 * rows * cols * nBatch / 1e9;
    printf("type %ld amx %d batch %ld, %d reps, %ld copies, ahead %ld: A best %.1f p25 %.1f median %.1f GOPS | B best %.1f p25 %.1f median %.1f GOPS | B/A medians %.3f\n",
           type, amx, nBatch, reps, copies, ahead, gop / ta[0], gop / ta[reps / 4], gop / ta[reps / 2], gop / tb[0], gop / tb[reps / 4], gop / tb[reps / 2],
           ta[reps / 2] / tb[reps / 2]);
    return 0;
}
