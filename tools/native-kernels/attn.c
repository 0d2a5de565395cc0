/*
 * dgr's native kernels for a decode step's attention over an f16 or bf16 K/V cache (AVX-512 F, or
 * AVX2, with F16C and FMA): the widening of each cache value happens inside the FMA loops, in registers, where the
 * Java path widens a stretch into an L1 buffer and reads it back (Java has no vector half-float
 * conversion). build.sh compiles this file twice, into attn-avx512.bin (16 lanes) and attn-avx2.bin
 * (8 lanes), flat images with the entry dgr_attn at offset 0, no libc, no relocations, no calls;
 * HalfAttention loads the one the CPU runs.
 *
 * Page layout (KvCodec.Halves): head kh's 64 positions together, from element (kh * tile + j) * hd;
 * K in blocks of 8 positions, element i of position j + r of a block at + 8i + r; V row by row.
 *
 * Order of operations, the same per element as SimdAttention's kernels on widened floats (widening is
 * exact, so the bits are the same):
 *   score of query head g at position j:  acc = +0; acc = fma(k[j][d], q[g][d], acc) for d = 0, 1, .. hd-1
 *   output element c of query head g:      acc = out[g][c]; acc = fma(v[t][c], w[g][t], acc) for t in order
 * Lanes group positions (scores) or elements (outputs); no sum crosses lanes.
 *
 * Build flags keep that order: -ffp-contract=off, no -ffast-math.
 */
#include <immintrin.h>
#include <stdint.h>

#define INLINE static inline __attribute__((always_inline))
/* Loops over registers unrolled whole, so the accumulators stay in zmm registers. */
#define UNROLL _Pragma("GCC unroll 16")

/* 8 cache values, widened. */
INLINE __m256 widen8(const uint16_t *a, int bf) {
    __m128i h = _mm_loadu_si128((const __m128i *) a);
    if (bf) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    return _mm256_cvtph_ps(h);
}

#ifdef __AVX512F__
/* 16 lanes: a K vector is two blocks' element d (16 positions), a V vector 16 elements of a row. */
typedef __m512 vec;
#define LANES 16
#define VZERO() _mm512_setzero_ps()
#define VSET1(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSTORE(p, v) _mm512_storeu_ps(p, v)

/* 16 cache values from two runs of 8. */
INLINE __m512 widen2x8(const uint16_t *a, const uint16_t *b, int bf) {
    __m256i h = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) a)),
                                        _mm_loadu_si128((const __m128i *) b), 1);
    if (bf) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
}
#define KWIDEN(k, v, d) widen2x8((k) + (2 * (v)) * bs + 8 * (d), (k) + (2 * (v) + 1) * bs + 8 * (d), bf)
#define VWIDEN(row) widen2x8((row), (row) + 8, bf)
#else
/* 8 lanes (AVX2): a K vector is one block's element d, a V vector 8 elements of a row. */
typedef __m256 vec;
#define LANES 8
#define VZERO() _mm256_setzero_ps()
#define VSET1(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VLOAD(p) _mm256_loadu_ps(p)
#define VSTORE(p, v) _mm256_storeu_ps(p, v)
#define KWIDEN(k, v, d) widen8((k) + (v) * bs + 8 * (d), bf)
#define VWIDEN(row) widen8((row), bf)
#endif
/* K blocks of 8 positions per vector. */
#define BPV (LANES / 8)

/*
 * Spreads prefetches of the next region over a loop's iterations: `lines` cache lines of each of `runs`
 * runs (`stride` bytes apart) from `base`, `per` lines an iteration.
 */
typedef struct {
    const char *base;
    long stride, lines, runs, run, line;
} ahead;

INLINE void ahead_step(ahead *a, int per) {
    for (int i = 0; i < per && a->run < a->runs; i++) {
        _mm_prefetch(a->base + a->run * a->stride + 64 * a->line, _MM_HINT_T0);
        if (++a->line == a->lines) { a->line = 0; a->run++; }
    }
}

/*
 * NV vectors of LANES positions (BPV·NV blocks) for G query heads: G·NV chains. k: the stretch's first
 * block; q: the first head's query; sc: the first head's scores, heads `ts` apart.
 */
