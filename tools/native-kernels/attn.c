/*
 * dgr's native kernels for a decode step's attention over an f16 or bf16 K/V cache (AVX-512 F, or
 * AVX2, with F16C and FMA): the widening of each cache value happens inside the FMA loops, in registers, where the
 * Java path widens a stretch into an L1 buffer and reads it back (Java has no vector half-float
 * conversion). build.sh compiles this file twice, into attn-avx512.bin (16 lanes) and attn-avx2.bin
 * (8 lanes), flat images with the entry dgr_attn at offset 0, no libc, no relocations, no calls;
 * NativeAttention loads the one the CPU runs.
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
 * A prompt's runs of up to 16 rows (ops 4 to 6, both images: RowLanes' layouts, rows in the 16 lanes,
 * K and V as floats, f32 pages in place or a compact type's tile widened by the Java side):
 *   score of a row, query head g, position p: acc = +0; acc = fma(q[g][d], k[p][d], acc) for d in order; acc * scale
 *   output element d of a row's query head g:  acc = out[g][d] * alpha[g]; acc = fma(w[g][p], v[p][d], acc) for p in order
 *   between them RowLanes.softmax's steps, each value the same bits (lane_softmax says how)
 * the same per element as RowLanes.scores, .softmax and .weightedVT (NativeRowLanesTest checks them).
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
 * Prompt runs, rows in lanes (RowLanes' layouts, R = 16): queries qT[(g·hd + d)·R + r], scores and
 * weights sT[(g·tile + p)·R + r], outputs oT[(g·hd + d)·R + r].
 */
#define R 16

#ifdef __AVX512F__
/*
 * AVX-512: blocks of 4 query heads × 4 positions (scores) or 4 elements (outputs): 16 chains, each K or
 * V value broadcast once for 16 rows and 4 heads.
 */

/* Scores of G query heads (queries q, heads hd·R apart) × 4 or 8 positions (K at k: element d of position j at k[8d + j]), times scale. */
#define LANE_SCORES(G, NP)                                                                         \
    do {                                                                                           \
        __m512 acc[G][NP];                                                                         \
        UNROLL for (int h = 0; h < G; h++)                                                         \
            UNROLL for (int j = 0; j < NP; j++) acc[h][j] = _mm512_setzero_ps();                   \
        for (long d = 0; d < hd; d++) {                                                            \
            __m512 kv[NP];                                                                         \
            UNROLL for (int j = 0; j < NP; j++) kv[j] = _mm512_set1_ps(k[8 * d + j]);              \
            UNROLL for (int h = 0; h < G; h++) {                                                   \
                __m512 x = _mm512_loadu_ps(q + h * hd * R + d * R);                                \
                UNROLL for (int j = 0; j < NP; j++) acc[h][j] = _mm512_fmadd_ps(x, kv[j], acc[h][j]); \
            }                                                                                      \
        }                                                                                          \
        UNROLL for (int h = 0; h < G; h++)                                                         \
            UNROLL for (int j = 0; j < NP; j++)                                                    \
                _mm512_storeu_ps(s + h * tile * R + j * R, _mm512_mul_ps(acc[h][j], sv));          \
    } while (0)

/*
 * RowLanes.scores: query heads from qT, positions [p0, p1) (multiples of 8) of a K page laid out
 * position-minor (position p's element d at k0[(p/8)·blockStride + 8d + p%8]), times scale, into sT.
 */
INLINE void lane_scores(const float *qT, long heads, long hd, const float *k0, long blockStride, long p0, long p1, float scale,
                        float *sT, long tile) {
    const __m512 sv = _mm512_set1_ps(scale);
    long g = 0;
    for (; g + 4 <= heads; g += 4) {
        for (long p = p0; p < p1; p += 4) {
            const float *q = qT + g * hd * R, *k = k0 + (p >> 3) * blockStride + (p & 7);
            float *s = sT + (g * tile + p) * R;
            LANE_SCORES(4, 4);
        }
    }
    for (; g < heads; g++) {
        for (long p = p0; p < p1; p += 8) {
            const float *q = qT + g * hd * R, *k = k0 + (p >> 3) * blockStride;
            float *s = sT + (g * tile + p) * R;
            LANE_SCORES(1, 8);
        }
    }
}

