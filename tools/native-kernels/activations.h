/*
 * Random inputs of dgr_q8 for the C harnesses (ab/ab.c, emu/check.c): one 32-value block of 8-bit activations in
 * the range Q8Input rounds to (-127..127), with the sums the kernel takes beside them.
 */
#ifndef DGR_ACTIVATIONS_H
#define DGR_ACTIVATIONS_H
#include <stdint.h>

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
