/*
 * attn.c's AVX-512 code against its AVX2 code, on a CPU that may have no AVX-512 (check.sh builds both from one
 * attn.c, the AVX-512 intrinsics from SIMDe and emu.h): every operation of dgr_attn, on random data, must write
 * the same bits in both, and leave the same floats alone. NativeAttentionTest and NativeRowLanesTest hold the
 * image this CPU runs to the Java kernels; this holds the other image to that one. It is no measure of speed.
 * Decode steps (ops 0-3: scores and weighted V rows over f16 and bf16 pages) for several query heads per K/V
 * head, head sizes and block counts, so that every width of both images' loops runs, with and without
 * prefetching; prompt runs (ops 4-6: RowLanes' scores, softmax with and without masks, weighted V) for several
 * heads, head sizes and position ranges. Prints one line per operation; exits 1 at the first difference.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void kernel(long, const uint16_t *, long, float *, long, float *, long, const uint16_t *, long, long, long, long, long, long,
                    long, long, const float *);
kernel dgr_attn_avx2, dgr_attn_emu;

static uint32_t seed = 4242;
static unsigned next(void) {
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
}

/* A float in [-2, 2). */
static float value(void) {
    return (float) ((int) (next() % 65536) - 32768) / 16384.0f;
}

/* A cache value near `value()`: f16 bits (F16C rounds) or bf16 bits (the top half of the f32). */
static uint16_t cached(int bf) {
    float f = value();
    if (bf) {
        uint32_t u;
        memcpy(&u, &f, 4);
        return (uint16_t) (u >> 16);
    }
    return (uint16_t) _cvtss_sh(f, 0);
}

static float *floats(long n) {
    float *p = malloc(4 * n);
    for (long i = 0; i < n; i++) p[i] = value();
    return p;
}

/* A call's outputs: n buffers of size[i] floats (each kernel runs on its own copy). */
typedef struct {
    float *buf[3];
    long size[3];
    int n;
} outputs;

static long checked;

static int compare(const char *what, const outputs *a, const outputs *b) {
    for (int i = 0; i < a->n; i++) {
        for (long j = 0; j < a->size[i]; j++) {
            if (memcmp(a->buf[i] + j, b->buf[i] + j, 4) != 0) {
                uint32_t x, y;
                memcpy(&x, a->buf[i] + j, 4);
                memcpy(&y, b->buf[i] + j, 4);
                printf("%s: AVX-512 differs from AVX2 in output %d at float %ld: %08x (%g) against %08x (%g)\n", what, i, j, x,
                       a->buf[i][j], y, b->buf[i][j]);
                return 1;
            }
        }
    }
    checked++;
    return 0;
}

static outputs twin(const outputs *o) {
    outputs t = *o;
    for (int i = 0; i < o->n; i++) {
        t.buf[i] = malloc(4 * o->size[i]);
        memcpy(t.buf[i], o->buf[i], 4 * o->size[i]);
    }
    return t;
}

static void release(outputs *o) {
    for (int i = 0; i < o->n; i++) free(o->buf[i]);
}

/* One dgr_attn call's arguments (element offsets 0). */
typedef struct {
    long op;
    const uint16_t *kv;
    float *x, *y;
    const uint16_t *pf;
    long pfOff, pfLines, nh, heads, hd, count, hs, tile;
    const float *aux;
} call;

/*
 * `c` through both kernels, each on its own copy of the outputs `a` (c's x, y and pf name a's buffers where they
 * are outputs), then the copies compared and released.
 */