/* Outputs of G query heads × 4 elements (V at v: position t's element e at v[t·vStride + e]) over positions [p0, p1). */
#define LANE_WEIGHTED(G)                                                                           \
    do {                                                                                           \
        __m512 acc[G][4];                                                                          \
        UNROLL for (int h = 0; h < G; h++) {                                                       \
            __m512 al = _mm512_loadu_ps(alpha + (g + h) * R);                                      \
            UNROLL for (int e = 0; e < 4; e++) acc[h][e] = _mm512_mul_ps(_mm512_loadu_ps(o + h * hd * R + e * R), al); \
        }                                                                                          \
        for (long p = p0; p < p1; p++) {                                                           \
            const float *vp = v + (p - p0) * vStride;                                              \
            __m512 vv[4];                                                                          \
            UNROLL for (int e = 0; e < 4; e++) vv[e] = _mm512_set1_ps(vp[e]);                      \
            UNROLL for (int h = 0; h < G; h++) {                                                   \
                __m512 w = _mm512_loadu_ps(sT + ((g + h) * tile + p) * R);                         \
                UNROLL for (int e = 0; e < 4; e++) acc[h][e] = _mm512_fmadd_ps(w, vv[e], acc[h][e]); \
            }                                                                                      \
        }                                                                                          \
        UNROLL for (int h = 0; h < G; h++)                                                         \
            UNROLL for (int e = 0; e < 4; e++) _mm512_storeu_ps(o + h * hd * R + e * R, acc[h][e]); \
    } while (0)

/*
 * RowLanes.weightedVT: outputs oT (query heads from the first, hd a multiple of 4) times alpha[g·R + r],
 * plus the weights sT of positions [p0, p1) times V rows from v0 (position p's row at v0 + (p − p0)·vStride).
 */
INLINE void lane_weighted(const float *sT, long tile, long heads, long p0, long p1, const float *v0, long vStride, float *oT, long hd,
                          const float *alpha) {
    long g = 0;
    for (; g + 4 <= heads; g += 4) {
        for (long d = 0; d < hd; d += 4) {
            const float *v = v0 + d;
            float *o = oT + (g * hd + d) * R;
            LANE_WEIGHTED(4);
        }
    }
    for (; g < heads; g++) {
        for (long d = 0; d < hd; d += 4) {
            const float *v = v0 + d;
            float *o = oT + (g * hd + d) * R;
            LANE_WEIGHTED(1);
        }
    }
}

#else
/*
 * The same operations on AVX2 (lane_scores8, lane_weighted8, then lane_softmax below): RowLanes' layouts
 * unchanged, each run of 16 lanes taken as two 256-bit halves of 8 rows, one after the other. A half
 * keeps 8 chains in registers (4 query heads × 2 positions or elements; Zen 3's two FMA pipes of four
 * cycles want 8 in flight, and 16 chains of two halves would not fit AVX2's 16 registers). Each element's
 * operations are the AVX-512 image's, so the bits are too.
 */

/* Scores of G query heads × NP positions for the 8 rows of one half (q, s already at the half). */
#define LANE_SCORES8(G, NP)                                                                        \
    do {                                                                                           \
        __m256 acc[G][NP];                                                                         \
        UNROLL for (int h = 0; h < G; h++)                                                         \
            UNROLL for (int j = 0; j < NP; j++) acc[h][j] = _mm256_setzero_ps();                   \
        for (long d = 0; d < hd; d++) {                                                            \
            __m256 kv[NP];                                                                         \
            UNROLL for (int j = 0; j < NP; j++) kv[j] = _mm256_set1_ps(k[8 * d + j]);              \
            UNROLL for (int h = 0; h < G; h++) {                                                   \
                __m256 x = _mm256_loadu_ps(q + h * hd * R + d * R);                                \
                UNROLL for (int j = 0; j < NP; j++) acc[h][j] = _mm256_fmadd_ps(x, kv[j], acc[h][j]); \
            }                                                                                      \
        }                                                                                          \
        UNROLL for (int h = 0; h < G; h++)                                                         \
            UNROLL for (int j = 0; j < NP; j++)                                                    \
                _mm256_storeu_ps(s + h * tile * R + j * R, _mm256_mul_ps(acc[h][j], sv));          \
    } while (0)

