/*
 * dgr's native kernels for engine java-q8/1: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4, Q2_K to Q6_K and
 * IQ4_XS weights against activations rounded to 8 bits. build.sh compiles this file twice, for
 * AVX-512 VNNI and for AVX2, each into one flat position-independent image (no libc, no
 * relocations) that Q8Native loads into a code page and calls through a foreign downcall. Q8Rows.javaRows computes the same bits without it; Q8Rows'
 * and Q8Rows.KQuants' comments state the layouts and the order.
 *
 * Weights: groups of 16 rows; per group, per 32-value block: the 16 rows' f16 scales (32 bytes),
 * then the quants so that 32-bit lane r of each 64-byte stretch (AVX2: of each 32-byte half,
 * rows 0-7 then 8-15) holds four values of row r:
 *   Q4_0, 4 stretches: byte 4r + j of stretch k holds row r's value 8k + j (low nibble) and
 *         8k + 4 + j (high nibble), unsigned 0..15;
 *   Q8_0, 8 stretches: byte 4r + j of stretch c holds row r's value 4c + j, signed;
 *   IQ4_NL as Q4_0, the nibbles being indices into ggml's 16-value grid; MXFP4 the same with its
 *   E2M1 codes, its scales E8M0 exponent bytes (16 per group and block); Q4_1 as Q4_0 with 16
 *   f16 mins after the scales; Q5_0, Q5_1 as Q4_0, Q4_1 with a stretch of fifth bits after.
 * The K-quants and IQ4_XS keep per 256 values and group their scales (and mins) first, then per
 * 32 values quants arranged as Q4_0's (Q5_K, Q6_K: followed by the high bits; Q2_K, Q3_K: 2-bit
 * fields four to a byte, Q3_K then its third bits); see group_super below and Q8Rows.KQuants
 * for the exact bytes.
 * Activations per batch row, per block: 32 int8 (aq), their int sum (asum), the sums of each
 * half (half, for the 16-value sub-blocks of Q2_K, Q3_K, Q6_K); and per block, then batch row (block b's row r
 * at b * ts + r, so the 16 rows an AMX tile or a batch group takes lie in one cache line), the f32 scale (ad)
 * and ad * (float) asum as one f32 product (dsum, the factor of a weight's min); row-major, they took a line
 * per row (docs/engine.md, "Prompt kernels: the min term and block-major scales").
 * Output row o of batch row b: acc = fma((float) isum_B, d_w * d_a, acc) over blocks B in order
 * from +0, isum_B = sum of (w - offset) * a over the block (exact integers; Q4_0's offset is 8).
 * A min (Q4_1, Q5_1, Q2_K, Q4_K, Q5_K) follows its block's (or sub-block's) scale term:
 * acc = fma(+-(d_a * (float) sum(a)), m_w, acc), m_w the weight's min as one f32 (Q4_K: dmin * m):
 * d_a * sum(a) is a batch row's (dsum; Q2_K's per 16 values formed here), shared by all 16 weight rows
 * of a group, so a min costs one FMA.
 *
 * Build flags keep that order: -ffp-contract=off, no -ffast-math.
 */
#include <immintrin.h>
#include <stdint.h>

#define INLINE static inline __attribute__((always_inline))

#ifdef __AVX512VNNI__
/* ---------------- AVX-512 VNNI: one zmm lane per row of the group ---------------- */

typedef __m512 facc;
#define FZERO() _mm512_setzero_ps()

/*
 * A block's 16 lanes of exact sums of w * a from `init`: the offset of the unsigned operands times
 * the block's activation sum (Q4_0: -8 * sum, Q5_0: -16, Q8_0 and the grids (+128): -128), or 0
 * where a min is added apart. Two chains of four, joined (integer sums: any grouping is exact).
 */
INLINE __m512i isum_from(const __m512i w[8], const int32_t *a, int32_t init) {
    __m512i s0 = _mm512_set1_epi32(init), s1 = _mm512_setzero_si512();
    #pragma GCC unroll 16
    for (int c = 0; c < 8; c += 2) {
        s0 = _mm512_dpbusd_epi32(s0, w[c], _mm512_set1_epi32(a[c]));
        s1 = _mm512_dpbusd_epi32(s1, w[c + 1], _mm512_set1_epi32(a[c + 1]));
    }
    return _mm512_add_epi32(s0, s1);
}


INLINE void unpack_q4(const uint8_t *q, __m512i w[8]) {
    const __m512i mask = _mm512_set1_epi8(15);
    #pragma GCC unroll 16
    for (int k = 0; k < 4; k++) {
        __m512i v = _mm512_loadu_si512(q + 64 * k);
        w[2 * k] = _mm512_and_si512(v, mask);
        w[2 * k + 1] = _mm512_and_si512(_mm512_srli_epi16(v, 4), mask);
    }
}

/* Q8_0: the signed weights + 128 (xor 0x80) are unsigned; the offset is 128. */
INLINE void unpack_q8(const uint8_t *q, __m512i w[8]) {
    const __m512i flip = _mm512_set1_epi8((char) 0x80);
    #pragma GCC unroll 16
    for (int c = 0; c < 8; c++) w[c] = _mm512_xor_si512(_mm512_loadu_si512(q + 64 * c), flip);
}

/* IQ4_NL / IQ4_XS: the 4-bit indices through ggml's 16-value grid, + 128 (unsigned, as Q8_0's operands). */
INLINE void unpack_iq4(const uint8_t *q, __m512i w[8]) {
    const __m512i grid = _mm512_broadcast_i32x4(_mm_setr_epi8(1, 24, 45, 63, 79, 93, 106, 118, (char) 129, (char) 141,
                                                               (char) 153, (char) 166, (char) 181, (char) 197, (char) 217, (char) 241));
    unpack_q4(q, w);
    #pragma GCC unroll 16
    for (int c = 0; c < 8; c++) w[c] = _mm512_shuffle_epi8(grid, w[c]);
}

/* MXFP4: the 4-bit E2M1 codes through ggml's doubled values (0, 1, 2, 3, 4, 6, 8, 12, then negated), + 128. */
INLINE void unpack_mxfp4(const uint8_t *q, __m512i w[8]) {
    const __m512i grid = _mm512_broadcast_i32x4(_mm_setr_epi8((char) 128, (char) 129, (char) 130, (char) 131, (char) 132,
            (char) 134, (char) 136, (char) 140, (char) 128, 127, 126, 125, 124, 122, 120, 116));
    unpack_q4(q, w);
    #pragma GCC unroll 16
    for (int c = 0; c < 8; c++) w[c] = _mm512_shuffle_epi8(grid, w[c]);
}

/*
 * KIND 0: Q4_0, 1: Q8_0, 2: IQ4_NL (f16 scales, 32 bytes per group and block), 3: MXFP4 (E8M0
 * exponent bytes, 16 bytes: 2^(e - 128) built as (e - 1) << 23, every e >= 2 here), 4: Q4_1,
 * 5: Q5_0, 6: Q5_1 (Q4_1 and Q5_1: 16 f16 mins after the scales, each added as (d_a * sum(a)) * m);
 * QBYTES: quant bytes per group and block.
 */
#define BLOCK(KIND, QBYTES)                                                                             \
    for (long b = 0; b < nb; b++) {                                                                     \
        const int HEAD = KIND == 3 ? 16 : KIND == 4 || KIND == 6 ? 64 : 32;                             \
        const uint8_t *blk = gw + (HEAD + QBYTES) * b;                                                  \
        if (ahead > 0) {                                                                                \
            _Pragma("GCC unroll 16")                                                                    \
            for (int c = 0; c < HEAD + QBYTES; c += 64) _mm_prefetch((const char *) blk + ahead + c, _MM_HINT_T2); \
        }                                                                                               \
        __m512 d = KIND == 3                                                                            \
            ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *) blk)), _mm512_set1_epi32(1)), 23)) \
            : _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) blk));                               \
        __m512 mv = KIND == 4 || KIND == 6 ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (blk + 32))) : d; \
        __m512i w[8];                                                                                   \
        if (KIND == 1) unpack_q8(blk + HEAD, w);                                                        \
        else if (KIND == 2) unpack_iq4(blk + HEAD, w);                                                  \
        else if (KIND == 3) unpack_mxfp4(blk + HEAD, w);                                                \
        else if (KIND == 5 || KIND == 6) unpack_q5(blk + HEAD, w);                                      \
        else unpack_q4(blk + HEAD, w);                                                                  \
        _Pragma("GCC unroll 16")                                                                        \
        for (int k = 0; k < G; k++) {                                                                   \
            long ab = (b0 + k) * nb + b, at = b * ts + b0 + k;                                          \
            const int32_t *a = (const int32_t *) (aq + 32 * ab);                                        \
            int off = KIND == 1 || KIND == 2 || KIND == 3 ? 128 : KIND == 0 ? 8 : KIND == 5 ? 16 : 0;   \
            __m512i is = isum_from(w, a, -off * asum[ab]);                                              \
            __m512 da = _mm512_set1_ps(ad[at]);                                                         \
            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), _mm512_mul_ps(d, da), acc[k]);             \
            if (KIND == 4 || KIND == 6)                                                                 \
                acc[k] = _mm512_fmadd_ps(_mm512_set1_ps(dsum[at]), mv, acc[k]);           \
        }                                                                                               \
    }

INLINE void store(float *o, __mmask16 keep, __m512 acc) {
    _mm512_mask_storeu_ps(o, keep, acc);
}

/* Q6_K chunk c's operand: four 4-bit low parts (nibble of ql stretch c/2) joined with their two high bits from qh stretch c/4. */
INLINE void unpack_q6(const uint8_t *q, __m512i w[8]) {
    const __m512i m15 = _mm512_set1_epi8(15), m48 = _mm512_set1_epi8(0x30);
    __m512i h0 = _mm512_loadu_si512(q + 256), h1 = _mm512_loadu_si512(q + 320);
    #pragma GCC unroll 16
    for (int k = 0; k < 4; k++) {
        __m512i v = _mm512_loadu_si512(q + 64 * k), h = k < 2 ? h0 : h1;
        __m512i lo = _mm512_and_si512(v, m15), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m15);
        /* chunk 2k takes bits 2u of qh stretch (2k)/4 with u = (2k) % 4, chunk 2k+1 bits 2u + 2. */
        int u = (2 * k) % 4;
        __m512i x0 = u == 0 ? _mm512_slli_epi16(h, 4) : h;                     /* bits 0-1 (u=0) or 4-5 (u=2) to 4-5 */
        __m512i x1 = u == 0 ? _mm512_slli_epi16(h, 2) : _mm512_srli_epi16(h, 2); /* bits 2-3 (u=1) or 6-7 (u=3) to 4-5 */
        w[2 * k] = _mm512_ternarylogic_epi32(x0, m48, lo, 0xEA);
        w[2 * k + 1] = _mm512_ternarylogic_epi32(x1, m48, hi, 0xEA);
    }
}

/* Q5_K: Q4_0-like nibbles, then one 64-byte stretch whose bit u of byte 4r + i is the fifth bit of chunk u's value i. */
INLINE void unpack_q5(const uint8_t *q, __m512i w[8]) {
    unpack_q4(q, w);
    const __m512i m16 = _mm512_set1_epi8(16);
    __m512i h = _mm512_loadu_si512(q + 256);
    #pragma GCC unroll 16
    for (int u = 0; u < 8; u++) {
        __m512i x = u < 4 ? _mm512_slli_epi16(h, 4 - u) : u == 4 ? h : _mm512_srli_epi16(h, u - 4);
        w[u] = _mm512_ternarylogic_epi32(x, m16, w[u], 0xEA);
    }
}

/* Q2_K / Q3_K: chunk 4t + u's two low bits from bits 2u of stretch t; Q3_K adds chunk c's third bit, bit c of the stretch after. */
INLINE void unpack_q23(const uint8_t *q, int three, __m512i w[8]) {
    const __m512i m3 = _mm512_set1_epi8(3), m4 = _mm512_set1_epi8(4);
    #pragma GCC unroll 16
    for (int t = 0; t < 2; t++) {
        __m512i v = _mm512_loadu_si512(q + 64 * t);
        #pragma GCC unroll 16
        for (int u = 0; u < 4; u++) w[4 * t + u] = _mm512_and_si512(u == 0 ? v : _mm512_srli_epi16(v, 2 * u), m3);
    }
    if (three) {
        __m512i h = _mm512_loadu_si512(q + 128);
        #pragma GCC unroll 16
        for (int c = 0; c < 8; c++) {
            __m512i x = c < 2 ? _mm512_slli_epi16(h, 2 - c) : c == 2 ? h : _mm512_srli_epi16(h, c - 2);
            w[c] = _mm512_ternarylogic_epi32(x, m4, w[c], 0xEA);
        }
    }
}

