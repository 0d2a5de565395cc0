/*
 * Stands in for <immintrin.h> when check.sh compiles q8.c's AVX-512 VNNI and AMX code for a CPU that has
 * neither: SIMDe (Debian's libsimde-dev, header-only) implements the AVX-512 intrinsics on AVX2, and the
 * AMX ones below follow Intel's pseudocode for the six operations q8.c uses. Only for that check: the
 * engine's images are built by build.sh with the real intrinsics.
 *
 * The tile operations fault here where the CPU would (#UD on a shape the configuration does not allow, a
 * tile used before _tile_loadconfig), so a wrong configuration is found on a CPU without AMX too.
 */
#ifndef DGR_EMU_H
#define DGR_EMU_H
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#include <simde/x86/f16c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The AVX-512 intrinsics q8.c and attn.c use that SIMDe 0.7.4 lacks. */
/* Sixteen bytes widened to int32, sign-extended or not. */
static inline simde__m512i emu_widen(simde__m128i a, int sign) {
    uint8_t x[16];
    int32_t y[16];
    memcpy(x, &a, 16);
    for (int i = 0; i < 16; i++) y[i] = sign ? (int8_t) x[i] : x[i];
    simde__m512i r;
    memcpy(&r, y, 64);
    return r;
}

/*
 * A 16-lane conversion as AVX2's conversion of each half: int32 to f32 rounds to nearest, as vcvtdq2ps under
 * the default MXCSR; f16 to f32 is exact, so F16C's conversion gives the bits vcvtph2ps gives; f32 to int32
 * truncates, out of range or NaN 0x80000000, as vcvttps2dq; unsigned 16-bit to int32 (attn.c's bf16 values) is exact.
 */
#define EMU_BY_HALVES(NAME, OUT, OUT_HALF, IN, IN_HALF, CONVERT) \
    static inline OUT NAME(IN a) {                              \
        IN_HALF h[2];                                           \
        OUT_HALF f[2];                                          \
        memcpy(h, &a, sizeof h);                                \
        f[0] = CONVERT(h[0]);                                   \
        f[1] = CONVERT(h[1]);                                   \
        OUT r;                                                  \
        memcpy(&r, f, sizeof r);                                \
        return r;                                               \
    }
EMU_BY_HALVES(emu_cvtepi32_ps, simde__m512, simde__m256, simde__m512i, simde__m256i, simde_mm256_cvtepi32_ps)
EMU_BY_HALVES(emu_cvtph_ps, simde__m512, simde__m256, simde__m256i, simde__m128i, simde_mm256_cvtph_ps)
EMU_BY_HALVES(emu_cvttps_epi32, simde__m512i, simde__m256i, simde__m512, simde__m256, simde_mm256_cvttps_epi32)
EMU_BY_HALVES(emu_cvtepu16_epi32, simde__m512i, simde__m256i, simde__m256i, simde__m128i, simde_mm256_cvtepu16_epi32)

static inline void emu_mask_storeu_ps(void *p, simde__mmask16 k, simde__m512 a) {
    float x[16];
    memcpy(x, &a, 64);
    for (int i = 0; i < 16; i++) if (k >> i & 1) memcpy((float *) p + i, x + i, 4);
}

static inline simde__m512 emu_maskz_loadu_ps(simde__mmask16 k, const void *p) {
    float x[16] = {0};
    for (int i = 0; i < 16; i++) if (k >> i & 1) memcpy(x + i, (const float *) p + i, 4);
    simde__m512 r;
    memcpy(&r, x, 64);
    return r;
}

#define _mm512_cvtepi8_epi32(a) emu_widen(a, 1)
#define _mm512_cvtepu8_epi32(a) emu_widen(a, 0)
#define _mm512_cvtepu16_epi32 emu_cvtepu16_epi32
#define _mm512_cvtph_ps emu_cvtph_ps
#define _mm512_cvtepi32_ps emu_cvtepi32_ps
#define _mm512_cvttps_epi32 emu_cvttps_epi32
#define _mm512_mask_storeu_ps emu_mask_storeu_ps
#define _mm512_maskz_loadu_ps emu_maskz_loadu_ps

/* One thread's tile state: palette 1, eight tiles of at most 16 rows of 64 bytes. */
typedef struct { int rows, colsb; uint8_t data[16][64]; } emu_tile;
static __thread emu_tile emu_tiles[8];
static __thread int emu_configured;