/* RowLanes.scores (lane_scores above), half by half. */
INLINE void lane_scores8(const float *qT, long heads, long hd, const float *k0, long blockStride, long p0, long p1, float scale,
                         float *sT, long tile) {
    const __m256 sv = _mm256_set1_ps(scale);
    long g = 0;
    for (; g + 4 <= heads; g += 4) {
        for (long p = p0; p < p1; p += 2) {
            const float *k = k0 + (p >> 3) * blockStride + (p & 7);
            UNROLL for (int half = 0; half < 2; half++) {
                const float *q = qT + g * hd * R + 8 * half;
                float *s = sT + (g * tile + p) * R + 8 * half;
                LANE_SCORES8(4, 2);
            }
        }
    }
    for (; g < heads; g++) {
        for (long p = p0; p < p1; p += 4) {
            const float *k = k0 + (p >> 3) * blockStride + (p & 7);
            UNROLL for (int half = 0; half < 2; half++) {
                const float *q = qT + g * hd * R + 8 * half;
                float *s = sT + (g * tile + p) * R + 8 * half;
                LANE_SCORES8(1, 4);
            }
        }
    }
}

/* Outputs of G query heads × NE elements for the 8 rows of one half (o, sT's rows and alpha at the half). */
#define LANE_WEIGHTED8(G, NE)                                                                      \
    do {                                                                                           \
        __m256 acc[G][NE];                                                                         \
        UNROLL for (int h = 0; h < G; h++) {                                                       \
            __m256 al = _mm256_loadu_ps(a + (g + h) * R);                                          \
            UNROLL for (int e = 0; e < NE; e++) acc[h][e] = _mm256_mul_ps(_mm256_loadu_ps(o + h * hd * R + e * R), al); \
        }                                                                                          \
        for (long p = p0; p < p1; p++) {                                                           \
            const float *vp = v + (p - p0) * vStride;                                              \
            __m256 vv[NE];                                                                         \
            UNROLL for (int e = 0; e < NE; e++) vv[e] = _mm256_set1_ps(vp[e]);                     \
            UNROLL for (int h = 0; h < G; h++) {                                                   \
                __m256 w = _mm256_loadu_ps(ws + ((g + h) * tile + p) * R);                         \
                UNROLL for (int e = 0; e < NE; e++) acc[h][e] = _mm256_fmadd_ps(w, vv[e], acc[h][e]); \
            }                                                                                      \
        }                                                                                          \
        UNROLL for (int h = 0; h < G; h++)                                                         \
            UNROLL for (int e = 0; e < NE; e++) _mm256_storeu_ps(o + h * hd * R + e * R, acc[h][e]); \
    } while (0)

/* RowLanes.weightedVT (lane_weighted above), half by half. */
INLINE void lane_weighted8(const float *sT, long tile, long heads, long p0, long p1, const float *v0, long vStride, float *oT, long hd,
                           const float *alpha) {
    long g = 0;
    for (; g + 4 <= heads; g += 4) {
        for (long d = 0; d < hd; d += 2) {
            const float *v = v0 + d;
            UNROLL for (int half = 0; half < 2; half++) {
                const float *ws = sT + 8 * half, *a = alpha + 8 * half;
                float *o = oT + (g * hd + d) * R + 8 * half;
                LANE_WEIGHTED8(4, 2);
            }
        }
    }
    for (; g < heads; g++) {
        for (long d = 0; d < hd; d += 4) {
            const float *v = v0 + d;
            UNROLL for (int half = 0; half < 2; half++) {
                const float *ws = sT + 8 * half, *a = alpha + 8 * half;
                float *o = oT + (g * hd + d) * R + 8 * half;
                LANE_WEIGHTED8(1, 4);
            }
        }
    }
}
#endif