/* Sum of the four chunks of one 16-value sub-block from `init` (exact integers). */
INLINE __m512i isum16(const __m512i *w, const int32_t *a, __m512i init) {
    #pragma GCC unroll 16
    for (int c = 0; c < 4; c++) init = _mm512_dpbusd_epi32(init, w[c], _mm512_set1_epi32(a[c]));
    return init;
}

/*
 * The types with 256-value super-blocks (T = 2: Q4_K, 3: Q6_K, 4: Q5_K, 6: IQ4_XS, 8: Q2_K, 9: Q3_K; a constant after
 * inlining), per super-block and group: the 16 rows' f16 d, Q4_K and Q5_K their 16 dmin, then a
 * byte per row and sub-block of scale (Q4_K, Q5_K: 8 x 16 unsigned, then 8 x 16 mins; Q6_K: 16 x 16
 * int8, per 16 values; IQ4_XS: 8 x 16 int8 ls - 32), then per 32 values the quants as Q4_0's
 * (Q5_K: followed by a stretch of fifth bits; Q6_K: by two of high bits; IQ4_XS: grid indices).
 */
INLINE void group_super(int G, int T, const uint8_t *gw, long nb, const int8_t *aq, const int32_t *asum, const int32_t *half,
                        const float *ad, const float *dsum, long ts, long b0, float *out, long outStride, __mmask16 keep, long ahead) {
    const int SB = T == 2 ? 2368 : T == 4 ? 2880 : T == 3 ? 3360 : T == 8 ? 1344 : T == 9 ? 1824 : 2208, mins = T == 2 || T == 4;
    __m512 acc[8];
    __m512i wide[8]; /* Q6_K: each batch row's integer sum over the super-block */
    #pragma GCC unroll 16
    for (int k = 0; k < G; k++) {
        acc[k] = _mm512_setzero_ps();
        wide[k] = _mm512_setzero_si512();
    }
    for (long S = 0; S < nb / 8; S++) {
        const uint8_t *sb = gw + (long) SB * S;
        if (ahead > 0) {
            for (int c = 0; c < SB; c += 64) _mm_prefetch((const char *) sb + ahead + c, _MM_HINT_T2);
        }
        __m512 dv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) sb));
        __m512 mv = mins || T == 8 ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (sb + 32))) : dv;
        #pragma GCC unroll 1
        for (int j = 0; j < 8; j++) {
            __m512i w[8];
            if (T == 8 || T == 9) {
                /* Q2_K (scale and min nibbles per 16 values) and Q3_K (int8 sc - 32 per 16 values, offset 4). */
                __m512 s[2], m[2];
                #pragma GCC unroll 2
                for (int h = 0; h < 2; h++) {
                    __m128i bytes = _mm_loadu_si128((const __m128i *) (sb + (T == 8 ? 64 : 32) + 16 * (2 * j + h)));
                    if (T == 8) {
                        __m512i sm = _mm512_cvtepu8_epi32(bytes);
                        s[h] = _mm512_mul_ps(dv, _mm512_cvtepi32_ps(_mm512_and_si512(sm, _mm512_set1_epi32(15))));
                        m[h] = _mm512_mul_ps(mv, _mm512_cvtepi32_ps(_mm512_srli_epi32(sm, 4)));
                    } else {
                        s[h] = _mm512_mul_ps(dv, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes)));
                        m[h] = dv;
                    }
                }
                unpack_q23(sb + (T == 8 ? 320 + 128 * j : 288 + 192 * j), T == 9, w);
                #pragma GCC unroll 16
                for (int k = 0; k < G; k++) {
                    long ab = (b0 + k) * nb + 8 * S + j, at = (8 * S + j) * ts + b0 + k;
                    const int32_t *a = (const int32_t *) (aq + 32 * ab);
                    __m512 da = _mm512_set1_ps(ad[at]);
                    #pragma GCC unroll 2
                    for (int h = 0; h < 2; h++) {
                        __m512i init = T == 9 ? _mm512_set1_epi32(-4 * half[2 * ab + h]) : _mm512_setzero_si512();
                        __m512i is = isum16(w + 4 * h, a + 4 * h, init);
                        acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), _mm512_mul_ps(s[h], da), acc[k]);
                        if (T == 8) acc[k] = _mm512_fnmadd_ps(_mm512_set1_ps(ad[at] * (float) half[2 * ab + h]), m[h], acc[k]);
                    }
                }
                continue;
            }
            if (T == 3) {
                /*
                 * Q6_K over activations with one scale per 256 values (Q8Input's wide rounding): per batch row the
                 * super-block's exact integer sum of sc * (q - 32) * a, each 16-value sub-block's sum (its half's
                 * "- 32" from init) times its int8 scale, then one float step for the super-block (after the loop).
                 */
                __m512i s0 = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *) (sb + 32 + 32 * j)));
                __m512i s1 = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *) (sb + 48 + 32 * j)));
                unpack_q6(sb + 288 + 384 * j, w);
                #pragma GCC unroll 16
                for (int k = 0; k < G; k++) {
                    long ab = (b0 + k) * nb + 8 * S + j;
                    const int32_t *a = (const int32_t *) (aq + 32 * ab);
                    __m512i i0 = _mm512_set1_epi32(-32 * half[2 * ab]), i1 = _mm512_set1_epi32(-32 * half[2 * ab + 1]);
                    #pragma GCC unroll 16
                    for (int c = 0; c < 4; c++) {
                        i0 = _mm512_dpbusd_epi32(i0, w[c], _mm512_set1_epi32(a[c]));
                        i1 = _mm512_dpbusd_epi32(i1, w[c + 4], _mm512_set1_epi32(a[c + 4]));
                    }
                    wide[k] = _mm512_add_epi32(wide[k], _mm512_add_epi32(_mm512_mullo_epi32(i0, s0), _mm512_mullo_epi32(i1, s1)));
                }
                if (j == 7) {
                    #pragma GCC unroll 16
                    for (int k = 0; k < G; k++) {
                        acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(wide[k]), _mm512_mul_ps(dv, _mm512_set1_ps(ad[8 * S * ts + b0 + k])), acc[k]);
                        wide[k] = _mm512_setzero_si512();
                    }
                }
                continue;
            }
            __m512 sv, mm = dv;
            if (mins) {
                sv = _mm512_mul_ps(dv, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *) (sb + 64 + 16 * j)))));
                mm = _mm512_mul_ps(mv, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *) (sb + 192 + 16 * j)))));
                if (T == 4) unpack_q5(sb + 320 + 320 * j, w);
                else unpack_q4(sb + 320 + 256 * j, w);
            } else {
                sv = _mm512_mul_ps(dv, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *) (sb + 32 + 16 * j)))));
                unpack_iq4(sb + 160 + 256 * j, w);
            }
            #pragma GCC unroll 16
            for (int k = 0; k < G; k++) {
                long ab = (b0 + k) * nb + 8 * S + j, at = (8 * S + j) * ts + b0 + k;
                const int32_t *a = (const int32_t *) (aq + 32 * ab);
                __m512 da = _mm512_set1_ps(ad[at]);
                if (mins) {
                    acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum_from(w, a, 0)), _mm512_mul_ps(sv, da), acc[k]);
                    acc[k] = _mm512_fnmadd_ps(_mm512_set1_ps(dsum[at]), mm, acc[k]);
                } else {
                    acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum_from(w, a, -128 * asum[ab])), _mm512_mul_ps(sv, da), acc[k]);
                }
            }
        }
    }
    #pragma GCC unroll 16
    for (int k = 0; k < G; k++) _mm512_mask_storeu_ps(out + (b0 + k) * outStride, keep, acc[k]);
}

#ifdef __AMX_INT8__
/*
 * AMX (prompt chunks, 16 batch rows at a time): one tile multiply gives a 32-value block's exact
 * sums for 16 batch rows against a group's 16 weight rows. The unpacked operands are already B
 * tile rows (row c: values 4c..4c+3 of each weight row, the interleaving above), the batch rows'
 * int8 activations of the block are the A tile (stride one batch row), and C[k][r] is the integer
 * sum of a * (w - offset) that vpdpbusd's path forms, so the float steps after it, and every bit
 * of the result, are those of the VNNI path. Offsets are taken out of the operands instead of
 * added per row: Q4_0 and Q5_0 subtract 8 and 16 from the unpacked quants, Q8_0 keeps its signed
 * quants (whose 64-byte stretches are the B tile as they lie), IQ4 and MXFP4 look up signed
 * grids, and tdpbssd multiplies signed by signed; Q4_1, Q5_1, Q4_K and Q5_K (offset 0, mins
 * apart) keep unsigned quants for tdpbsud.
 *
 * Tiles 0/1 hold C (even and odd blocks), 2/3 A, 4/5 B. Two things decide the speed (measured in
 * a C harness, docs/engine.md): a tile loaded from bytes just written by vector stores waits for
 * them, so each chunk of weight blocks is unpacked first and read back by every 16 batch rows
 * long after (amx_group): 430 -> 650 GOPS; and each block's sums go to one of four buffers, their
 * float steps run AMX_LAG blocks later (lags of 1 to 3 measured alike, within the noise).
 */
INLINE void amx_configure(int wide) {
    uint8_t cfg[64] __attribute__((aligned(64)));
    _mm512_store_si512(cfg, _mm512_setzero_si512());
    cfg[0] = 1;                                          /* palette 1 */
    for (int t = 0; t < 8; t++) {
        /* bytes per row: C 16 int32, A 32 int8 (wide: 64), B 16 x 4 bytes; rows: B 8 (wide: 16), the others 16 */
        cfg[16 + 2 * t] = wide || t < 2 || t >= 4 ? 64 : 32;
        cfg[48 + t] = wide || t < 4 || t >= 6 ? 16 : 8;
    }
    _tile_loadconfig(cfg);
}

/* Blocks unpacked at a time: 16 KiB of B tiles (and their scales), read back from L1 by every batch group. */
#define AMX_CHUNK 32

/* AMX kinds: BLOCK's KIND 0..6, and 10 + T for the super-block types T = 2 (Q4_K), 4 (Q5_K), 6 (IQ4_XS); Q6_K: amx_wide. */
#define AMX_SIGNED(K) ((K) == 0 || (K) == 1 || (K) == 2 || (K) == 3 || (K) == 5 || (K) == 16)

/* 16 batch rows' accumulators between chunks: zero for the first, else what `out` holds (lanes in `keep`). */
INLINE void amx_acc_load(__m512 acc[16], int first, const float *out, long outStride, __mmask16 keep) {
    #pragma GCC unroll 16
    for (int k = 0; k < 16; k++) acc[k] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(keep, out + k * outStride);
}

INLINE void amx_acc_store(const __m512 acc[16], float *out, long outStride, __mmask16 keep) {
    #pragma GCC unroll 16
    for (int k = 0; k < 16; k++) _mm512_mask_storeu_ps(out + k * outStride, keep, acc[k]);
}

/*
 * Block b's B tile bytes (in bt, or Q8_0's own quants) and its scales d (and m: the mins' scales,
 * or the super-block's d * min bytes), prefetching `ahead` bytes on.
 */
INLINE const uint8_t *amx_operand(int K, const uint8_t *gw, long b, uint8_t *bt, __m512 *d, __m512 *m, long ahead) {
    __m512i w[8];
    if (K < 10) {
        const int HEAD = K == 3 ? 16 : K == 4 || K == 6 ? 64 : 32, QBYTES = K == 1 ? 512 : K == 5 || K == 6 ? 320 : 256;
        const uint8_t *blk = gw + (long) (HEAD + QBYTES) * b;
        if (ahead > 0) {
            #pragma GCC unroll 16
            for (int c = 0; c < HEAD + QBYTES; c += 64) _mm_prefetch((const char *) blk + ahead + c, _MM_HINT_T2);
        }
        *d = K == 3
            ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *) blk)), _mm512_set1_epi32(1)), 23))
            : _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) blk));
        if (K == 4 || K == 6) *m = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (blk + 32)));
        if (K == 1) return blk + HEAD;
        if (K == 5 || K == 6) unpack_q5(blk + HEAD, w);
        else unpack_q4(blk + HEAD, w);
        if (K == 0 || K == 5) {
            #pragma GCC unroll 16
            for (int c = 0; c < 8; c++) w[c] = _mm512_sub_epi8(w[c], _mm512_set1_epi8(K == 0 ? 8 : 16));
        } else if (K == 2 || K == 3) {
            const __m512i grid = K == 2
                ? _mm512_broadcast_i32x4(_mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113))
                : _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12));
            #pragma GCC unroll 16
            for (int c = 0; c < 8; c++) w[c] = _mm512_shuffle_epi8(grid, w[c]);
        }
    } else {
        const int T = K - 10, SB = T == 2 ? 2368 : T == 4 ? 2880 : 2208;
        const long j = b & 7;
        const uint8_t *sb = gw + (long) SB * (b >> 3);
        if (ahead > 0 && j == 0) {
            for (int c = 0; c < SB; c += 64) _mm_prefetch((const char *) sb + ahead + c, _MM_HINT_T2);
        }
        __m512 dv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) sb));
        if (T == 6) {
            *d = _mm512_mul_ps(dv, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *) (sb + 32 + 16 * j)))));
            const __m512i grid = _mm512_broadcast_i32x4(_mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113));
            unpack_q4(sb + 160 + 256 * j, w);
            #pragma GCC unroll 16
            for (int c = 0; c < 8; c++) w[c] = _mm512_shuffle_epi8(grid, w[c]);
        } else {
            __m512 mv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (sb + 32)));
            *d = _mm512_mul_ps(dv, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *) (sb + 64 + 16 * j)))));
            *m = _mm512_mul_ps(mv, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *) (sb + 192 + 16 * j)))));
            if (T == 4) unpack_q5(sb + 320 + 320 * j, w);
            else unpack_q4(sb + 320 + 256 * j, w);
        }
    }
    #pragma GCC unroll 16
    for (int c = 0; c < 8; c++) _mm512_store_si512(bt + 64 * c, w[c]);
    __asm__ volatile("" ::: "memory"); /* GCC's tileloadd names no memory input: the stores above must stay before it */
    return bt;
}

