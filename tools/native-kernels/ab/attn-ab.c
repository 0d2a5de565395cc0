/*
 * Two builds of attn.c's prompt kernels (ops 4 to 6: RowLanes' scores, softmax and weighted values) timed in turns in
 * one process, in the engine's call pattern: per tile of 64 positions and K/V head, for each of four runs of 16 rows,
 * scores, softmax, weighted values; two K/V heads of four query heads, head size 64, each tile's K and V copied in
 * first as the engine widens them (attn-ab.sh builds it). Each repetition runs 16 tiles with A and with B, in turns
 * whose order alternates, timing each call by the monotonic clock; prints each op's median microseconds per call
 * for A and B, B/A of the medians, and whether the two builds' outputs (scores, running state, outputs) are the same
 * bits. OFF (floats, default 0) starts the queries, scores, outputs and tiles that many floats past a 64-byte
 * boundary: 4 is where a Java float array's element 0 lies (the engine pads its arrays past it, HeapAlignment).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void kernel(long, const uint16_t *, long, float *, long, float *, long, const uint16_t *, long, long, long, long, long,
                    long, long, long, const float *);
kernel dgr_attn_a, dgr_attn_b;

#define H 4      /* query heads per K/V head */
#define HD 64    /* head size */
#define T 64     /* tile positions */
#define R 16     /* rows per run (lanes) */
#define U 4      /* runs per segment */
#define KH 2     /* K/V heads per claim */
#define NT 16    /* tiles per repetition */
#define QN (U * KH * H * HD * R)
#define SN (H * T * R)
#define STN (U * KH * H * 2 * R)

typedef struct {
    float *q, *o, *k, *v, *s, *st, *alpha;
    double t[3];
} side;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static float *floats(long n, long off) {
    float *p = aligned_alloc(64, (size_t) (n + off + 16) * sizeof(float));
    memset(p, 0, (size_t) (n + off + 16) * sizeof(float));
    return p + off;
}

static float rnd(void) {
    return (float) rand() / (float) RAND_MAX - 0.5f;
}

/* One repetition: NT tiles of both K/V heads over all runs, from fresh state; per-op time per call into t. */
static void repetition(kernel *k, side *x, const float *q0, const float *kAll, const float *vAll, const float *lo, const float *hi,
                       float scale) {
    union { float f; int32_t i; } sc = {scale};
    memcpy(x->q, q0, sizeof(float) * QN);
    memset(x->o, 0, sizeof(float) * QN);
    for (int i = 0; i < STN; i += 2 * R)
        for (int j = 0; j < R; j++) {
            x->st[i + j] = -__builtin_inff();
            x->st[i + R + j] = 0;
        }
    x->t[0] = x->t[1] = x->t[2] = 0;
    for (int ta = 0; ta < NT; ta++) {
        for (int kh = 0; kh < KH; kh++) {
            memcpy(x->k, kAll + (ta * KH + kh) * T * HD, sizeof(float) * T * HD);
            memcpy(x->v, vAll + (ta * KH + kh) * T * HD, sizeof(float) * T * HD);
            for (int u = 0; u < U; u++) {
                long qo = (u * KH + kh) * H * HD * R, so = (u * KH + kh) * H * 2 * R;
                double t0 = now();
                k(4, (const uint16_t *) x->k, 0, x->q, qo, x->s, 0, 0, sc.i, 0, 8 * HD, H, HD, 0, T, T, 0);
                double t1 = now();
                k(6, (const uint16_t *) lo, 0, x->s, 0, x->st, so, (const uint16_t *) x->alpha, 0, 0, 0, H, HD, 0, T, T, hi);
                double t2 = now();
                k(5, (const uint16_t *) x->v, 0, x->s, 0, x->o, qo, (const uint16_t *) x->alpha, 0, 0, HD, H, HD, 0, T, T, 0);
                double t3 = now();
                x->t[0] += t1 - t0;
                x->t[1] += t2 - t1;
                x->t[2] += t3 - t2;
            }
        }
    }
}

int main(int argc, char **argv) {
    const int reps = argc > 1 ? atoi(argv[1]) : 200;
    const long off = argc > 2 ? atol(argv[2]) : 0;
    if (reps < 1 || off < 0 || off > 15) {
        fprintf(stderr, "usage: attn-ab [REPS (200)] [OFF floats past a 64-byte boundary, 0..15 (0)]\n");
        return 2;
    }
    float *q0 = floats(QN, 0), *kAll = floats(NT * KH * T * HD, 0), *vAll = floats(NT * KH * T * HD, 0);
    float lo[R], hi[R];
    for (long i = 0; i < QN; i++) q0[i] = rnd();
    for (long i = 0; i < NT * KH * T * HD; i++) {
        kAll[i] = rnd();
        vAll[i] = rnd();
    }
    for (int r = 0; r < R; r++) {
        lo[r] = 0;
        hi[r] = T;
    }
    side s[2];
    for (int i = 0; i < 2; i++) {
        s[i] = (side) {floats(QN, off), floats(QN, off), floats(T * HD, off), floats(T * HD, off), floats(SN, off), floats(STN, 0),
                       floats(H * R, 0), {0, 0, 0}};
    }
    double *times[2][3];
    for (int i = 0; i < 2; i++)
        for (int op = 0; op < 3; op++) times[i][op] = malloc(sizeof(double) * reps);
    const double calls = NT * KH * U;
    int same = 1;
    for (int r = 0; r < reps; r++) {
        for (int turn = 0; turn < 2; turn++) {
            int b = (r & 1) ? turn : !turn;
            repetition(b ? dgr_attn_b : dgr_attn_a, &s[b], q0, kAll, vAll, lo, hi, 0.125f);
            for (int op = 0; op < 3; op++) times[b][op][r] = s[b].t[op] / calls;
        }
        same &= !memcmp(s[0].o, s[1].o, sizeof(float) * QN) && !memcmp(s[0].st, s[1].st, sizeof(float) * STN)
                && !memcmp(s[0].s, s[1].s, sizeof(float) * SN);
    }
    const char *name[3] = {"scores", "softmax", "weighted"};
    const double flops = 2.0 * H * HD * T * R;
    for (int op = 0; op < 3; op++) {
        qsort(times[0][op], reps, sizeof(double), by_value);
        qsort(times[1][op], reps, sizeof(double), by_value);
        double a = times[0][op][reps / 2], b = times[1][op][reps / 2];
        if (op == 1) printf("%-8s A %.2f us/call, B %.2f us/call, B/A speed %.3f\n", name[op], a * 1e6, b * 1e6, a / b);
        else printf("%-8s A %.2f us/call (%.1f GFLOP/s), B %.2f us/call (%.1f GFLOP/s), B/A speed %.3f\n", name[op], a * 1e6,
                    flops / a * 1e-9, b * 1e6, flops / b * 1e-9, a / b);
    }
    printf("outputs %s\n", same ? "the same bits" : "DIFFER");
    return same ? 0 : 1;
}