#ifdef __AVX512F__
/* The softmax's vector of rows (lvec, its mask lmask) at this image's width: 16 rows, a whole run. */
typedef __m512 lvec;
typedef __mmask16 lmask;
#define L_SET1(x) _mm512_set1_ps(x)
#define L_ZERO() _mm512_setzero_ps()
#define L_LOAD(p) _mm512_loadu_ps(p)
#define L_STORE(p, v) _mm512_storeu_ps(p, v)
#define L_ADD(a, b) _mm512_add_ps(a, b)
#define L_SUB(a, b) _mm512_sub_ps(a, b)
#define L_MUL(a, b) _mm512_mul_ps(a, b)
#define L_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define L_MAX(a, b) _mm512_max_ps(a, b)
#define L_AND(a, b) _mm512_and_ps(a, b)
#define L_CMP(a, b, pred) _mm512_cmp_ps_mask(a, b, pred)
#define L_MAND(m, n) ((m) & (n))
/* b where m, else a; and a + b where m, else r */
#define L_SEL(m, a, b) _mm512_mask_mov_ps(a, m, b)
#define L_SEL_ADD(m, r, a, b) _mm512_mask_add_ps(r, m, a, b)
/* 2^k for whole k in float lanes, from its bits */
#define L_POW2(k) _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(k), _mm512_set1_epi32(127)), 23))
#else
/* The softmax's vector of rows (lvec, its mask lmask) at this image's width: 8 rows, half a run. */
typedef __m256 lvec;
typedef __m256 lmask;
#define L_SET1(x) _mm256_set1_ps(x)
#define L_ZERO() _mm256_setzero_ps()
#define L_LOAD(p) _mm256_loadu_ps(p)
#define L_STORE(p, v) _mm256_storeu_ps(p, v)
#define L_ADD(a, b) _mm256_add_ps(a, b)
#define L_SUB(a, b) _mm256_sub_ps(a, b)
#define L_MUL(a, b) _mm256_mul_ps(a, b)
#define L_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define L_MAX(a, b) _mm256_max_ps(a, b)
#define L_AND(a, b) _mm256_and_ps(a, b)
#define L_CMP(a, b, pred) _mm256_cmp_ps(a, b, pred)
#define L_MAND(m, n) _mm256_and_ps(m, n)
#define L_SEL(m, a, b) _mm256_blendv_ps(a, b, m)
#define L_SEL_ADD(m, r, a, b) _mm256_blendv_ps(r, _mm256_add_ps(a, b), m)
#define L_POW2(k) _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(k), _mm256_set1_epi32(127)), 23))
#endif

/*
 * The online softmax of a tile for every lane (RowLanes.softmax, its four steps in order), each value
 * the same bits: Java's max (the larger; +0 over -0; NaN where either is NaN), Exp's steps (Cephes'
 * expf in FMAs: x = k·ln2 + r, a degree-7 polynomial, times 2^k from its bits; below -87, -inf
 * included, 0), the running sum's products and adds in the same tree. Written once for both widths
 * (the L_ operations above); the AVX2 image calls it for each half of a run.
 */
INLINE lvec java_max(lvec a, lvec b) {
    lvec r = L_MAX(a, b);
    r = L_SEL(L_CMP(a, b, _CMP_EQ_OQ), r, L_AND(a, b));
    return L_SEL_ADD(L_CMP(a, b, _CMP_UNORD_Q), r, a, b);
}

