/*
 * q8.c's AVX-512 VNNI and AMX code against its AVX2 code, on a CPU that may have neither AVX-512 nor AMX
 * (check.sh builds all three from one q8.c; emu.h says how). Q8RowsTest holds the image this CPU runs to
 * the Java kernel, bit for bit; this holds the other code to that image, so a change to the AVX-512 or
 * AMX code can be checked on an AVX2-only machine before it meets one with AMX. It is no measure of
 * speed. Random weights of every type, in q8.c's interleaved layout with each scale in the range its
 * packer writes, random 8-bit activations; for each batch size and row range, dgr_q8 of the AVX2 image,
 * of the emulated AVX-512 image and of the emulated AVX-512 image with AMX must write the same bits, and
 * leave the same lanes untouched. Prints one line per type; exits 1 at the first difference.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../inputs.h"

typedef void kernel(long, const uint8_t *, long, long, long, long, const int8_t *, const int32_t *, const int32_t *, const float *,
                    const float *, long, long, float *, long, long);
kernel dgr_q8_avx2, dgr_q8_emu;

static uint32_t seed = 12345;
static unsigned next(void) {
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
}

int main(void) {
    const long rows = 48, batches[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 32, 33, 48};
    const long ranges[][2] = {{0, 48}, {5, 43}, {16, 32}, {17, 18}};
    const long widths[] = {16, 40}; /* blocks per row: one tile chunk (16); past AMX's chunk (32), ending inside a tile chunk */
    long checked = 0;
    for (int ti = 0; ti < N_TYPES; ti++) {
        const layout *L = &TYPES[ti];
        for (size_t wi = 0; wi < 2; wi++) {
            const long nb = widths[wi], groupBytes = group_bytes(L, nb), rowBytes = groupBytes / 16;
            uint8_t *w = aligned_alloc(64, groupBytes * (rows / 16));
            random_weights(L, nb, rows / 16, w, next);
            for (size_t bi = 0; bi < sizeof batches / sizeof *batches; bi++) {
                const long nBatch = batches[bi], ts = nBatch + 3, outStride = rows + 5;
                int8_t *aq = malloc(32 * nb * nBatch);
                int32_t *asum = malloc(4 * nb * nBatch), *half = malloc(8 * nb * nBatch);
                float *ad = malloc(4 * nb * ts), *dsum = malloc(4 * nb * ts);
                for (long r = 0; r < nBatch; r++) {
                    for (long j = 0; j < nb; j++) {
                        const long b = r * nb + j;
                        const int32_t s = asum[b] = random_block(aq + 32 * b, half + 2 * b, next);
                        ad[j * ts + r] = (float) (1 + next() % 1000) / 65536.0f;
                        dsum[j * ts + r] = ad[j * ts + r] * (float) s;
                    }
                }
                for (size_t ri = 0; ri < sizeof ranges / sizeof *ranges; ri++) {
                    const long o0 = ranges[ri][0], o1 = ranges[ri][1], n = nBatch * outStride;
                    float *out[3];
                    for (int v = 0; v < 3; v++) {
                        out[v] = malloc(4 * n);
                        memset(out[v], 0x7f, 4 * n); /* lanes outside [o0, o1) must keep this */
                    }
                    const long ahead = ri & 1 ? 1024 : 0;
                    dgr_q8_avx2(L->type, w, rowBytes, o0, o1, nb, aq, asum, half, ad, dsum, ts, nBatch, out[0], outStride, ahead);
                    dgr_q8_emu(L->type, w, rowBytes, o0, o1, nb, aq, asum, half, ad, dsum, ts, nBatch, out[1], outStride, ahead);
                    dgr_q8_emu(L->type | 256, w, rowBytes, o0, o1, nb, aq, asum, half, ad, dsum, ts, nBatch, out[2], outStride, ahead);
                    for (int v = 1; v < 3; v++) {
                        for (long i = 0; i < n; i++) {
                            if (memcmp(out[0] + i, out[v] + i, 4) != 0) {
                                uint32_t x, y;
                                memcpy(&x, out[0] + i, 4);
                                memcpy(&y, out[v] + i, 4);
                                printf("%s: %s differs from AVX2 at batch row %ld, weight row %ld (nb %ld, batch %ld, rows [%ld, %ld)): "
                                       "%08x (%g) against %08x (%g)\n", L->name, v == 1 ? "AVX-512 VNNI" : "AMX", i / outStride,
                                       i % outStride, nb, nBatch, o0, o1, x, out[0][i], y, out[v][i]);
                                return 1;
                            }
                        }
                    }
                    for (int v = 0; v < 3; v++) free(out[v]);
                    checked++;
                }
                free(aq);
                free(asum);
                free(half);
                free(ad);
                free(dsum);
            }
            free(w);
        }
        printf("%-7s AVX-512 VNNI and AMX (emulated) equal AVX2 to the bit: %zu batch sizes x %zu row ranges x 2 widths\n", L->name,
               sizeof batches / sizeof *batches, sizeof ranges / sizeof *ranges);
    }
    printf("%ld cases, no difference\n", checked);
    return 0;
}