#define SCORES(G, NV)                                                                              \
    do {                                                                                           \
        vec acc[G][NV];                                                                            \
        UNROLL for (int h = 0; h < G; h++)                                                         \
            UNROLL for (int v = 0; v < NV; v++) acc[h][v] = VZERO();                               \
        for (long d = 0; d < hd; d++) {                                                            \
            vec kv[NV];                                                                            \
            UNROLL for (int v = 0; v < NV; v++) kv[v] = KWIDEN(k, v, d);                           \
            UNROLL for (int h = 0; h < G; h++) {                                                   \
                vec x = VSET1(q[h * hd + d]);                                                      \
                UNROLL for (int v = 0; v < NV; v++) acc[h][v] = VFMA(kv[v], x, acc[h][v]);         \
            }                                                                                      \
            ahead_step(pf, 2);                                                                     \
        }                                                                                          \
        UNROLL for (int h = 0; h < G; h++)                                                         \
            UNROLL for (int v = 0; v < NV; v++) VSTORE(sc + h * ts + LANES * v, acc[h][v]);        \
    } while (0)

/* One block of 8 positions for G query heads (256-bit). */
#define SCORES_HALF(G)                                                                             \
    do {                                                                                           \
        __m256 acc[G];                                                                             \
        UNROLL for (int h = 0; h < G; h++) acc[h] = _mm256_setzero_ps();                           \
        for (long d = 0; d < hd; d++) {                                                            \
            __m256 kv = widen8(k + 8 * d, bf);                                                     \
            UNROLL for (int h = 0; h < G; h++) acc[h] = _mm256_fmadd_ps(kv, _mm256_set1_ps(q[h * hd + d]), acc[h]); \
        }                                                                                          \
        UNROLL for (int h = 0; h < G; h++) _mm256_storeu_ps(sc + h * ts, acc[h]);                  \
    } while (0)

/* Block b's stretch: its K, its scores for query heads from g. */
#define AT_BLOCK const uint16_t *k = k0 + b * bs; float *sc = sc0 + g * ts + 8 * b

/* Scores of `blocks` blocks of one K/V head from block k0, query heads from q0, into sc0 (heads ts apart). */
INLINE void head_scores(const uint16_t *k0, const float *q0, float *sc0, long heads, long hd, long blocks, long ts,
                        int bf, ahead *pf) {
    long bs = 8 * hd;
    long g = 0;
    for (; g + 4 <= heads; g += 4) {
        const float *q = q0 + g * hd;
        long b = 0;
#ifdef __AVX512F__
        /* 16 chains a whole tile; then 8, 4 and one block of 8 positions. */
        for (; b + 8 <= blocks; b += 8) { AT_BLOCK; SCORES(4, 4); }
        if (b + 4 <= blocks) { AT_BLOCK; SCORES(4, 2); b += 4; }
        if (b + 2 <= blocks) { AT_BLOCK; SCORES(4, 1); b += 2; }
        if (b < blocks) { AT_BLOCK; SCORES_HALF(4); }
#else
        /* 8 chains (AVX2's 16 registers), then one block. */
        for (; b + 2 <= blocks; b += 2) { AT_BLOCK; SCORES(4, 2); }
        if (b < blocks) { AT_BLOCK; SCORES_HALF(4); }
#endif
    }
    for (; g < heads; g++) {
        const float *q = q0 + g * hd;
        long b = 0;
        for (; b + 4 * BPV <= blocks; b += 4 * BPV) { AT_BLOCK; SCORES(1, 4); }
        for (; b + BPV <= blocks; b += BPV) { AT_BLOCK; SCORES(1, 1); }
        if (b < blocks) { AT_BLOCK; SCORES_HALF(1); }
    }
}