static void emu_fault(const char *what, int t) {
    fprintf(stderr, "AMX emulation: %s (tile %d) - the CPU would raise #UD here\n", what, t);
    abort();
}

static void emu_check(int t) {
    if (!emu_configured) emu_fault("tile used before _tile_loadconfig", t);
    if (t < 0 || t > 7 || emu_tiles[t].rows == 0) emu_fault("tile not configured", t);
}

/* SIMDe includes <immintrin.h>, whose AMX intrinsics need the CPU: these names are taken over here. */
#undef _tile_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbssd
#undef _tile_dpbsud
#undef _tile_dpbusd
#undef _tile_dpbuud
#define _tile_loadconfig emu_loadconfig
#define _tile_release emu_release

static inline void emu_loadconfig(const void *config) {
    const uint8_t *c = config;
    if (c[0] != 1) emu_fault("palette other than 1", -1);
    for (int t = 0; t < 8; t++) {
        int colsb = c[16 + 2 * t] | c[17 + 2 * t] << 8, rows = c[48 + t];
        if (rows > 16 || colsb > 64 || (rows == 0) != (colsb == 0)) emu_fault("configuration out of palette 1's bounds", t);
        emu_tiles[t].rows = rows;
        emu_tiles[t].colsb = colsb;
        memset(emu_tiles[t].data, 0, sizeof emu_tiles[t].data);
    }
    emu_configured = 1;
}

static inline void emu_release(void) {
    memset(emu_tiles, 0, sizeof emu_tiles);
    emu_configured = 0;
}

static inline void emu_loadd(int t, const void *base, long stride) {
    emu_check(t);
    for (int r = 0; r < emu_tiles[t].rows; r++) {
        memcpy(emu_tiles[t].data[r], (const uint8_t *) base + r * stride, emu_tiles[t].colsb);
        memset(emu_tiles[t].data[r] + emu_tiles[t].colsb, 0, 64 - emu_tiles[t].colsb);
    }
}

static inline void emu_stored(int t, void *base, long stride) {
    emu_check(t);
    for (int r = 0; r < emu_tiles[t].rows; r++) memcpy((uint8_t *) base + r * stride, emu_tiles[t].data[r], emu_tiles[t].colsb);
}

static inline void emu_zero(int t) {
    emu_check(t);
    memset(emu_tiles[t].data, 0, sizeof emu_tiles[t].data);
}

/* C[m][n] += sum over k < A's colsb / 4 and i < 4 of A[m][4k + i] * B[k][4n + i], in 32-bit two's complement. */
static inline void emu_dp(int c, int a, int b, int aSigned, int bSigned) {
    emu_check(c);
    emu_check(a);
    emu_check(b);
    const emu_tile *A = &emu_tiles[a], *B = &emu_tiles[b];
    emu_tile *C = &emu_tiles[c];
    if (C->rows != A->rows || A->colsb != 4 * B->rows || C->colsb != B->colsb || A->colsb % 4 || C->colsb % 4)
        emu_fault("shapes that do not multiply", c);
    for (int m = 0; m < C->rows; m++) {
        for (int n = 0; n < C->colsb / 4; n++) {
            uint32_t s;
            memcpy(&s, C->data[m] + 4 * n, 4);
            for (int k = 0; k < A->colsb / 4; k++) {
                for (int i = 0; i < 4; i++) {
                    int32_t x = aSigned ? (int8_t) A->data[m][4 * k + i] : A->data[m][4 * k + i];
                    int32_t y = bSigned ? (int8_t) B->data[k][4 * n + i] : B->data[k][4 * n + i];
                    s += (uint32_t) (x * y);
                }
            }
            memcpy(C->data[m] + 4 * n, &s, 4);
        }
    }
}

#define _tile_loadd(t, base, stride) emu_loadd(t, base, stride)
#define _tile_stored(t, base, stride) emu_stored(t, base, stride)
#define _tile_zero(t) emu_zero(t)
#define _tile_dpbssd(c, a, b) emu_dp(c, a, b, 1, 1)
#define _tile_dpbsud(c, a, b) emu_dp(c, a, b, 1, 0)
#define _tile_dpbusd(c, a, b) emu_dp(c, a, b, 0, 1)
#define _tile_dpbuud(c, a, b) emu_dp(c, a, b, 0, 0)
#endif