/*
 * Block b's float steps for the 16 batch rows from b0, on its stored sums ct: those of BLOCK and
 * group_super; a min takes dsum[at], batch row b0 + k's d_a * (float) sum(a) of the block, which the
 * Java side formed when it rounded the activations, as one broadcast operand.
 */
INLINE void amx_epilogue(int K, const int32_t *ct, __m512 d, __m512 m, long b, long nb, const float *ad, const float *dsum, long ts,
                         long b0, __m512 acc[16]) {
    #pragma GCC unroll 16
    for (int k = 0; k < 16; k++) {
        long at = b * ts + b0 + k;
        __m512 da = _mm512_set1_ps(ad[at]);
        acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(ct + 16 * k)), _mm512_mul_ps(d, da), acc[k]);
        if (K == 4 || K == 6) acc[k] = _mm512_fmadd_ps(_mm512_set1_ps(dsum[at]), m, acc[k]);
        if (K == 12 || K == 14) acc[k] = _mm512_fnmadd_ps(_mm512_set1_ps(dsum[at]), m, acc[k]);
    }
}

/* Blocks between a block's tile store and its float steps (at most 3: four copies of the sums). */
#define AMX_LAG 3

/* Issues block b's tile work (chunk slot i) on tiles C, A, B (literal numbers: GCC names them in the instruction) and sums copy t. */
#define AMX_STAGE(C, A, B, t, b, i) do {                                                        \
        _tile_loadd(B, K == 1 ? gw + 544 * (b) + 32 : bt[i], 64);                               \
        _tile_loadd(A, a0 + 32 * (b), aStride);                                                 \
        _tile_zero(C);                                                                          \
        if (AMX_SIGNED(K)) _tile_dpbssd(C, A, B); else _tile_dpbsud(C, A, B);                  \
        _tile_stored(C, ct[t], 64);                                                             \
    } while (0)

/*
 * A group of 16 weight rows against batch rows [0, nRows) (a multiple of 16; amx_configure done).
 * Per chunk of blocks, the weights are unpacked once into B tiles and the scales into vectors
 * (Q8_0's quants are B tiles as they lie), then every 16 batch rows run over them, their
 * accumulators kept in `out` (lanes in `keep` only) between chunks: each weight block is decoded
 * once per call, and its B tile is read from L1 long after its stores.
 */
INLINE void amx_group(int K, const uint8_t *gw, long nb, const int8_t *aq, const int32_t *asum, const float *ad, const float *dsum, long ts,
                      long nRows, float *out, long outStride, __mmask16 keep, long ahead, long groupBytes) {
    /* a block's bytes (all 16 rows): the next chunk's are prefetched while this one's batch rows run */
    const long blockBytes = groupBytes / nb;
    uint8_t bt[AMX_CHUNK][512] __attribute__((aligned(64)));
    __m512 dc[AMX_CHUNK], mc[AMX_CHUNK];
    int32_t ct[4][256] __attribute__((aligned(64)));
    const long aStride = 32 * nb;
    for (long c0 = 0; c0 < nb; c0 += AMX_CHUNK) {
        const long cn = nb - c0 < AMX_CHUNK ? nb - c0 : AMX_CHUNK;
        for (long i = 0; i < cn; i++) {
            __m512 d, m = _mm512_setzero_ps();
            if (K == 1) {
                const uint8_t *blk = gw + 544 * (c0 + i);
                if (ahead > 0 && c0 == 0) {
                    #pragma GCC unroll 16
                    for (int c = 0; c < 544; c += 64) _mm_prefetch((const char *) blk + ahead + c, _MM_HINT_T2);
                }
                d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) blk));
            } else {
                amx_operand(K, gw, c0 + i, bt[i], &d, &m, c0 == 0 ? ahead : 0);
            }
            dc[i] = d;
            mc[i] = m;
        }
        for (long b0 = 0; b0 < nRows; b0 += 16) {
            __m512 acc[16];
            const int8_t *a0 = aq + 32 * b0 * nb;
            amx_acc_load(acc, c0 == 0, out + b0 * outStride, outStride, keep);
            /* block i's sums go to ct[i % 4], its float steps run AMX_LAG blocks later (its tile store long done) */
            for (long i = 0; i < cn; i += 4) {
                if (b0 == 0 && ahead > 0) {
                    /* the next chunk's four blocks (or the next group's first: groups lie one after another) */
                    const char *next = (const char *) gw + blockBytes * (c0 + cn + i);
                    for (long c = 0; c < 4 * blockBytes; c += 64) _mm_prefetch(next + c, _MM_HINT_T2);
                }
                AMX_STAGE(0, 2, 4, 0, c0 + i, i);
                if (i >= AMX_LAG) amx_epilogue(K, ct[(i - AMX_LAG) & 3], dc[i - AMX_LAG], mc[i - AMX_LAG], c0 + i - AMX_LAG, nb, ad, dsum, ts, b0, acc);
                AMX_STAGE(1, 3, 5, 1, c0 + i + 1, i + 1);
                if (i + 1 >= AMX_LAG) amx_epilogue(K, ct[(i + 1 - AMX_LAG) & 3], dc[i + 1 - AMX_LAG], mc[i + 1 - AMX_LAG], c0 + i + 1 - AMX_LAG, nb, ad, dsum, ts, b0, acc);
                AMX_STAGE(0, 2, 4, 2, c0 + i + 2, i + 2);
                if (i + 2 >= AMX_LAG) amx_epilogue(K, ct[(i + 2 - AMX_LAG) & 3], dc[i + 2 - AMX_LAG], mc[i + 2 - AMX_LAG], c0 + i + 2 - AMX_LAG, nb, ad, dsum, ts, b0, acc);
                AMX_STAGE(1, 3, 5, 3, c0 + i + 3, i + 3);
                if (i + 3 >= AMX_LAG) amx_epilogue(K, ct[(i + 3 - AMX_LAG) & 3], dc[i + 3 - AMX_LAG], mc[i + 3 - AMX_LAG], c0 + i + 3 - AMX_LAG, nb, ad, dsum, ts, b0, acc);
            }
            for (long j = cn - AMX_LAG; j < cn; j++) amx_epilogue(K, ct[j & 3], dc[j], mc[j], c0 + j, nb, ad, dsum, ts, b0, acc);
            amx_acc_store(acc, out + b0 * outStride, outStride, keep);
        }
    }
}

/*
 * Q6_K on AMX, over activations with one scale per 256 values (Q8Input's wide rounding): each 16-value
 * sub-block's int8 scale goes into the weights, so a super-block's whole integer sum sum(sc * (q - 32) * a)
 * comes out of the tiles, and its float step runs once per super-block instead of twice per 32 values.
 * sc * (q - 32) lies within +-4096, beyond a byte: it is split into its low byte (unsigned, tdpbsud) and the
 * rest (signed, tdpbssd), two B tiles summed as C_low + 256 * C_high. With all tiles 64 bytes wide (amx_configure(1))
 * a super-block is four A tiles (16 batch rows, two blocks each), eight B tiles, eight multiplies and two stores,
 * where the 16-value tiles took sixteen multiplies, sixteen stores and sixteen float steps a row.
 * Kernel A/B against those (ab.sh, 64 batch rows, Intel Xeon model 207 with AMX): 1.8 to 2.2 times the rate.
 */
#define AMX_WIDE_CHUNK 4 /* super-blocks unpacked at a time: 32 KiB of B tiles, read back from L1 by every batch group */

/* Super-block sb's eight B tiles' bytes, four low then four high, for 16 weight rows (two blocks of 32 values per tile). */
INLINE void amx_wide_operand(const uint8_t *sb, uint8_t *low, uint8_t *high) {
    const __mmask64 odd = 0xAAAAAAAAAAAAAAAAull;
    #pragma GCC unroll 1
    for (int j = 0; j < 8; j++) {
        __m512i w[8];
        unpack_q6(sb + 288 + 384 * j, w);
        /* each sub-block's scales as int16 in both halves of its rows' 32-bit lanes */
        __m512i s0 = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *) (sb + 32 + 32 * j)));
        __m512i s1 = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *) (sb + 48 + 32 * j)));
        s0 = _mm512_or_si512(_mm512_and_si512(s0, _mm512_set1_epi32(0xFFFF)), _mm512_slli_epi32(s0, 16));
        s1 = _mm512_or_si512(_mm512_and_si512(s1, _mm512_set1_epi32(0xFFFF)), _mm512_slli_epi32(s1, 16));
        #pragma GCC unroll 8
        for (int c = 0; c < 8; c++) {
            /* the even and odd bytes' products sc * (q - 32) in int16 lanes, then their low and high bytes back in place */
            const __m512i v = _mm512_sub_epi8(w[c], _mm512_set1_epi8(32)), sc = c < 4 ? s0 : s1;
            const __m512i pe = _mm512_mullo_epi16(_mm512_srai_epi16(_mm512_slli_epi16(v, 8), 8), sc);
            const __m512i po = _mm512_mullo_epi16(_mm512_srai_epi16(v, 8), sc);
            _mm512_store_si512(low + 512 * j + 64 * c, _mm512_mask_blend_epi8(odd, pe, _mm512_slli_epi16(po, 8)));
            _mm512_store_si512(high + 512 * j + 64 * c, _mm512_mask_blend_epi8(odd, _mm512_srli_epi16(pe, 8), po));
        }
    }
    __asm__ volatile("" ::: "memory"); /* GCC's tileloadd names no memory input: the stores above must stay before it */
}

/* Super-block S's float step for the 16 batch rows from b0, on its stored low and high sums ct: group_super's. */
INLINE void amx_wide_epilogue(const int32_t *ct, __m512 d, long S, const float *ad, long ts, long b0, __m512 acc[16]) {
    #pragma GCC unroll 16
    for (int k = 0; k < 16; k++) {
        const __m512i is = _mm512_add_epi32(_mm512_load_si512(ct + 16 * k), _mm512_slli_epi32(_mm512_load_si512(ct + 256 + 16 * k), 8));
        acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), _mm512_mul_ps(d, _mm512_set1_ps(ad[8 * S * ts + b0 + k])), acc[k]);
    }
}

/* Super-block S (chunk slot i) for 16 batch rows into tiles C (low) and C + 1 (high), A tile A; sums to ct[t]. */
#define AMX_WIDE_STAGE(C, CH, A, S, i, t) do {                                                   \
        _tile_zero(C);                                                                          \
        _tile_zero(CH);                                                                         \
        for (int p = 0; p < 4; p++) {                                                           \
            _tile_loadd(A, a0 + 32 * (8 * (S) + 2 * p), aStride);                               \
            _tile_loadd(4, low[i] + 1024 * p, 64);                                              \
            _tile_dpbsud(C, A, 4);                                                              \
            _tile_loadd(5, high[i] + 1024 * p, 64);                                             \
            _tile_dpbssd(CH, A, 5);                                                             \
        }                                                                                       \
        _tile_stored(C, ct[t], 64);                                                             \
        _tile_stored(CH, ct[t] + 256, 64);                                                      \
    } while (0)

/*
 * amx_group for Q6_K (amx_configure(1) done): per chunk of super-blocks the weights become B tiles once, then
 * every 16 batch rows run over them, super-blocks in turn on tiles 0/1 and 6/7 (A 2 and 3), each one's float
 * step after the next one's tile work is issued.
 */