/* Output elements [c, c + LANES·NV) of G query heads over n positions of one K/V head's V rows. */
#define WEIGHTED(G, NV)                                                                            \
    do {                                                                                           \
        vec acc[G][NV];                                                                            \
        UNROLL for (int h = 0; h < G; h++)                                                         \
            UNROLL for (int v = 0; v < NV; v++) acc[h][v] = VLOAD(out + h * hd + c + LANES * v);   \
        for (long t = 0; t < n; t++) {                                                             \
            vec vv[NV];                                                                            \
            const uint16_t *row = v0 + t * hd + c;                                                 \
            UNROLL for (int v = 0; v < NV; v++) vv[v] = VWIDEN(row + LANES * v);                   \
            UNROLL for (int h = 0; h < G; h++) {                                                   \
                vec y = VSET1(w[h * ts + t]);                                                      \
                UNROLL for (int v = 0; v < NV; v++) acc[h][v] = VFMA(vv[v], y, acc[h][v]);         \
            }                                                                                      \
            ahead_step(pf, 2);                                                                     \
        }                                                                                          \
        UNROLL for (int h = 0; h < G; h++)                                                         \
            UNROLL for (int v = 0; v < NV; v++) VSTORE(out + h * hd + c + LANES * v, acc[h][v]);  \
    } while (0)

/* Weighted V rows of one K/V head (n positions from v0, weights from w0, heads ts apart) into out0. */
INLINE void head_weighted(const uint16_t *v0, const float *w0, float *out0, long heads, long hd, long n, long ts,
                          int bf, ahead *pf) {
    long g = 0;
    for (; g + 4 <= heads; g += 4) {
        const float *w = w0 + g * ts;
        float *out = out0 + g * hd;
        long c = 0;
#ifdef __AVX512F__
        for (; c + 64 <= hd; c += 64) WEIGHTED(4, 4);
#else
        for (; c + 16 <= hd; c += 16) WEIGHTED(4, 2);
#endif
        for (; c + LANES <= hd; c += LANES) WEIGHTED(4, 1);
    }
    for (; g < heads; g++) {
        const float *w = w0 + g * ts;
        float *out = out0 + g * hd;
        long c = 0;
        for (; c + 4 * LANES <= hd; c += 4 * LANES) WEIGHTED(1, 4);
        for (; c + LANES <= hd; c += LANES) WEIGHTED(1, 1);
    }
}

/*
 * op 0/1: scores (f16/bf16) of `count` K blocks of nh K/V heads: head kh's first block at
 *   kv + kh·hs_page, its queries at x + kh·heads·hd, its scores at y + kh·hs (query heads `tile` apart).
 * op 2/3: weighted V (f16/bf16) of `count` positions of nh K/V heads: head kh's first row at
 *   kv + kh·hs_page, its weights at x + kh·hs (query heads `tile` apart), its outputs at y + kh·heads·hd.
 * Pointers are a segment plus an element offset (Java arrays passed in place). pf, when pfLines > 0:
 * nh runs of pfLines cache lines, hs_page elements apart, prefetched over the loop (the next region a
 * decode step reads: a tile's V while its K is scored, the next tile's K while V is summed).
 * hd a multiple of LANES for ops 2/3 (HalfAttention asks for 16).
 */
__attribute__((section(".text.entry")))
void dgr_attn(long op, const uint16_t *kvSeg, long kvOff, float *xSeg, long xOff, float *ySeg, long yOff,
              const uint16_t *pfSeg, long pfOff, long pfLines, long nh, long heads, long hd, long count, long hs,
              long tile) {
    int bf = (int) (op & 1);
    long hsPage = tile * hd;
    ahead pf = {(const char *) (pfSeg + pfOff), 2 * hsPage, pfLines, pfLines > 0 ? nh : 0, 0, 0};
    const uint16_t *kv = kvSeg + kvOff;
    if (op < 2) {
        const float *q = xSeg + xOff;
        float *sc = ySeg + yOff;
        for (long kh = 0; kh < nh; kh++)
            head_scores(kv + kh * hsPage, q + kh * heads * hd, sc + kh * hs, heads, hd, count, tile, bf, &pf);
    } else {
        const float *w = xSeg + xOff;
        float *out = ySeg + yOff;
        for (long kh = 0; kh < nh; kh++)
            head_weighted(kv + kh * hsPage, w + kh * hs, out + kh * heads * hd, heads, hd, count, tile, bf, &pf);
    }
    while (pf.run < pf.runs) ahead_step(&pf, 64);
}
