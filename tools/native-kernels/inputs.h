/*
 * Random inputs of dgr_q8 for the C harnesses (ab/ab.c, emu/check.c): weights of every type in q8.c's interleaved
 * layout, each scale in the range its packer writes, and 32-value blocks of 8-bit activations in the range Q8Input
 * rounds to (-127..127), with the sums the kernel takes beside them.
 */
#ifndef DGR_INPUTS_H
#define DGR_INPUTS_H
#include <stdint.h>
#include <string.h>

/*
 * A type's layout per group of 16 rows: `unit` bytes per 32 values (block types) or per 256 (super-block
 * types), of which the first `halfs` bytes are f16 scales (MXFP4: `e8m0` exponent bytes instead), and
 * bytes [ilo, ihi) of each unit are integer scales written as (random & imask) + ioff.
 */
typedef struct { int type; const char *name; int super, unit, halfs, e8m0, ilo, ihi, imask, ioff; } layout;
static const layout TYPES[] = {
    {0, "Q4_0", 0, 288, 32, 0, 0, 0, 0, 0},
    {1, "Q8_0", 0, 544, 32, 0, 0, 0, 0, 0},
    {5, "IQ4_NL", 0, 288, 32, 0, 0, 0, 0, 0},
    {7, "MXFP4", 0, 272, 0, 16, 0, 0, 0, 0},
    {10, "Q4_1", 0, 320, 64, 0, 0, 0, 0, 0},
    {11, "Q5_0", 0, 352, 32, 0, 0, 0, 0, 0},
    {12, "Q5_1", 0, 384, 64, 0, 0, 0, 0, 0},
    {2, "Q4_K", 1, 2368, 64, 0, 64, 320, 63, 0},
    {3, "Q6_K", 1, 3360, 32, 0, 32, 288, 255, 0},
    {4, "Q5_K", 1, 2880, 64, 0, 64, 320, 63, 0},
    {6, "IQ4_XS", 1, 2208, 32, 0, 32, 160, 63, -32},
    {8, "Q2_K", 1, 1344, 64, 0, 64, 320, 255, 0},
    {9, "Q3_K", 1, 1824, 32, 0, 32, 288, 63, -32},
};
#define N_TYPES ((int) (sizeof TYPES / sizeof *TYPES))

/* The layout of dgr_q8's type number, or 0. */
static inline const layout *layout_of(long type) {
    for (int i = 0; i < N_TYPES; i++) if (TYPES[i].type == type) return &TYPES[i];
    return 0;
}

/* Bytes per group of 16 rows of nb 32-value blocks. */
static inline long group_bytes(const layout *L, long nb) {
    return (long) L->unit * (L->super ? nb / 8 : nb);
}

/* `groups` groups of random weights at w: f16 scales about 2^-8 .. 2^-6 of either sign, E8M0 exponents 2^-8 .. 2^7. */
static inline void random_weights(const layout *L, long nb, long groups, uint8_t *w, unsigned (*random)(void)) {
    const long units = L->super ? nb / 8 : nb;
    for (long u = 0; u < groups * units; u++) {
        uint8_t *p = w + u * L->unit;
        for (int i = 0; i < L->unit; i++) p[i] = (uint8_t) random();
        for (int i = 0; i < L->halfs; i += 2) {
            uint16_t h = (uint16_t) (0x1c00 + (random() & 0x7ff)) | (uint16_t) (random() & 1 ? 0x8000 : 0);
            memcpy(p + i, &h, 2);
        }
        for (int i = 0; i < L->e8m0; i++) p[i] = (uint8_t) (119 + random() % 16);
        for (int i = L->ilo; i < L->ihi; i++) p[i] = (uint8_t) ((int) (random() & L->imask) + L->ioff);
    }
}

/* Fills q, half[0] and half[1] (the sums of values 0-15 and 16-31); returns the block's sum. */
static inline int32_t random_block(int8_t q[32], int32_t half[2], unsigned (*random)(void)) {
    int32_t s = 0, h = 0;
    for (int i = 0; i < 32; i++) {
        int v = (int) (random() % 255) - 127;
        q[i] = (int8_t) v;
        s += v;
        if (i == 15) h = s;
    }
    half[0] = h;
    half[1] = s - h;
    return s;
}
#endif