INLINE void amx_wide(const uint8_t *gw, long nb, const int8_t *aq, const float *ad, long ts, long nRows, float *out,
                     long outStride, __mmask16 keep, long ahead) {
    uint8_t low[AMX_WIDE_CHUNK][4096] __attribute__((aligned(64))), high[AMX_WIDE_CHUNK][4096] __attribute__((aligned(64)));
    __m512 dc[AMX_WIDE_CHUNK];
    int32_t ct[2][512] __attribute__((aligned(64)));
    const long aStride = 32 * nb, ns = nb / 8;
    for (long c0 = 0; c0 < ns; c0 += AMX_WIDE_CHUNK) {
        const long cn = ns - c0 < AMX_WIDE_CHUNK ? ns - c0 : AMX_WIDE_CHUNK;
        for (long i = 0; i < cn; i++) {
            const uint8_t *sb = gw + 3360L * (c0 + i);
            /* the next chunk's super-block (or the next group's: groups lie one after another) */
            if (ahead > 0) {
                for (int c = 0; c < 3360; c += 64) _mm_prefetch((const char *) sb + 3360 * AMX_WIDE_CHUNK + c, _MM_HINT_T2);
            }
            dc[i] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) sb));
            amx_wide_operand(sb, low[i], high[i]);
        }
        for (long b0 = 0; b0 < nRows; b0 += 16) {
            __m512 acc[16];
            const int8_t *a0 = aq + 32 * b0 * nb;
            amx_acc_load(acc, c0 == 0, out + b0 * outStride, outStride, keep);
            for (long i = 0; i < cn; i += 2) {
                AMX_WIDE_STAGE(0, 1, 2, c0 + i, i, 0);
                if (i > 0) amx_wide_epilogue(ct[1], dc[i - 1], c0 + i - 1, ad, ts, b0, acc);
                if (i + 1 < cn) {
                    AMX_WIDE_STAGE(6, 7, 3, c0 + i + 1, i + 1, 1);
                    amx_wide_epilogue(ct[0], dc[i], c0 + i, ad, ts, b0, acc);
                }
            }
            amx_wide_epilogue(ct[(cn - 1) & 1], dc[cn - 1], c0 + cn - 1, ad, ts, b0, acc);
            amx_acc_store(acc, out + b0 * outStride, outStride, keep);
        }
    }
}
#endif

#else
/* ---------------- AVX2: two ymm halves (rows 0-7, 8-15) per group ---------------- */

typedef struct { __m256 lo, hi; } facc;
#define FZERO() ((facc) {_mm256_setzero_ps(), _mm256_setzero_ps()})

/*
 * Q4_0: vpmaddubsw's pairs (at most 2 * 15 * 127 in magnitude) summed over the block's eight chunks
 * in int16 stay within 16 * 15 * 127 = 30480, so one vpmaddwd per half ends the block.
 */
INLINE void unpack_q4(const uint8_t *q, __m256i w[8]) {
    const __m256i mask = _mm256_set1_epi8(15);
    #pragma GCC unroll 16
    for (int k = 0; k < 4; k++) {
        __m256i v = _mm256_loadu_si256((const __m256i *) (q + 64 * k));
        w[2 * k] = _mm256_and_si256(v, mask);
        w[2 * k + 1] = _mm256_and_si256(_mm256_srli_epi16(v, 4), mask);
    }
}

INLINE __m256i isum_q4(const __m256i *w, const int32_t *a, int32_t asum) {
    __m256i t = _mm256_maddubs_epi16(w[0], _mm256_set1_epi32(a[0]));
    #pragma GCC unroll 16
    for (int c = 1; c < 8; c++) t = _mm256_add_epi16(t, _mm256_maddubs_epi16(w[c], _mm256_set1_epi32(a[c])));
    return _mm256_add_epi32(_mm256_set1_epi32(-8 * asum), _mm256_madd_epi16(t, _mm256_set1_epi16(1)));
}

/* Q8_0: |w| (up to 128, unsigned) times a with w's sign, each pair within 2 * 128 * 127: to int32 per chunk. */
INLINE void unpack_q8(const uint8_t *q, __m256i w[8]) {
    #pragma GCC unroll 16
    for (int c = 0; c < 8; c++) w[c] = _mm256_loadu_si256((const __m256i *) (q + 64 * c));
}

INLINE __m256i isum_q8(const __m256i *w, const int32_t *a, int32_t asum) {
    (void) asum;
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i s = _mm256_setzero_si256();
    #pragma GCC unroll 16
    for (int c = 0; c < 8; c++) {
        __m256i p = _mm256_maddubs_epi16(_mm256_abs_epi8(w[c]), _mm256_sign_epi8(_mm256_set1_epi32(a[c]), w[c]));
        s = _mm256_add_epi32(s, _mm256_madd_epi16(p, ones));
    }
    return s;
}

/* IQ4_NL / IQ4_XS: the 4-bit indices through ggml's 16-value grid, signed (as Q8_0's operands here). */
INLINE void unpack_iq4(const uint8_t *q, __m256i w[8]) {
    const __m256i grid = _mm256_broadcastsi128_si256(_mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113));
    unpack_q4(q, w);
    #pragma GCC unroll 16
    for (int c = 0; c < 8; c++) w[c] = _mm256_shuffle_epi8(grid, w[c]);
}

/*
 * MXFP4 plus 12: the doubled E2M1 values moved to 0..24, unsigned, so that vpmaddubsw takes them as Q5_0's quants
 * (four chunks' pairs, each within 2 * 24 * 127, fit an int16 sum) and -12 * sum(a) restores the exact sum: the
 * signed path's integer (that of Q8_0 and the IQ4 grids), fewer instructions: no vpabsb and vpsignb per chunk, one
 * int16 sum per four chunks.
 */
INLINE void unpack_mxfp4(const uint8_t *q, __m256i w[8]) {
    const __m256i grid = _mm256_broadcastsi128_si256(_mm_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0));
    unpack_q4(q, w);
    #pragma GCC unroll 16
    for (int c = 0; c < 8; c++) w[c] = _mm256_shuffle_epi8(grid, w[c]);
}

#define PRAGMA(x) _Pragma(#x)
#define UNROLL_HALVES(KIND) PRAGMA(GCC unroll ((KIND) == 1 ? 2 : 1))
/* Per half (rows 0-7, then 8-15): its eight weight operands stay in registers for every batch row. KIND as above. */
#define BLOCK(KIND, QBYTES)                                                                             \
    for (long b = 0; b < nb; b++) {                                                                     \
        const int HEAD = KIND == 3 ? 16 : KIND == 4 || KIND == 6 ? 64 : 32;                             \
        const uint8_t *blk = gw + (HEAD + QBYTES) * b;                                                  \
        if (ahead > 0) {                                                                                \
            _Pragma("GCC unroll 16")                                                                    \
            for (int c = 0; c < HEAD + QBYTES; c += 64) _mm_prefetch((const char *) blk + ahead + c, _MM_HINT_T2); \
        }                                                                                               \
        /* halves one after the other, not unrolled (both halves' 16 operands spilled: 2 rows +5-21%), but for Q8_0, \
           whose decode step is bound by memory and read 5% slower so */                                  \
        UNROLL_HALVES(KIND)                                                                             \
        for (int h = 0; h < 2; h++) {                                                                   \
            __m256 dh = KIND == 3                                                                       \
                ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (blk + 8 * h))), _mm256_set1_epi32(1)), 23)) \
                : _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (blk + 16 * h)));                  \
            __m256 mh = KIND == 4 || KIND == 6 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (blk + 32 + 16 * h))) : dh; \
            __m256i w[8];                                                                               \
            if (KIND == 1) unpack_q8(blk + HEAD + 32 * h, w);                                           \
            else if (KIND == 2) unpack_iq4(blk + HEAD + 32 * h, w);                                     \
            else if (KIND == 3) unpack_mxfp4(blk + HEAD + 32 * h, w);                                  \
            else if (KIND == 5 || KIND == 6) unpack_q5(blk + HEAD + 32 * h, w);                         \
            else unpack_q4(blk + HEAD + 32 * h, w);                                                     \
            _Pragma("GCC unroll 16")                                                                    \
            for (int k = 0; k < G; k++) {                                                               \
                long ab = (b0 + k) * nb + b, at = b * ts + b0 + k;                                      \
                const int32_t *a = (const int32_t *) (aq + 32 * ab);                                    \
                __m256i is = KIND == 1 || KIND == 2 ? isum_q8(w, a, asum[ab])                           \
                    : KIND == 3 || KIND == 5 || KIND == 6                                                   \
                    ? _mm256_add_epi32(isum_q5(w, a), _mm256_set1_epi32(KIND == 3 ? -12 * asum[ab] : KIND == 5 ? -16 * asum[ab] : 0)) \
                    : isum_q4(w, a, KIND == 0 ? asum[ab] : 0);                                          \
                __m256 da = _mm256_set1_ps(ad[at]);                                                     \
                __m256 *x = h == 0 ? &acc[k].lo : &acc[k].hi;                                           \
                *x = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is), _mm256_mul_ps(dh, da), *x);                \
                if (KIND == 4 || KIND == 6)                                                             \
                    *x = _mm256_fmadd_ps(_mm256_set1_ps(dsum[at]), mh, *x);           \
            }                                                                                           \
        }                                                                                               \
    }

INLINE void store(float *o, __mmask16 keep, facc acc) {
    float t[16];
    _mm256_storeu_ps(t, acc.lo);
    _mm256_storeu_ps(t + 8, acc.hi);
    #pragma GCC unroll 16
    for (int i = 0; i < 16; i++) {
        if (keep & (1u << i)) o[i] = t[i];
    }
}
/* Q6_K's chunk operands for one half (rows 0-7 or 8-15): low nibble plus two high bits, as in the AVX-512 image. */
INLINE void unpack_q6(const uint8_t *q, __m256i w[8]) {
    const __m256i m15 = _mm256_set1_epi8(15), m48 = _mm256_set1_epi8(0x30);
    __m256i h0 = _mm256_loadu_si256((const __m256i *) (q + 256)), h1 = _mm256_loadu_si256((const __m256i *) (q + 320));
    #pragma GCC unroll 16
    for (int k = 0; k < 4; k++) {
        __m256i v = _mm256_loadu_si256((const __m256i *) (q + 64 * k)), h = k < 2 ? h0 : h1;
        __m256i lo = _mm256_and_si256(v, m15), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m15);
        int u = (2 * k) % 4;
        __m256i x0 = u == 0 ? _mm256_slli_epi16(h, 4) : h;
        __m256i x1 = u == 0 ? _mm256_slli_epi16(h, 2) : _mm256_srli_epi16(h, 2);
        w[2 * k] = _mm256_or_si256(_mm256_and_si256(x0, m48), lo);
        w[2 * k + 1] = _mm256_or_si256(_mm256_and_si256(x1, m48), hi);
    }
}

/* Q6_K quants reach 63: two vpmaddubsw pairs (each within 2 * 63 * 127) still fit int16, four do not. */
INLINE __m256i isum_q6(const __m256i *w, const int32_t *a, int32_t hsum) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i t0 = _mm256_add_epi16(_mm256_maddubs_epi16(w[0], _mm256_set1_epi32(a[0])), _mm256_maddubs_epi16(w[1], _mm256_set1_epi32(a[1])));
    __m256i t1 = _mm256_add_epi16(_mm256_maddubs_epi16(w[2], _mm256_set1_epi32(a[2])), _mm256_maddubs_epi16(w[3], _mm256_set1_epi32(a[3])));
    return _mm256_add_epi32(_mm256_set1_epi32(-32 * hsum), _mm256_add_epi32(_mm256_madd_epi16(t0, ones), _mm256_madd_epi16(t1, ones)));
}

/* Q5_K's operands for one half: nibbles and fifth bits as in the AVX-512 image. */
INLINE void unpack_q5(const uint8_t *q, __m256i w[8]) {
    unpack_q4(q, w);
    const __m256i m16 = _mm256_set1_epi8(16);
    __m256i h = _mm256_loadu_si256((const __m256i *) (q + 256));
    #pragma GCC unroll 16
    for (int u = 0; u < 8; u++) {
        __m256i x = u < 4 ? _mm256_slli_epi16(h, 4 - u) : u == 4 ? h : _mm256_srli_epi16(h, u - 4);
        w[u] = _mm256_or_si256(_mm256_and_si256(x, m16), w[u]);
    }
}