/* Exp.lanes16 of x - sub. */
INLINE lvec lane_exp(lvec a, lvec sub) {
    const lvec floor = L_SET1(-87.0f), magic = L_SET1(12582912.0f);
    /* Java's max(x, -87) in one max: on a NaN the instruction returns its second operand, x; -87 is never ±0 */
    lvec x = L_SUB(a, sub), xc = L_MAX(floor, x);
    lvec k = L_SUB(L_FMA(xc, L_SET1(1.44269504088896341f), magic), magic);
    lvec r = L_FMA(k, L_SET1(-0.693359375f), xc);
    r = L_FMA(k, L_SET1(2.12194440e-4f), r);
    lvec p = L_FMA(L_SET1(1.9875691500e-4f), r, L_SET1(1.3981999507e-3f));
    p = L_FMA(p, r, L_SET1(8.3334519073e-3f));
    p = L_FMA(p, r, L_SET1(4.1665795894e-2f));
    p = L_FMA(p, r, L_SET1(1.6666665459e-1f));
    p = L_FMA(p, r, L_SET1(5.0000001201e-1f));
    p = L_ADD(L_FMA(p, L_MUL(r, r), r), L_SET1(1.0f));
    lvec y = L_MUL(p, L_POW2(k));
    return L_SEL(L_CMP(x, floor, _CMP_LT_OQ), y, L_ZERO());
}

/*
 * RowLanes.softmax of one head for the lanes of one vector: scores sT[base + p·R] for p in [p0, p1)
 * become weights; where masked, a lane's positions outside [lo, hi) first become -inf (stored); the
 * running maximum and sum st[0..), st[R..) updated, the rescale factor into al[0..).
 */
INLINE void lane_softmax(float *sT, long p0, long p1, int masked, const float *lo, const float *hi, float *st, float *al) {
    const lvec negInf = L_SET1(-__builtin_inff()), zero = L_ZERO();
    lvec m = negInf;
    if (masked) {
        lvec loV = L_LOAD(lo), hiV = L_LOAD(hi);
        for (long p = p0; p < p1; p++) {
            lvec pv = L_SET1((float) p);
            lmask in = L_MAND(L_CMP(pv, loV, _CMP_GE_OQ), L_CMP(pv, hiV, _CMP_LT_OQ));
            lvec s = L_SEL(in, negInf, L_LOAD(sT + p * R));
            L_STORE(sT + p * R, s);
            m = java_max(m, s);
        }
    } else {
        for (long p = p0; p < p1; p++) m = java_max(m, L_LOAD(sT + p * R));
    }
    /* newMax: the factor e^(m_old - m) (0 for a lane with no maximum before), the maximum the weights subtract (0 for none) */
    lvec mOld = L_LOAD(st), mNew = java_max(mOld, m);
    lmask none = L_CMP(mOld, negInf, _CMP_EQ_OQ);
    lvec alpha = lane_exp(L_SEL(none, L_SUB(mOld, mNew), negInf), zero);
    L_STORE(st, mNew);
    lvec sub = L_SEL(L_CMP(mNew, negInf, _CMP_EQ_OQ), mNew, zero);
    /* weights: e^((s - m) - 0), summed per lane of 8 positions in block order from +0 */
    lvec sums[8];
    UNROLL for (int j = 0; j < 8; j++) sums[j] = zero;
    for (long p = p0; p < p1; p += 8) {
        UNROLL for (int j = 0; j < 8; j++) {
            lvec w = lane_exp(L_SUB(L_LOAD(sT + (p + j) * R), sub), zero);
            L_STORE(sT + (p + j) * R, w);
            sums[j] = L_ADD(sums[j], w);
        }
    }
    /* newSum: the old sum times the factor, plus the 8 lanes' sums in the one-row tile's tree */
    lvec tree = L_ADD(L_ADD(L_ADD(sums[0], sums[1]), L_ADD(sums[2], sums[3])),
                      L_ADD(L_ADD(sums[4], sums[5]), L_ADD(sums[6], sums[7])));
    L_STORE(st + R, L_ADD(L_MUL(L_LOAD(st + R), alpha), tree));
    L_STORE(al, alpha);
}
#undef R