static int both(const char *what, call c, outputs *a) {
    outputs b = twin(a);
    kernel *k[2] = {dgr_attn_avx2, dgr_attn_emu};
    for (int v = 0; v < 2; v++) {
        const outputs *o = v ? &b : a;
        call d = c;
        for (int i = 0; i < a->n; i++) {
            if (c.x == a->buf[i]) d.x = o->buf[i];
            if (c.y == a->buf[i]) d.y = o->buf[i];
            if ((const void *) c.pf == a->buf[i]) d.pf = (const uint16_t *) o->buf[i];
        }
        k[v](d.op, d.kv, 0, d.x, 0, d.y, 0, d.pf, d.pfOff, d.pfLines, d.nh, d.heads, d.hd, d.count, d.hs, d.tile, d.aux);
    }
    int bad = compare(what, a, &b);
    release(a);
    release(&b);
    return bad;
}

/* Ops 0-3: nh K/V heads of `heads` query heads, pages of `tile` positions, `count` blocks (scores) or positions (weighted). */
static int decode(long op, long nh, long heads, long hd, long tile, long count, long pfLines) {
    const int bf = (int) (op & 1);
    const long page = nh * tile * hd, hs = heads * tile + 8;
    uint16_t *kv = malloc(2 * page);
    for (long i = 0; i < page; i++) kv[i] = cached(bf);
    float *x = op < 2 ? floats(nh * heads * hd) : floats(nh * hs);
    outputs a = {{op < 2 ? floats(nh * hs) : floats(nh * heads * hd)}, {op < 2 ? nh * hs : nh * heads * hd}, 1};
    char what[160];
    snprintf(what, sizeof what, "op %ld (nh %ld, heads %ld, hd %ld, tile %ld, count %ld, prefetch %ld)", op, nh, heads, hd, tile, count,
             pfLines);
    int bad = both(what, (call) {op, kv, x, a.buf[0], kv, 0, pfLines, nh, heads, hd, count, hs, tile, NULL}, &a);
    free(kv);
    free(x);
    return bad;
}

/* Op 4: RowLanes.scores of positions [p0, p1) of a K page of floats, blocks `stride` apart. */
static int laneScores(long heads, long hd, long tile, long p0, long p1) {
    const long stride = 8 * hd + 8;
    float *qT = floats(heads * hd * 16), *k = floats((tile / 8) * stride);
    outputs a = {{floats(heads * tile * 16)}, {heads * tile * 16}, 1};
    float scale = 0.125f + value() / 64;
    int32_t bits;
    memcpy(&bits, &scale, 4);
    char what[160];
    snprintf(what, sizeof what, "op 4 (heads %ld, hd %ld, positions [%ld, %ld))", heads, hd, p0, p1);
    int bad = both(what, (call) {4, (const uint16_t *) k, qT, a.buf[0], NULL, bits, 0, stride, heads, hd, p0, p1, tile, NULL}, &a);
    free(qT);
    free(k);
    return bad;
}

/*
 * Op 6: RowLanes.softmax of `heads` query heads over positions [p0, p1), masked or not: scores with some
 * -inf, lanes whose running maximum is -inf (none yet) beside lanes with one, and lanes whose range [lo, hi)
 * leaves out every position.
 */
static int laneSoftmax(long heads, long tile, long p0, long p1, int masked) {
    float *lo = malloc(64), *hi = malloc(64);
    for (int r = 0; r < 16; r++) {
        lo[r] = (float) (next() % (tile + 8)) - 4;
        hi[r] = r % 5 == 0 ? lo[r] : lo[r] + (float) (next() % tile);
    }
    outputs a = {{floats(heads * tile * 16), floats(2 * 16 * heads), floats(16 * heads)}, {heads * tile * 16, 2 * 16 * heads, 16 * heads}, 3};
    for (long i = 0; i < heads * tile * 16; i++) {
        if (next() % 11 == 0) a.buf[0][i] = -INFINITY;
        else a.buf[0][i] *= 8;
    }
    for (long g = 0; g < heads; g++) {
        for (int r = 0; r < 16; r++) {
            if (r % 3 == 0) a.buf[1][32 * g + r] = -INFINITY;
            a.buf[1][32 * g + 16 + r] = r % 3 == 0 ? 0 : 1 + fabsf(a.buf[1][32 * g + 16 + r]);
        }
    }
    char what[160];
    snprintf(what, sizeof what, "op 6 (heads %ld, positions [%ld, %ld), masked %d)", heads, p0, p1, masked);
    int bad = both(what, (call) {6, (const uint16_t *) lo, a.buf[0], a.buf[1], (const uint16_t *) a.buf[2], 0, 0, masked, heads, 0, p0, p1,
                                 tile, hi}, &a);
    free(lo);
    free(hi);
    return bad;
}