/* Q5_K quants reach 31: four vpmaddubsw pairs (each within 2 * 31 * 127) fit int16, eight do not. */
INLINE __m256i isum_q5(const __m256i *w, const int32_t *a) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i t0 = _mm256_maddubs_epi16(w[0], _mm256_set1_epi32(a[0])), t1 = _mm256_maddubs_epi16(w[4], _mm256_set1_epi32(a[4]));
    #pragma GCC unroll 16
    for (int c = 1; c < 4; c++) {
        t0 = _mm256_add_epi16(t0, _mm256_maddubs_epi16(w[c], _mm256_set1_epi32(a[c])));
        t1 = _mm256_add_epi16(t1, _mm256_maddubs_epi16(w[c + 4], _mm256_set1_epi32(a[c + 4])));
    }
    return _mm256_add_epi32(_mm256_madd_epi16(t0, ones), _mm256_madd_epi16(t1, ones));
}

/* Q2_K / Q3_K operands for one half, as in the AVX-512 image. */
INLINE void unpack_q23(const uint8_t *q, int three, __m256i w[8]) {
    const __m256i m3 = _mm256_set1_epi8(3), m4 = _mm256_set1_epi8(4);
    #pragma GCC unroll 16
    for (int t = 0; t < 2; t++) {
        __m256i v = _mm256_loadu_si256((const __m256i *) (q + 64 * t));
        #pragma GCC unroll 16
        for (int u = 0; u < 4; u++) w[4 * t + u] = _mm256_and_si256(u == 0 ? v : _mm256_srli_epi16(v, 2 * u), m3);
    }
    if (three) {
        __m256i h = _mm256_loadu_si256((const __m256i *) (q + 128));
        #pragma GCC unroll 16
        for (int c = 0; c < 8; c++) {
            __m256i x = c < 2 ? _mm256_slli_epi16(h, 2 - c) : c == 2 ? h : _mm256_srli_epi16(h, c - 2);
            w[c] = _mm256_or_si256(_mm256_and_si256(x, m4), w[c]);
        }
    }
}

/* One 16-value sub-block of quants up to 7: four vpmaddubsw pairs (each within 2 * 7 * 127) summed in int16. */
INLINE __m256i isum16(const __m256i *w, const int32_t *a, __m256i init) {
    __m256i t = _mm256_maddubs_epi16(w[0], _mm256_set1_epi32(a[0]));
    #pragma GCC unroll 16
    for (int c = 1; c < 4; c++) t = _mm256_add_epi16(t, _mm256_maddubs_epi16(w[c], _mm256_set1_epi32(a[c])));
    return _mm256_add_epi32(init, _mm256_madd_epi16(t, _mm256_set1_epi16(1)));
}

/*
 * Block j's eighth of the lines of a super-block of `bytes` at sb, `ahead` bytes on (none when 0): prefetched a
 * block at a time, as BLOCK prefetches its blocks. All of a super-block's lines at its start (37 for Q4_K, 53 for
 * Q6_K) cost a llama-1b Q4_K_M decode step more than no prefetch at all (AMD Zen 3: 28.5-29.3 against 31.1 tok/s).
 */
INLINE void prefetch_eighth(const uint8_t *sb, long ahead, int bytes, long j) {
    const int lines = (bytes + 63) / 64;
    for (int c = ahead > 0 ? (int) (lines * j / 8) : lines; c < lines * (j + 1) / 8; c++)
        _mm_prefetch((const char *) sb + ahead + 64 * c, _MM_HINT_T2);
}

/* The super-block types as in the AVX-512 image, per half (rows 0-7, then 8-15). */
INLINE void group_super(int G, int T, const uint8_t *gw, long nb, const int8_t *aq, const int32_t *asum, const int32_t *half,
                        const float *ad, const float *dsum, long ts, long b0, float *out, long outStride, __mmask16 keep, long ahead) {
    const int SB = T == 2 ? 2368 : T == 4 ? 2880 : T == 3 ? 3360 : T == 8 ? 1344 : T == 9 ? 1824 : 2208, mins = T == 2 || T == 4;
    facc acc[8];
    __m256i wide[8][2]; /* Q6_K: each batch row's integer sums over the super-block, per half */
    #pragma GCC unroll 16
    for (int k = 0; k < G; k++) {
        acc[k] = FZERO();
        wide[k][0] = wide[k][1] = _mm256_setzero_si256();
    }
    for (long S = 0; S < nb / 8; S++) {
        const uint8_t *sb = gw + (long) SB * S;
        #pragma GCC unroll 1
        for (int j = 0; j < 8; j++) {
            prefetch_eighth(sb, ahead, SB, j);
            /* the halves one after the other, as BLOCK's (2 rows: Q4_K +12%, Q6_K and Q5_K +10%, Q3_K +12%) */
            #pragma GCC unroll 1
            for (int h = 0; h < 2; h++) {
                __m256 dv = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (sb + 16 * h)));
                __m256i w[8];
                __m256 sv, s1 = dv, mm = dv, m1 = dv;
                if (T == 8) {
                    __m256 mv = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (sb + 32 + 16 * h)));
                    __m256i sm0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (sb + 64 + 32 * j + 8 * h)));
                    __m256i sm1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (sb + 80 + 32 * j + 8 * h)));
                    sv = _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_and_si256(sm0, _mm256_set1_epi32(15))));
                    mm = _mm256_mul_ps(mv, _mm256_cvtepi32_ps(_mm256_srli_epi32(sm0, 4)));
                    s1 = _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_and_si256(sm1, _mm256_set1_epi32(15))));
                    m1 = _mm256_mul_ps(mv, _mm256_cvtepi32_ps(_mm256_srli_epi32(sm1, 4)));
                    unpack_q23(sb + 320 + 128 * j + 32 * h, 0, w);
                } else if (T == 9) {
                    sv = _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *) (sb + 32 + 32 * j + 8 * h)))));
                    s1 = _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *) (sb + 48 + 32 * j + 8 * h)))));
                    unpack_q23(sb + 288 + 192 * j + 32 * h, 1, w);
                } else if (T == 3) {
                    /* as the AVX-512 image: integer sums over the super-block, its scales as integers */
                    const __m256i sc0 = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *) (sb + 32 + 32 * j + 8 * h)));
                    const __m256i sc1 = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *) (sb + 48 + 32 * j + 8 * h)));
                    unpack_q6(sb + 288 + 384 * j + 32 * h, w);
                    #pragma GCC unroll 16
                    for (int k = 0; k < G; k++) {
                        const long ab = (b0 + k) * nb + 8 * S + j;
                        const int32_t *a = (const int32_t *) (aq + 32 * ab);
                        wide[k][h] = _mm256_add_epi32(wide[k][h], _mm256_add_epi32(_mm256_mullo_epi32(isum_q6(w, a, half[2 * ab]), sc0),
                                                                                    _mm256_mullo_epi32(isum_q6(w + 4, a + 4, half[2 * ab + 1]), sc1)));
                        if (j == 7) {
                            __m256 *x = h == 0 ? &acc[k].lo : &acc[k].hi;
                            *x = _mm256_fmadd_ps(_mm256_cvtepi32_ps(wide[k][h]), _mm256_mul_ps(dv, _mm256_set1_ps(ad[8 * S * ts + b0 + k])), *x);
                            wide[k][h] = _mm256_setzero_si256();
                        }
                    }
                    continue;
                } else if (mins) {
                    __m256 mv = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (sb + 32 + 16 * h)));
                    sv = _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (sb + 64 + 16 * j + 8 * h)))));
                    mm = _mm256_mul_ps(mv, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (sb + 192 + 16 * j + 8 * h)))));
                    if (T == 4) unpack_q5(sb + 320 + 320 * j + 32 * h, w);
                    else unpack_q4(sb + 320 + 256 * j + 32 * h, w);
                } else {
                    sv = _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *) (sb + 32 + 16 * j + 8 * h)))));
                    unpack_iq4(sb + 160 + 256 * j + 32 * h, w);
                }
                #pragma GCC unroll 16
                for (int k = 0; k < G; k++) {
                    long ab = (b0 + k) * nb + 8 * S + j, at = (8 * S + j) * ts + b0 + k;
                    const int32_t *a = (const int32_t *) (aq + 32 * ab);
                    __m256 da = _mm256_set1_ps(ad[at]);
                    __m256 *x = h == 0 ? &acc[k].lo : &acc[k].hi;
                    if (T == 8 || T == 9) {
                        __m256i z = _mm256_setzero_si256();
                        __m256i i0 = isum16(w, a, T == 9 ? _mm256_set1_epi32(-4 * half[2 * ab]) : z);
                        __m256i i1 = isum16(w + 4, a + 4, T == 9 ? _mm256_set1_epi32(-4 * half[2 * ab + 1]) : z);
                        *x = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i0), _mm256_mul_ps(sv, da), *x);
                        if (T == 8) *x = _mm256_fnmadd_ps(_mm256_set1_ps(ad[at] * (float) half[2 * ab]), mm, *x);
                        *x = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i1), _mm256_mul_ps(s1, da), *x);
                        if (T == 8) *x = _mm256_fnmadd_ps(_mm256_set1_ps(ad[at] * (float) half[2 * ab + 1]), m1, *x);
                    } else if (mins) {
                        __m256i is = T == 4 ? isum_q5(w, a) : isum_q4(w, a, 0);
                        *x = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is), _mm256_mul_ps(sv, da), *x);
                        *x = _mm256_fnmadd_ps(_mm256_set1_ps(dsum[at]), mm, *x);
                    } else {
                        *x = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum_q8(w, a, asum[ab])), _mm256_mul_ps(sv, da), *x);
                    }
                }
            }
        }
    }
    #pragma GCC unroll 16
    for (int k = 0; k < G; k++) store(out + (b0 + k) * outStride, keep, acc[k]);
}

/*
 * Prompt chunks (4 or more batch rows) of every type: per group of 16 weight rows and chunk of
 * TILE_BLOCKS 32-value blocks, the weights are unpacked once into L1 (eight 32-byte operands per
 * half and block, the scales as floats), then every tile of batch rows runs over them: per chunk of
 * four values each weight operand of both halves is loaded once for the tile's rows and each
 * activation broadcast once for both halves, so a tile keeps 2 x G int16 sums in registers (G = 4:
 * 8 of AVX2's 16). Its float accumulators wait in `out` between chunks (masked where a lane is not
 * the caller's). The integer sums and the float steps per output and block are BLOCK's (Q4_0) and
 * group_super's (the K-quants), in block order: same bits. Kernel A/B (tools/native-kernels/ab, 64
 * batch rows, 2026-12-04, AMD EPYC Zen 3): Q5_K 109 GOPS in group_super, 202 here (Q4_K 218); Q6_K
 * (sub_tile) 98 and 158; Q8_0 80 in BLOCK, 116 here. The next chunk's weights are prefetched while this
 * one's first tile works (tile_prefetch), one chunk ahead: decode steps of 4 to 16 batch rows read them
 * from memory.
 */
#define TILE_BLOCKS 16

typedef struct {
    __m256i q[TILE_BLOCKS][2][8];   /* block, half, chunk: unsigned 0..15 (Q5_0, Q5_1, Q5_K 0..31, MXFP4 0..24, Q6_K 0..63) */
    __m256 d[TILE_BLOCKS][2];       /* the halves' scales: d (MXFP4 2^(e - 128)), K-quants d * sc (Q3_K, Q2_K: of the first 16 values;
                                       Q6_K: its two sub-blocks' int8 scales as int32 in d and m) */
    __m256 m[TILE_BLOCKS][2];       /* Q4_1, Q5_1: m; Q4_K, Q5_K: dmin * m; Q3_K, Q2_K: the last 16 values' d * sc */
    __m256 mn[TILE_BLOCKS][2][2];   /* Q2_K: each 16-value sub-block's dmin * m; Q6_K: [0] the super-block's d */
    __m256i sg[TILE_BLOCKS][2][8];  /* Q8_0, IQ4_NL, IQ4_XS: the signed values (q holds their magnitudes) */
} tile_chunk;

/*
 * KIND (dgr_q8's type): per 32-value block 0 Q4_0 (288 bytes), 1 Q8_0 (544), 5 IQ4_NL (288), 7 MXFP4 (272),
 * 10 Q4_1 (320), 11 Q5_0 (352), 12 Q5_1 (384); per super-block of eight: 2 Q4_K (2368), 3 Q6_K (3360),
 * 4 Q5_K (2880), 6 IQ4_XS (2208), 8 Q2_K (1344), 9 Q3_K (1824). TILE_SIGNED: the signed path of Q8_0 (and the IQ4 grids);
 * TILE_FIVE: quants up to 31 (MXFP4: unpack_mxfp4's 0..24); TILE_SUB: a scale per 16 values (sub_tile).
 */