/*
 * op 0/1: scores (f16/bf16) of `count` K blocks of nh K/V heads: head kh's first block at
 *   kv + kh·hs_page, its queries at x + kh·heads·hd, its scores at y + kh·hs (query heads `tile` apart).
 * op 2/3: weighted V (f16/bf16) of `count` positions of nh K/V heads: head kh's first row at
 *   kv + kh·hs_page, its weights at x + kh·hs (query heads `tile` apart), its outputs at y + kh·heads·hd.
 * Pointers are a segment plus an element offset (Java arrays passed in place). pf, when pfLines > 0:
 * nh runs of pfLines cache lines, hs_page elements apart, prefetched over the loop (the next region a
 * decode step reads: a tile's V while its K is scored, the next tile's K while V is summed).
 * hd a multiple of LANES for ops 2/3 (NativeAttention asks for 16).
 * op 4: RowLanes.scores: K floats from kv + kvOff, queries x + xOff, scores y + yOff;
 *   nh: the K page's block stride; count, hs: the positions [p0, p1); pfOff: the scale's float bits.
 * op 5: RowLanes.weightedVT: V floats from kv + kvOff (rows nh apart), weights
 *   x + xOff, outputs y + yOff, rescale factors pf + pfOff (floats); count, hs: the positions [p0, p1).
 * op 6: RowLanes.softmax of `heads` query heads: scores x + xOff (head g's from
 *   g·tile·16), positions [count, hs), masked if nh, the lanes' ranges kv + kvOff (lo) and aux (hi),
 *   running maxima and sums y + yOff (head g's from 2·16·g), rescale factors pf + pfOff (head g's from 16·g).
 * (Ops 4 to 6 reuse the slots of ops 0 to 3, and aux, so that the image keeps one entry.)
 */
__attribute__((section(".text.entry")))
void dgr_attn(long op, const uint16_t *kvSeg, long kvOff, float *xSeg, long xOff, float *ySeg, long yOff,
              const uint16_t *pfSeg, long pfOff, long pfLines, long nh, long heads, long hd, long count, long hs,
              long tile, const float *aux) {
#ifdef __AVX512F__
    if (op == 4) {
        union { int32_t i; float f; } scale = {(int32_t) pfOff};
        lane_scores(xSeg + xOff, heads, hd, (const float *) kvSeg + kvOff, nh, count, hs, scale.f, ySeg + yOff, tile);
        return;
    }
    if (op == 5) {
        lane_weighted(xSeg + xOff, tile, heads, count, hs, (const float *) kvSeg + kvOff, nh, ySeg + yOff, hd,
                      (const float *) pfSeg + pfOff);
        return;
    }
    if (op == 6) {
        for (long g = 0; g < heads; g++)
            lane_softmax(xSeg + xOff + g * tile * 16, count, hs, (int) nh, (const float *) kvSeg + kvOff, aux, ySeg + yOff + 2 * 16 * g,
                         (float *) pfSeg + pfOff + 16 * g);
        return;
    }
#else
    if (op == 4) {
        union { int32_t i; float f; } scale = {(int32_t) pfOff};
        lane_scores8(xSeg + xOff, heads, hd, (const float *) kvSeg + kvOff, nh, count, hs, scale.f, ySeg + yOff, tile);
        return;
    }
    if (op == 5) {
        lane_weighted8(xSeg + xOff, tile, heads, count, hs, (const float *) kvSeg + kvOff, nh, ySeg + yOff, hd,
                       (const float *) pfSeg + pfOff);
        return;
    }
    if (op == 6) {
        for (long g = 0; g < heads; g++)
            for (long half = 0; half < 2; half++)
                lane_softmax(xSeg + xOff + g * tile * 16 + 8 * half, count, hs, (int) nh, (const float *) kvSeg + kvOff + 8 * half,
                              aux + 8 * half, ySeg + yOff + 2 * 16 * g + 8 * half, (float *) pfSeg + pfOff + 16 * g + 8 * half);
        return;
    }
#endif
    if (op >= 4) return;
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
