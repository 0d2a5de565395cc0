/*
 * dgr's Q4_0 × 8-bit-activation matrix kernel for x86-64 with AVX-512 VNNI (engine java-q8/1).
 * build.sh turns it into one flat, position-independent image (no libc, no relocations) that
 * Q8Native loads into a code page and calls through a foreign downcall. The Java method
 * Q4Q8.javaRows computes the same bits without it; Q4Q8's comment states the layout and order.
 *
 * Weights (Q4Q8 layout): groups of 16 rows; per group, per block b of 32 values: the 16 rows'
 * f16 scales (32 bytes), then 4 × 64 bytes of quants: in the k-th 64 bytes, byte 4r + j holds
 * row r's value 8k + j (low nibble) and 8k + 4 + j (high nibble). So a 64-byte load, a mask and
 * a shift give two operands whose 32-bit lane r holds four of row r's unsigned quants, and one
 * vpdpbusd against four activation bytes broadcast to every lane adds four products per row.
 *
 * Activations per batch row, per block: 32 int8 (aq), the int -8 * (their sum) (aoff), the f32
 * scale (ad). Output row o of batch row b: acc = fma((float) isum_B, d_w * d_a, acc) over blocks B
 * in order from +0, isum_B = aoff + sum of q * a (exact integers): no lanes to reduce.
 *
 * Build flags keep that order: -ffp-contract=off, no -ffast-math.
 */
#include <immintrin.h>
#include <stdint.h>

#define INLINE static inline __attribute__((always_inline))

/*
 * Group `grp` (rows 16 grp ..) against G batch rows from b0 (G = 1, 2, 4 or 8, a constant after
 * inlining); lanes outside [lo, hi) are not written. `ahead` > 0: prefetch that many bytes on.
 */
INLINE void group(int G, const uint8_t *gw, long nb, const int8_t *aq, const int32_t *aoff, const float *ad, long b0,
                  float *out, long outStride, long row0, __mmask16 keep, long ahead) {
    const __m512i mask = _mm512_set1_epi8(15);
    __m512 acc[8];
    for (int k = 0; k < G; k++) acc[k] = _mm512_setzero_ps();
    for (long b = 0; b < nb; b++) {
        const uint8_t *blk = gw + 288 * b;
        if (ahead > 0) {
            for (int c = 0; c < 320; c += 64) _mm_prefetch((const char *) blk + ahead + c, _MM_HINT_T2);
        }
        __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) blk));
        __m512i v0 = _mm512_loadu_si512(blk + 32), v1 = _mm512_loadu_si512(blk + 96);
        __m512i v2 = _mm512_loadu_si512(blk + 160), v3 = _mm512_loadu_si512(blk + 224);
        __m512i w0 = _mm512_and_si512(v0, mask), w1 = _mm512_and_si512(_mm512_srli_epi16(v0, 4), mask);
        __m512i w2 = _mm512_and_si512(v1, mask), w3 = _mm512_and_si512(_mm512_srli_epi16(v1, 4), mask);
        __m512i w4 = _mm512_and_si512(v2, mask), w5 = _mm512_and_si512(_mm512_srli_epi16(v2, 4), mask);
        __m512i w6 = _mm512_and_si512(v3, mask), w7 = _mm512_and_si512(_mm512_srli_epi16(v3, 4), mask);
        for (int k = 0; k < G; k++) {
            long ab = (b0 + k) * nb + b;
            const int32_t *a = (const int32_t *) (aq + 32 * ab);
            /* Two chains of four (integer sums: any grouping is exact), joined. */
            __m512i s0 = _mm512_set1_epi32(aoff[ab]), s1 = _mm512_setzero_si512();
            s0 = _mm512_dpbusd_epi32(s0, w0, _mm512_set1_epi32(a[0]));
            s1 = _mm512_dpbusd_epi32(s1, w1, _mm512_set1_epi32(a[1]));
            s0 = _mm512_dpbusd_epi32(s0, w2, _mm512_set1_epi32(a[2]));
            s1 = _mm512_dpbusd_epi32(s1, w3, _mm512_set1_epi32(a[3]));
            s0 = _mm512_dpbusd_epi32(s0, w4, _mm512_set1_epi32(a[4]));
            s1 = _mm512_dpbusd_epi32(s1, w5, _mm512_set1_epi32(a[5]));
            s0 = _mm512_dpbusd_epi32(s0, w6, _mm512_set1_epi32(a[6]));
            s1 = _mm512_dpbusd_epi32(s1, w7, _mm512_set1_epi32(a[7]));
            __m512 s = _mm512_mul_ps(d, _mm512_set1_ps(ad[ab]));
            acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1)), s, acc[k]);
        }
    }
    for (int k = 0; k < G; k++) _mm512_mask_storeu_ps(out + (b0 + k) * outStride + row0, keep, acc[k]);
}

/*
 * out[b * outStride + o] for batch rows b < nBatch and weight rows o in [o0, o1): batch rows in
 * groups of eight, four, two, one (outer), row groups inner, so a group's activations stay in L1
 * while the weights stream; the first batch group prefetches `ahead` bytes on.
 */
void q4q8(const uint8_t *w, long rowBytes, long o0, long o1, long nb, const int8_t *aq,
          const int32_t *aoff, const float *ad, long nBatch, float *out, long outStride, long ahead) {
    long groupBytes = 16 * rowBytes;
    for (long b0 = 0, n; b0 < nBatch; b0 += n) {
        n = nBatch - b0 >= 8 ? 8 : nBatch - b0 >= 4 ? 4 : nBatch - b0 >= 2 ? 2 : 1;
        long pf = b0 == 0 ? ahead : 0;
        for (long g = o0 / 16; 16 * g < o1; g++) {
            long lo = o0 - 16 * g, hi = o1 - 16 * g;
            __mmask16 keep = (__mmask16) ((hi >= 16 ? 0xFFFF : (1u << hi) - 1) & (lo <= 0 ? 0xFFFF : ~((1u << lo) - 1)));
            const uint8_t *gw = w + g * groupBytes;
            if (n == 8) group(8, gw, nb, aq, aoff, ad, b0, out, outStride, 16 * g, keep, pf);
            else if (n == 4) group(4, gw, nb, aq, aoff, ad, b0, out, outStride, 16 * g, keep, pf);
            else if (n == 2) group(2, gw, nb, aq, aoff, ad, b0, out, outStride, 16 * g, keep, pf);
            else group(1, gw, nb, aq, aoff, ad, b0, out, outStride, 16 * g, keep, pf);
        }
    }
}