#define TILE_SIGNED(KIND) ((KIND) == 1 || (KIND) == 5 || (KIND) == 6)
#define TILE_FIVE(KIND) ((KIND) == 4 || (KIND) == 7 || (KIND) == 11 || (KIND) == 12)
/* Q4_0, Q5_0 and MXFP4 (unpack_mxfp4): an offset times sum(a) per batch row and block, added to the integer sum */
#define TILE_OFFSET(KIND) ((KIND) == 0 || (KIND) == 7 || (KIND) == 11)
#define TILE_SUB(KIND) ((KIND) == 3 || (KIND) == 8 || (KIND) == 9)
/* The bytes above: a 32-value block's (TILE_PER_BLOCK types) or a super-block's (the others), all 16 rows */
#define TILE_PER_BLOCK(KIND) ((KIND) <= 1 || (KIND) == 5 || (KIND) == 7 || (KIND) >= 10)
#define TILE_BLOCK_BYTES(KIND) ((KIND) == 1 ? 544 : (KIND) == 7 ? 272 : (KIND) == 10 ? 320 : (KIND) == 11 ? 352 : (KIND) == 12 ? 384 : 288)
#define TILE_SB(KIND) ((KIND) == 2 ? 2368 : (KIND) == 4 ? 2880 : (KIND) == 6 ? 2208 : (KIND) == 8 ? 1344 : (KIND) == 9 ? 1824 : 3360)
/*
 * Block b's lines `ahead` bytes on, as tile_unpack's blocks lie: issued by a chunk's first tile between its blocks'
 * work, so that the next chunk's misses spread over this chunk's arithmetic instead of queueing in a burst while it
 * is unpacked. Kernel A/B (ab.sh with weights from memory, 256 copies, AVX2, AMD Zen 3, 8 batch rows), against the
 * burst at 4,096 bytes: Q4_0 +14-20%, Q8_0 +8-12%, Q4_K +9-11%, Q5_K +7%, Q6_K +3-5%, Q4_1, Q5_1, MXFP4 +14-17%;
 * 4 rows +17%, 16 +12%, 64 +4% (Q4_0). Q2_K and Q3_K lost 3-6% so (their sub_tile has no registers to spare):
 * TILE_SPREAD keeps their burst.
 */
#define TILE_SPREAD(KIND) ((KIND) != 8 && (KIND) != 9)
INLINE void tile_prefetch(int KIND, const uint8_t *gw, long b, long ahead) {
    if (TILE_PER_BLOCK(KIND)) {
        const uint8_t *blk = gw + (long) TILE_BLOCK_BYTES(KIND) * b;
        for (int c = 0; c < TILE_BLOCK_BYTES(KIND); c += 64) _mm_prefetch((const char *) blk + ahead + c, _MM_HINT_T2);
    } else {
        prefetch_eighth(gw + (long) TILE_SB(KIND) * (b >> 3), ahead, TILE_SB(KIND), b & 7);
    }
}

/* The chunk's blocks [c0, c0 + cn) of group gw into u; `ahead` > 0: each block prefetches as tile_prefetch (the burst). */
INLINE void tile_unpack(int KIND, const uint8_t *gw, long c0, long cn, tile_chunk *u, long ahead) {
    for (long i = 0; i < cn; i++) {
        const long b = c0 + i;
        const uint8_t *blk = TILE_PER_BLOCK(KIND) ? gw + (long) TILE_BLOCK_BYTES(KIND) * b : gw + (long) TILE_SB(KIND) * (b >> 3);
        const long j = b & 7;
        if (ahead > 0) tile_prefetch(KIND, gw, b, ahead);
        #pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            /* MXFP4: 2^(e - 128) from its E8M0 exponent bytes, as BLOCK */
            __m256 dv = KIND == 7
                ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (blk + 8 * h))), _mm256_set1_epi32(1)), 23))
                : _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (blk + 16 * h)));
            if (TILE_OFFSET(KIND)) {
                u->d[i][h] = dv;
                if (KIND == 0) unpack_q4(blk + 32 + 32 * h, u->q[i][h]);
                else if (KIND == 7) unpack_mxfp4(blk + 16 + 32 * h, u->q[i][h]);
                else unpack_q5(blk + 32 + 32 * h, u->q[i][h]);
            } else if (KIND == 10 || KIND == 12) {
                u->d[i][h] = dv;
                u->m[i][h] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (blk + 32 + 16 * h)));
                if (KIND == 10) unpack_q4(blk + 64 + 32 * h, u->q[i][h]);
                else unpack_q5(blk + 64 + 32 * h, u->q[i][h]);
            } else if (TILE_SIGNED(KIND)) {
                /* as BLOCK (Q8_0, IQ4_NL) and group_super (IQ4_XS: d * (ls - 32), its 6-bit scales stored as int8) */
                if (KIND == 6) {
                    u->d[i][h] = _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *) (blk + 32 + 16 * j + 8 * h)))));
                    unpack_iq4(blk + 160 + 256 * j + 32 * h, u->sg[i][h]);
                } else {
                    u->d[i][h] = dv;
                    if (KIND == 1) unpack_q8(blk + 32 + 32 * h, u->sg[i][h]);
                    else unpack_iq4(blk + 32 + 32 * h, u->sg[i][h]);
                }
                #pragma GCC unroll 8
                for (int c = 0; c < 8; c++) u->q[i][h][c] = _mm256_abs_epi8(u->sg[i][h][c]);
            } else if (KIND == 3) {
                /* as group_super: each 16-value sub-block's int8 scale as an int32 (in d and m's bits), the super-block's d
                 * in mn; the quants unsigned (their -32 is in the offsets) */
                u->d[i][h] = _mm256_castsi256_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *) (blk + 32 + 32 * j + 8 * h))));
                u->m[i][h] = _mm256_castsi256_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *) (blk + 48 + 32 * j + 8 * h))));
                u->mn[i][h][0] = dv;
                unpack_q6(blk + 288 + 384 * j + 32 * h, u->q[i][h]);
            } else if (KIND == 8) {
                /* as group_super: each sub-block's scale-and-min byte, d * (low nibble) and dmin * (high nibble) */
                __m256 mv = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (blk + 32 + 16 * h)));
                __m256i sm0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (blk + 64 + 32 * j + 8 * h)));
                __m256i sm1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (blk + 80 + 32 * j + 8 * h)));
                u->d[i][h] = _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_and_si256(sm0, _mm256_set1_epi32(15))));
                u->mn[i][h][0] = _mm256_mul_ps(mv, _mm256_cvtepi32_ps(_mm256_srli_epi32(sm0, 4)));
                u->m[i][h] = _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_and_si256(sm1, _mm256_set1_epi32(15))));
                u->mn[i][h][1] = _mm256_mul_ps(mv, _mm256_cvtepi32_ps(_mm256_srli_epi32(sm1, 4)));
                unpack_q23(blk + 320 + 128 * j + 32 * h, 0, u->q[i][h]);
            } else if (KIND == 9) {
                /* as group_super: d * sc per sub-block (6-bit scales stored as int8), quants 0..7 (their -4 in the offsets) */
                u->d[i][h] = _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *) (blk + 32 + 32 * j + 8 * h)))));
                u->m[i][h] = _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *) (blk + 48 + 32 * j + 8 * h)))));
                unpack_q23(blk + 288 + 192 * j + 32 * h, 1, u->q[i][h]);
            } else {
                __m256 mv = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (blk + 32 + 16 * h)));
                u->d[i][h] = _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (blk + 64 + 16 * j + 8 * h)))));
                u->m[i][h] = _mm256_mul_ps(mv, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (blk + 192 + 16 * j + 8 * h)))));
                if (KIND == 4) unpack_q5(blk + 320 + 320 * j + 32 * h, u->q[i][h]);
                else unpack_q4(blk + 320 + 256 * j + 32 * h, u->q[i][h]);
            }
        }
    }
}

/* A tile's float accumulators from `out` (zero for the first chunk), lanes in `mask` or all when full. */
INLINE void tile_acc_load(int G, long c0, const float *out, long outStride, long b0, const __m256i mask[2], int full, __m256 acc[4][2]) {
    #pragma GCC unroll 4
    for (int k = 0; k < G; k++) {
        #pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            const float *o = out + (b0 + k) * outStride + 8 * h;
            acc[k][h] = c0 == 0 ? _mm256_setzero_ps() : full ? _mm256_loadu_ps(o) : _mm256_maskload_ps(o, mask[h]);
        }
    }
}

/* ... and back to `out`, where they wait for the next chunk or are the result. */
INLINE void tile_acc_store(int G, float *out, long outStride, long b0, const __m256i mask[2], int full, __m256 acc[4][2]) {
    #pragma GCC unroll 4
    for (int k = 0; k < G; k++) {
        #pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            float *o = out + (b0 + k) * outStride + 8 * h;
            if (full) _mm256_storeu_ps(o, acc[k][h]);
            else _mm256_maskstore_ps(o, mask[h], acc[k][h]);
        }
    }
}

/*
 * The tile of the types with one scale per 32-value block and weight row (all but Q6_K): G (1, 2 or 4) batch
 * rows from b0 over the chunk's blocks; accumulators from and to out (lanes in `mask`, or all when full).
 */
INLINE void block_tile(int KIND, int G, const tile_chunk *u, long c0, long cn, long nb, const int8_t *aq, const int32_t *asum,
                    const float *ad, const float *dsum, long ts, long b0, float *out, long outStride, const __m256i mask[2], int full,
                    const uint8_t *gw, long ahead) {
    __m256 acc[4][2];
    /* Q4_0, Q5_0, MXFP4: the offset -8, -16 or -12 times sum(a) per batch row and block, as broadcast operands (a min takes dsum as it lies) */
    int32_t off[4][TILE_BLOCKS] __attribute__((aligned(32)));
    tile_acc_load(G, c0, out, outStride, b0, mask, full, acc);
    #pragma GCC unroll 4
    for (int k = 0; k < G; k++) {
        /*
         * Eight sums per load, so cn must be a multiple of 8, or the last load reads past this batch
         * row's sums (for the last row, past the caller's sums altogether): it is, as nb is (the Java
         * side repacks only widths that are multiples of 256, Q8Rows.fits) and TILE_BLOCKS is.
         */
        for (long i = 0; TILE_OFFSET(KIND) && i < cn; i += 8) {
            __m256i s = _mm256_loadu_si256((const __m256i *) (asum + (b0 + k) * nb + c0 + i));
            _mm256_store_si256((__m256i *) (off[k] + i), _mm256_mullo_epi32(s, _mm256_set1_epi32(KIND == 0 ? -8 : KIND == 7 ? -12 : -16)));
        }
    }
    const __m256i ones = _mm256_set1_epi16(1);
    for (long i = 0; i < cn; i++) {
        const long b = c0 + i;
        if (ahead > 0) tile_prefetch(KIND, gw, b, ahead);
        __m256i t[4][2], lo[4][2];
        #pragma GCC unroll 8
        for (int c = 0; c < 8; c++) {
            __m256i w0 = u->q[i][0][c], w1 = u->q[i][1][c];
            if (TILE_SIGNED(KIND)) {
                /* signed values: |w| times a with w's sign, as isum_q8; one chunk's pairs (up to 2 * 128 * 127) fill an int16 */
                __m256i g0 = u->sg[i][0][c], g1 = u->sg[i][1][c];
                #pragma GCC unroll 4
                for (int k = 0; k < G; k++) {
                    __m256i a = _mm256_set1_epi32(((const int32_t *) (aq + 32 * ((b0 + k) * nb + b)))[c]);
                    __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(w0, _mm256_sign_epi8(a, g0)), ones);
                    __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(w1, _mm256_sign_epi8(a, g1)), ones);
                    t[k][0] = c == 0 ? p0 : _mm256_add_epi32(t[k][0], p0);
                    t[k][1] = c == 0 ? p1 : _mm256_add_epi32(t[k][1], p1);
                    __asm__("" : "+x"(t[k][0]), "+x"(t[k][1]));
                }
                continue;
            }
            #pragma GCC unroll 4
            for (int k = 0; k < G; k++) {
                __m256i a = _mm256_set1_epi32(((const int32_t *) (aq + 32 * ((b0 + k) * nb + b)))[c]);
                __m256i p0 = _mm256_maddubs_epi16(w0, a), p1 = _mm256_maddubs_epi16(w1, a);
                /* Q5_0, Q5_1 and Q5_K's quants reach 31, MXFP4's 24: four chunks fit an int16 sum (isum_q5), so chunks 0-3 are widened apart */
                const int start = c == 0 || (TILE_FIVE(KIND) && c == 4);
                t[k][0] = start ? p0 : _mm256_add_epi16(t[k][0], p0);
                t[k][1] = start ? p1 : _mm256_add_epi16(t[k][1], p1);
                /* opaque to GCC: else it reassociates the sums, takes every product first and spills them */
                __asm__("" : "+x"(t[k][0]), "+x"(t[k][1]));
                if (TILE_FIVE(KIND) && c == 3) {
                    lo[k][0] = _mm256_madd_epi16(t[k][0], ones);
                    lo[k][1] = _mm256_madd_epi16(t[k][1], ones);
                }
            }
        }
        #pragma GCC unroll 4
        for (int k = 0; k < G; k++) {
            const __m256 da = _mm256_set1_ps(ad[b * ts + b0 + k]);
            #pragma GCC unroll 2
            for (int h = 0; h < 2; h++) {
                __m256i is = TILE_SIGNED(KIND) ? t[k][h] : _mm256_madd_epi16(t[k][h], ones);
                if (TILE_OFFSET(KIND)) is = _mm256_add_epi32(_mm256_set1_epi32(off[k][i]), is);
                if (TILE_FIVE(KIND)) is = _mm256_add_epi32(lo[k][h], is);
                acc[k][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is), _mm256_mul_ps(u->d[i][h], da), acc[k][h]);
                /* the K-quants' mins are subtracted, Q4_1's and Q5_1's added (BLOCK, group_super) */
                if (KIND == 2 || KIND == 4) acc[k][h] = _mm256_fnmadd_ps(_mm256_broadcast_ss(dsum + b * ts + b0 + k), u->m[i][h], acc[k][h]);
                if (KIND == 10 || KIND == 12) acc[k][h] = _mm256_fmadd_ps(_mm256_broadcast_ss(dsum + b * ts + b0 + k), u->m[i][h], acc[k][h]);
            }
        }
    }
    tile_acc_store(G, out, outStride, b0, mask, full, acc);
}