/* Op 5: RowLanes.weightedVT: weights of positions [p0, p1), V rows `stride` apart, outputs rescaled by alpha first. */
static int laneWeighted(long heads, long hd, long tile, long p0, long p1) {
    const long stride = hd + 4;
    float *sT = floats(heads * tile * 16), *v = floats((p1 - p0) * stride), *alpha = floats(16 * heads);
    outputs a = {{floats(heads * hd * 16)}, {heads * hd * 16}, 1};
    char what[160];
    snprintf(what, sizeof what, "op 5 (heads %ld, hd %ld, positions [%ld, %ld))", heads, hd, p0, p1);
    int bad = both(what, (call) {5, (const uint16_t *) v, sT, a.buf[0], (const uint16_t *) alpha, 0, 0, stride, heads, hd, p0, p1, tile, NULL},
                   &a);
    free(sT);
    free(v);
    free(alpha);
    return bad;
}

int main(void) {
    /* 1 to 9 query heads per K/V head: groups of 4 and the rest; head sizes whose loops end in every tail */
    const long heads[] = {1, 3, 4, 5, 8, 9}, hds[] = {16, 48, 64, 80, 128}, tile = 64;
    for (long op = 0; op < 4; op++) {
        long before = checked;
        for (size_t h = 0; h < sizeof heads / sizeof *heads; h++)
            for (size_t d = 0; d < sizeof hds / sizeof *hds; d++)
                for (long count = 1; count <= (op < 2 ? tile / 8 : tile); count += op < 2 ? 1 : 9)
                    for (long nh = 1; nh <= 2; nh++)
                        if (decode(op, nh, heads[h], hds[d], tile, count, nh == 2 ? 3 : 0)) return 1;
        printf("op %ld (%s %s) on AVX-512 (emulated) equals AVX2 to the bit: %ld cases\n", op, op < 2 ? "scores" : "weighted V",
               op & 1 ? "bf16" : "f16", checked - before);
    }
    const long ranges[][2] = {{0, 8}, {0, 64}, {8, 24}, {56, 64}};
    long before = checked;
    for (size_t h = 0; h < sizeof heads / sizeof *heads; h++)
        for (size_t d = 0; d < sizeof hds / sizeof *hds; d++)
            for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++)
                if (laneScores(heads[h], hds[d], tile, ranges[r][0], ranges[r][1])) return 1;
    printf("op 4 (prompt scores) on AVX-512 (emulated) equals AVX2 to the bit: %ld cases\n", checked - before);
    before = checked;
    for (size_t h = 0; h < sizeof heads / sizeof *heads; h++)
        for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++)
            for (int masked = 0; masked < 2; masked++)
                if (laneSoftmax(heads[h], tile, ranges[r][0], ranges[r][1], masked)) return 1;
    printf("op 6 (prompt softmax) on AVX-512 (emulated) equals AVX2 to the bit: %ld cases\n", checked - before);
    before = checked;
    for (size_t h = 0; h < sizeof heads / sizeof *heads; h++)
        for (size_t d = 0; d < sizeof hds / sizeof *hds; d++)
            for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++)
                if (laneWeighted(heads[h], hds[d], tile, ranges[r][0], ranges[r][1])) return 1;
    printf("op 5 (prompt weighted V) on AVX-512 (emulated) equals AVX2 to the bit: %ld cases\n", checked - before);
    printf("%ld attention cases, no difference\n", checked);
    return 0;
}