/*
 * The tile of the types with a scale per 16 values (Q6_K, Q3_K, Q2_K): G (1, 2 or 4) batch rows from b0 over
 * the chunk's blocks. Each 16-value sub-block (chunks 0-3, then 4-7) has its own scale, so its float steps
 * follow its chunks, as group_super's: only one sub-block's int32 sums are live at a time. Q6_K's quants
 * reach 63, so two vpmaddubsw pairs fit an int16 sum where Q4's eight do: each pair of chunks is widened to
 * int32 (isum_q6's sums); Q3_K's (up to 7) and Q2_K's (up to 3) four chunks fit one (isum16). Kernel A/B
 * (tools/native-kernels/ab, AVX2, 64 batch rows): Q6_K 98 GOPS in group_super, 140 in tiles of 2 rows,
 * 155 of 4 with both sub-blocks' sums live, 158 like this; the halves one after another (the activations
 * broadcast twice) 113.
 */
INLINE void sub_tile(int KIND, int G, const tile_chunk *u, long c0, long cn, long nb, const int8_t *aq, const int32_t *half,
                     const float *ad, long ts, long b0, float *out, long outStride, const __m256i mask[2], int full,
                     const uint8_t *gw, long ahead) {
    __m256 acc[4][2];
    /*
     * per batch row, block and sub-block: Q6_K's offset -32 * sum(a), Q3_K's -4 * sum(a). Q2_K's min factor d_a * (float) sum(a)
     * is formed where it is used: kept in an array like these it cost a fifth of Q2_K's rate (128 against 159 GOPS).
     */
    int32_t off[4][2 * TILE_BLOCKS] __attribute__((aligned(32)));
    /* Q6_K: each batch row's integer sums over the super-block (a chunk holds whole super-blocks) */
    __m256i wide[4][2];
    #pragma GCC unroll 4
    for (int k = 0; k < 4; k++) wide[k][0] = wide[k][1] = _mm256_setzero_si256();
    tile_acc_load(G, c0, out, outStride, b0, mask, full, acc);
    #pragma GCC unroll 4
    for (int k = 0; k < G; k++) {
        const int32_t *hs = half + 2 * ((b0 + k) * nb + c0);
        /* 2 * cn sums, a multiple of 8 as cn is (block_tile) */
        for (long i = 0; KIND != 8 && i < 2 * cn; i += 8) {
            __m256i s = _mm256_loadu_si256((const __m256i *) (hs + i));
            _mm256_store_si256((__m256i *) (off[k] + i), _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(s, KIND == 3 ? 5 : 2)));
        }
    }
    const __m256i ones = _mm256_set1_epi16(1);
    for (long i = 0; i < cn; i++) {
        const long b = c0 + i;
        if (ahead > 0) tile_prefetch(KIND, gw, b, ahead);
        #pragma GCC unroll 2
        for (int sub = 0; sub < 2; sub++) {
            __m256i is[4][2];
            if (KIND == 3) {
                #pragma GCC unroll 4
                for (int c = 4 * sub; c < 4 * sub + 4; c += 2) {
                    __m256i w0 = u->q[i][0][c], w1 = u->q[i][1][c], v0 = u->q[i][0][c + 1], v1 = u->q[i][1][c + 1];
                    #pragma GCC unroll 4
                    for (int k = 0; k < G; k++) {
                        const int32_t *a = (const int32_t *) (aq + 32 * ((b0 + k) * nb + b));
                        __m256i x = _mm256_set1_epi32(a[c]), y = _mm256_set1_epi32(a[c + 1]);
                        __m256i t0 = _mm256_add_epi16(_mm256_maddubs_epi16(w0, x), _mm256_maddubs_epi16(v0, y));
                        __m256i t1 = _mm256_add_epi16(_mm256_maddubs_epi16(w1, x), _mm256_maddubs_epi16(v1, y));
                        __m256i p0 = _mm256_madd_epi16(t0, ones), p1 = _mm256_madd_epi16(t1, ones);
                        if (c == 4 * sub) {
                            is[k][0] = _mm256_add_epi32(_mm256_set1_epi32(off[k][2 * i + sub]), p0);
                            is[k][1] = _mm256_add_epi32(_mm256_set1_epi32(off[k][2 * i + sub]), p1);
                        } else {
                            is[k][0] = _mm256_add_epi32(is[k][0], p0);
                            is[k][1] = _mm256_add_epi32(is[k][1], p1);
                        }
                    }
                }
            } else {
                __m256i t[4][2];
                #pragma GCC unroll 4
                for (int c = 4 * sub; c < 4 * sub + 4; c++) {
                    __m256i w0 = u->q[i][0][c], w1 = u->q[i][1][c];
                    #pragma GCC unroll 4
                    for (int k = 0; k < G; k++) {
                        __m256i a = _mm256_set1_epi32(((const int32_t *) (aq + 32 * ((b0 + k) * nb + b)))[c]);
                        __m256i p0 = _mm256_maddubs_epi16(w0, a), p1 = _mm256_maddubs_epi16(w1, a);
                        t[k][0] = c == 4 * sub ? p0 : _mm256_add_epi16(t[k][0], p0);
                        t[k][1] = c == 4 * sub ? p1 : _mm256_add_epi16(t[k][1], p1);
                        __asm__("" : "+x"(t[k][0]), "+x"(t[k][1])); /* keeps the chain, as block_tile's */
                    }
                }
                #pragma GCC unroll 4
                for (int k = 0; k < G; k++) {
                    #pragma GCC unroll 2
                    for (int h = 0; h < 2; h++) {
                        is[k][h] = _mm256_madd_epi16(t[k][h], ones);
                        if (KIND == 9) is[k][h] = _mm256_add_epi32(_mm256_set1_epi32(off[k][2 * i + sub]), is[k][h]);
                    }
                }
            }
            if (KIND == 3) {
                /* Q6_K: integer sums over the super-block (group_super's), its float step after its last sub-block */
                #pragma GCC unroll 4
                for (int k = 0; k < G; k++) {
                    #pragma GCC unroll 2
                    for (int h = 0; h < 2; h++) {
                        wide[k][h] = _mm256_add_epi32(wide[k][h], _mm256_mullo_epi32(is[k][h], _mm256_castps_si256(sub == 0 ? u->d[i][h] : u->m[i][h])));
                        if (sub == 1 && (b & 7) == 7) {
                            acc[k][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(wide[k][h]), _mm256_mul_ps(u->mn[i][h][0], _mm256_set1_ps(ad[(b - 7) * ts + b0 + k])), acc[k][h]);
                            wide[k][h] = _mm256_setzero_si256();
                        }
                    }
                }
                continue;
            }
            #pragma GCC unroll 4
            for (int k = 0; k < G; k++) {
                const __m256 da = _mm256_set1_ps(ad[b * ts + b0 + k]);
                #pragma GCC unroll 2
                for (int h = 0; h < 2; h++) {
                    acc[k][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is[k][h]), _mm256_mul_ps(sub == 0 ? u->d[i][h] : u->m[i][h], da), acc[k][h]);
                    if (KIND == 8) acc[k][h] = _mm256_fnmadd_ps(_mm256_set1_ps(ad[b * ts + b0 + k] * (float) half[2 * ((b0 + k) * nb + b) + sub]), u->mn[i][h][sub], acc[k][h]);
                }
            }
        }
    }
    tile_acc_store(G, out, outStride, b0, mask, full, acc);
}

/*
 * Any type against nBatch rows (4 or more) for weight rows [o0, o1): weight groups outer, then
 * chunks of blocks, then tiles of batch rows: of 4 while 4 remain, then at most one of 2 and one of 1.
 */
INLINE void tiles(int KIND, const uint8_t *w, long rowBytes, long o0, long o1, long nb, const int8_t *aq, const int32_t *asum,
                     const int32_t *half, const float *ad, const float *dsum, long ts, long nBatch, float *out, long outStride, long ahead) {
    tile_chunk u __attribute__((aligned(32)));
    /* the first tile prefetches block b + TILE_BLOCKS's lines (or `ahead` bytes on, if more) as it works on block b */
    const long chunkBytes = TILE_BLOCKS * (16 * rowBytes / nb), pf = ahead <= 0 ? 0 : ahead > chunkBytes ? ahead : chunkBytes,
               tilePf = TILE_SPREAD(KIND) ? pf : 0, unpackPf = TILE_SPREAD(KIND) ? 0 : pf;
    for (long g = o0 / 16; 16 * g < o1; g++) {
        long lo = o0 - 16 * g, hi = o1 - 16 * g;
        __m256i mask[2];
        #pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            __m256i lane = _mm256_setr_epi32(8 * h, 8 * h + 1, 8 * h + 2, 8 * h + 3, 8 * h + 4, 8 * h + 5, 8 * h + 6, 8 * h + 7);
            mask[h] = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(lo), lane), _mm256_cmpgt_epi32(_mm256_set1_epi32(hi), lane));
        }
        const int full = lo <= 0 && hi >= 16;
        const uint8_t *gw = w + g * 16 * rowBytes;
        float *o = out + 16 * g;
        for (long c0 = 0; c0 < nb; c0 += TILE_BLOCKS) {
            const long cn = nb - c0 < TILE_BLOCKS ? nb - c0 : TILE_BLOCKS;
            tile_unpack(KIND, gw, c0, cn, &u, unpackPf);
            long b0 = 0;
            if (TILE_SUB(KIND)) {
                for (; b0 + 4 <= nBatch; b0 += 4) sub_tile(KIND, 4, &u, c0, cn, nb, aq, half, ad, ts, b0, o, outStride, mask, full, gw, b0 == 0 ? tilePf : 0);
                if (b0 + 2 <= nBatch) {
                    sub_tile(KIND, 2, &u, c0, cn, nb, aq, half, ad, ts, b0, o, outStride, mask, full, gw, b0 == 0 ? tilePf : 0);
                    b0 += 2;
                }
                if (b0 < nBatch) sub_tile(KIND, 1, &u, c0, cn, nb, aq, half, ad, ts, b0, o, outStride, mask, full, gw, b0 == 0 ? tilePf : 0);
                continue;
            }
            for (; b0 + 4 <= nBatch; b0 += 4) block_tile(KIND, 4, &u, c0, cn, nb, aq, asum, ad, dsum, ts, b0, o, outStride, mask, full, gw, b0 == 0 ? tilePf : 0);
            if (b0 + 2 <= nBatch) {
                block_tile(KIND, 2, &u, c0, cn, nb, aq, asum, ad, dsum, ts, b0, o, outStride, mask, full, gw, b0 == 0 ? tilePf : 0);
                b0 += 2;
            }
            if (b0 < nBatch) block_tile(KIND, 1, &u, c0, cn, nb, aq, asum, ad, dsum, ts, b0, o, outStride, mask, full, gw, b0 == 0 ? tilePf : 0);
        }
    }
}

#endif

/*
 * Group `gw` (rows row0 ..) against G batch rows from b0 (G = 1, 2, 4 or 8, a constant after
 * inlining); lanes not in `keep` are not written. `ahead` > 0: prefetch that many bytes on.
 */
INLINE void group(int G, int kind, const uint8_t *gw, long nb, const int8_t *aq, const int32_t *asum, const float *ad, const float *dsum, long ts,
                  long b0, float *out, long outStride, long row0, __mmask16 keep, long ahead) {
    facc acc[16];
    #pragma GCC unroll 16
    for (int k = 0; k < G; k++) acc[k] = FZERO();
    if (kind == 1) {
        BLOCK(1, 512)
    } else if (kind == 2) {
        BLOCK(2, 256)
    } else if (kind == 3) {
        BLOCK(3, 256)
    } else if (kind == 4) {
        BLOCK(4, 256)
    } else if (kind == 5) {
        BLOCK(5, 320)
    } else if (kind == 6) {
        BLOCK(6, 320)
    } else {
        BLOCK(0, 256)
    }
    #pragma GCC unroll 16
    for (int k = 0; k < G; k++) store(out + (b0 + k) * outStride + row0, keep, acc[k]);
}

/* The sum of a vector's eight int32 lanes (exact: any order). */
INLINE int32_t lanes_sum8(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    return _mm_cvtsi128_si32(_mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1)));
}

/*
 * Types 512 and 513: activations rounded to 8 bits, the bytes Q8Input's Java code writes (roundBlock, and roundScalar
 * where a scale's largest magnitude is NaN, infinite or below 2^-100): per scale (type 512: one per 32-value block;
 * 513: one per 256 values, eight blocks, as Q6_K's kernels take them) of batch rows [r0, r1) of x (perRow blocks a
 * row) d = amax / 127, and per block q = trunc(x * (1 / d) + copysign(1/2, .)) clamped to +-127, the sums of q (whole
 * and halves), and block-major (block j of row r at j * rows + r) d and d * (float) sum(q): every block carries its
 * scale's d. Every step is the Java code's f32 operation, so the bits are its bits (Q8RowsTest). AVX2 in both
 * images, as the Java code's 8 lanes: 0.57 ns a value where the Java code takes 1.2.
 */
static void round_rows(const float *x, long perRow, long span, long rows, long r0, long r1, int8_t *q, int32_t *sum, int32_t *half,
                       float *d, float *dT, float *dsumT) {
    const __m256 absMask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    const __m256i sign = _mm256_set1_epi32((int) 0x80000000u), halfBits = _mm256_set1_epi32(0x3F000000);
    const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127), order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (long r = r0; r < r1; r++) {
        for (long j0 = 0; j0 < perRow; j0 += span) {
            __m256 m = _mm256_setzero_ps(), nan = _mm256_setzero_ps();
            for (long c = 0; c < 4 * span; c++) {
                const __m256 v = _mm256_loadu_ps(x + 32 * (r * perRow + j0) + 8 * c);
                m = _mm256_max_ps(m, _mm256_and_ps(v, absMask));
                nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
            }
            /* max is exact, so its order is free; a NaN is caught apart (maxps drops it where Java's max keeps it) */
            m = _mm256_max_ps(m, _mm256_permute2f128_ps(m, m, 1));
            m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, 0x4E));
            m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, 0xB1));
            const float amax = _mm256_cvtss_f32(m);
            /* roundScalar where not finite or tiny: all zero; the scale NaN, infinite (its quotients x * 0 truncate to 0) or 0 */
            const int plain = _mm256_movemask_ps(nan) || !(amax >= 0x1p-100f) || amax == __builtin_inff();
            const float scale = !plain ? amax / 127.0f : _mm256_movemask_ps(nan) ? __builtin_nanf("") : amax == __builtin_inff() ? amax : 0.0f;
            const __m256 inv = _mm256_set1_ps(1.0f / scale);
            for (long j = j0; j < j0 + span; j++) {
                const long b = r * perRow + j, t = j * rows + r;
                int32_t first = 0, total = 0;
                if (plain) {
                    _mm256_storeu_si256((__m256i *) (q + 32 * b), _mm256_setzero_si256());
                } else {
                    __m256i s[4];
                    #pragma GCC unroll 4
                    for (int c = 0; c < 4; c++) {
                        const __m256 y = _mm256_mul_ps(_mm256_loadu_ps(x + 32 * b + 8 * c), inv);
                        const __m256 h = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(_mm256_castps_si256(y), sign), halfBits));
                        s[c] = _mm256_min_epi32(_mm256_max_epi32(_mm256_cvttps_epi32(_mm256_add_ps(y, h)), lo), hi);
                    }
                    /* packs work within 128-bit lanes: values 0-3 of each vector, then 4-7, put back in order */
                    const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(s[0], s[1]), _mm256_packs_epi32(s[2], s[3]));
                    _mm256_storeu_si256((__m256i *) (q + 32 * b), _mm256_permutevar8x32_epi32(p, order));
                    first = lanes_sum8(_mm256_add_epi32(s[0], s[1]));
                    total = first + lanes_sum8(_mm256_add_epi32(s[2], s[3]));
                }
                sum[b] = total;
                half[2 * b] = first;
                half[2 * b + 1] = total - first;
                d[b] = scale;
                dT[t] = scale;
                dsumT[t] = scale * (float) total;
            }
        }
    }
}

/*
 * out[b * outStride + o] for batch rows b < nBatch and weight rows o in [o0, o1) of a matrix of
 * `type` (0: Q4_0, 1: Q8_0, 2: Q4_K, 3: Q6_K, 4: Q5_K, 5: IQ4_NL, 6: IQ4_XS, 7: MXFP4, 8: Q2_K, 9: Q3_K, 10: Q4_1, 11: Q5_0, 12: Q5_1)
 * with `rowBytes` per row. The order of the work:
 *  - AVX2 image, every type with 4 or more batch rows (and 3, but Q8_0): tiles (16-row weight groups outer,
 *    each chunk of blocks unpacked once, tiles of batch rows inner), nothing below;
 *  - otherwise 16-row weight groups of [o0, o1) outer, batch groups inner: with AMX (type bit 8, not
 *    Q2_K or Q3_K) first one group of the nBatch / 16 * 16 leading rows, which amx_group takes 16 at
 *    a time; then groups of 8 rows while 8 remain, then at most one each of 4, 2 and 1 (15 rows: 8,
 *    4, 2, 1). A weight group comes from memory once, for its first batch group (which alone
 *    prefetches, `ahead` bytes on), and from L1 or L2 for the others (16 rows of an 8192-column Q6_K
 *    matrix are 105 KiB); every batch group reads its activations again for every weight group
 *    (about 40 bytes per batch row and block: 8 rows of a 2048-column matrix take 20 KiB), from L1
 *    where they fit, else from L2. With batch groups outer, as before, each batch group streamed the
 *    whole matrix from memory: llama-1b Q4_K_M decode at 3 rows (2 + 1) ran at 56 tok/s against 55 at
 *    2 rows (AVX2, AMD Zen 3).
 */
/* CALL(T, G) for the group's batch-row count G (8, 4, 2 or 1), so that every kernel is compiled for constant T and G. */
#define ROWS(CALL, T) do { if (n == 8) CALL(T, 8); else if (n == 4) CALL(T, 4); else if (n == 2) CALL(T, 2); else CALL(T, 1); } while (0)
#ifdef __AMX_INT8__
/* The types whose 32-value blocks (or sub-blocks) have one scale per weight row: 16 batch rows at a time go through AMX. */
#define ROWS16(CALL, T, K) do {                                                                                    \
        if (b0 >= nAmx) ROWS(CALL, T);                                                                             \
        else if (K == 13) amx_wide(gw, nb, aq, ad, ts, nAmx, o, outStride, keep, pf);                               \
        else amx_group(K, gw, nb, aq, asum, ad, dsum, ts, nAmx, o, outStride, keep, pf, groupBytes);                \
    } while (0)
#else
#define ROWS16(CALL, T, K) ROWS(CALL, T)
#endif
#define BLOCKS(T, G) group(G, T, gw, nb, aq, asum, ad, dsum, ts, b0, o, outStride, 0, keep, pf)
#define SUPER(T, G) group_super(G, T, gw, nb, aq, asum, half, ad, dsum, ts, b0, o, outStride, keep, pf)

__attribute__((section(".text.entry")))
void dgr_q8(long type, const uint8_t *w, long rowBytes, long o0, long o1, long nb, const int8_t *aq,
            const int32_t *asum, const int32_t *half, const float *ad, const float *dsum, long ts, long nBatch, float *out, long outStride, long ahead) {
    if (type == 512 || type == 513) {
        /* rounding (round_rows): x in w, rows in ts, r0 and r1 in o0 and o1, blocks a row in nb; q, sum, half, d, dT, dsumT */
        round_rows((const float *) w, nb, type == 513 ? 8 : 1, ts, o0, o1, (int8_t *) aq, (int32_t *) asum, (int32_t *) half, (float *) ad, (float *) dsum, out);
        return;
    }
    long groupBytes = 16 * rowBytes;
    /* type bit 8: AMX may run (the caller checked the CPU and got the OS's permission); not for Q2_K, Q3_K. */
#ifdef __AMX_INT8__
    int amx = (type & 256) && (type & 255) != 8 && (type & 255) != 9, tiles = 0;
#else
    int amx = 0;
#endif
    type &= 255;
#ifndef __AVX512VNNI__
    /*
     * prompt chunks of every type, and decode steps of 3 batch rows but Q8_0's: tiles over weights unpacked once per
     * call (tiles). At 3 rows a tile of 2 and one of 1 over the unpacked weights beat group_super's and BLOCK's
     * groups of 2 and 1, each unpacking the weights for itself (llama-1b decode, 3 rows, AMD Zen 3: Q4_K_M 55.6 ->
     * 60.8 tok/s, Q5_K_M 47.0 -> 55.1, Q3_K_M 50.8 -> 60.7, IQ4_XS 46.0 -> 53.7, Q2_K 55.9 -> 66.0, Q5_0 53.6 -> 60.8,
     * Q4_0 equal); Q8_0's tile copies 544 bytes per block for 3 rows to read back (Q8_0 44-54 -> 37-39 tok/s).
     */
    if (nBatch >= 4 || (nBatch == 3 && type != 1)) {
        /* one call per type, KIND a constant in each, so every tile kernel is compiled for its type */
#define TILES(K) do { tiles(K, w, rowBytes, o0, o1, nb, aq, asum, half, ad, dsum, ts, nBatch, out, outStride, ahead); return; } while (0)
        switch (type) {
        case 0: TILES(0);
        case 1: TILES(1);
        case 2: TILES(2);
        case 3: TILES(3);
        case 4: TILES(4);
        case 5: TILES(5);
        case 6: TILES(6);
        case 7: TILES(7);
        case 8: TILES(8);
        case 9: TILES(9);
        case 10: TILES(10);
        case 11: TILES(11);
        case 12: TILES(12);
        default: break;
        }
#undef TILES
    }
#endif
    /* AMX takes the first nAmx batch rows (a multiple of 16) in one pass, the rest go in groups of 8, 4, 2, 1. */
    const long nAmx = amx ? nBatch / 16 * 16 : 0;
#ifdef __AMX_INT8__
    if (nAmx > 0) {
        amx_configure(type == 3);
        tiles = 1;
    }
#endif
    for (long g = o0 / 16; 16 * g < o1; g++) {
        long lo = o0 - 16 * g, hi = o1 - 16 * g;
        __mmask16 keep = (__mmask16) ((hi >= 16 ? 0xFFFF : (1u << hi) - 1) & (lo <= 0 ? 0xFFFF : ~((1u << lo) - 1)));
        const uint8_t *gw = w + g * groupBytes;
        float *o = out + 16 * g;
        for (long b0 = 0, n; b0 < nBatch; b0 += n) {
            n = b0 < nAmx ? nAmx : nBatch - b0 >= 8 ? 8 : nBatch - b0 >= 4 ? 4 : nBatch - b0 >= 2 ? 2 : 1;
            long pf = b0 == 0 ? ahead : 0;
            switch (type) {
            case 1: ROWS16(BLOCKS, 1, 1); break;
            case 5: ROWS16(BLOCKS, 2, 2); break;
            case 7: ROWS16(BLOCKS, 3, 3); break;
            case 10: ROWS16(BLOCKS, 4, 4); break;
            case 11: ROWS16(BLOCKS, 5, 5); break;
            case 12: ROWS16(BLOCKS, 6, 6); break;
            case 2: ROWS16(SUPER, 2, 12); break;
            case 3: ROWS16(SUPER, 3, 13); break;
            case 4: ROWS16(SUPER, 4, 14); break;
            case 6: ROWS16(SUPER, 6, 16); break;
            case 8: ROWS(SUPER, 8); break;
            case 9: ROWS(SUPER, 9); break;
            default: ROWS16(BLOCKS, 0, 0); break;
            }
        }
    }
#ifdef __AMX_INT8__
    if (tiles) _tile_release();
#endif
}
