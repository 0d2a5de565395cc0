package dgr.engine.kernel;

import dgr.gguf.GgmlType;

/**
 * How each GGML block type becomes {@link Q8Rows}' interleaved layout: sixteen file rows per group,
 * per 32-value block their scales (and mins) first, then the quants as the layout states
 * ({@link Q8Rows#nibbleAt}). Runs once per matrix at load ({@link Q8Rows#repack}).
 */
final class Q8RowPackers {
    private Q8RowPackers() {}

    /*
     * The packers write four output bytes at a time from four-byte words of the file: value by value, Q6_K and Q4_K's
     * were 41% of a llama-1b Q4_K_M `dgr run`'s CPU. Plain byte reads and writes, not a VarHandle view: the packers
     * run at load, much of it before the JIT compiles them, and the interpreter takes a VarHandle access as a chain
     * of calls (Q3_K_M loaded slower with one than value by value).
     */
    private static final int LOW = 0x0F0F0F0F;

    /** The little-endian four-byte word at {@code at}. */
    private static int word(byte[] a, int at) {
        return (a[at] & 0xFF) | (a[at + 1] & 0xFF) << 8 | (a[at + 2] & 0xFF) << 16 | a[at + 3] << 24;
    }

    /**
     * Four bytes, each gathering a bit field from four file bytes: of byte {@code i} of the words at {@code at},
     * {@code at + 4}, {@code at + 8}, {@code at + 12}, the bits {@code mask} selects after a shift right by {@code shift},
     * placed at bit {@code 0}, {@code width}, {@code 2·width}, {@code 3·width} of output byte {@code i}. Straight-line:
     * C2 kept deoptimizing the loop this was (profiled loop predicates), and Q3_K_M loaded slower than value by value.
     */
    private static int fields(byte[] in, int at, int shift, int mask, int width) {
        return ((word(in, at) >>> shift) & mask)
                | ((word(in, at + 4) >>> shift) & mask) << width
                | ((word(in, at + 8) >>> shift) & mask) << 2 * width
                | ((word(in, at + 12) >>> shift) & mask) << 3 * width;
    }

    /**
     * The four bytes at {@code 4r} of a 64-byte quant stretch ({@link Q8Rows#nibbleAt}): values {@code i..i+3} in the
     * low nibbles, {@code i+4..i+7} in the high, from eight file bytes at {@code at} holding them at bit {@code shift}.
     */
    private static int nibbleWord(byte[] in, int at, int shift) {
        return ((word(in, at) >>> shift) & LOW) | ((word(in, at + 4) >>> shift) & LOW) << 4;
    }

    /** Row {@code r}'s 32 quants of a Q4_0-style block at {@code base}: values 0..15 the low nibbles of the 16 file bytes at {@code at}, 16..31 the high. */
    private static void blockNibbles(byte[] in, int at, byte[] out, int base, int r) {
        for (int k = 0; k < 4; k++) SpanKernels.putInt(out, base + 64 * k + 4 * r, nibbleWord(in, at + 8 * (k & 1), k < 2 ? 0 : 4));
    }

    /** Row {@code r}'s 32 quants of one block at {@code base}: four stretches, value {@code 8k + i} from file byte {@code at + 8k + i}. */
    private static void nibbleWords(byte[] in, int at, int shift, byte[] out, int base, int r) {
        for (int k = 0; k < 4; k++) SpanKernels.putInt(out, base + 64 * k + 4 * r, nibbleWord(in, at + 8 * k, shift));
    }

    /*
     * Each packer writes every byte of its group (the caller's `out` is a fresh array; rows past the matrix's end are
     * zeros in `in`), so none clears `out` first.
     */

    /** Sixteen Q4_0 file rows (per block an f16 d and 16 bytes, value i low nibble, i+16 high; missing rows zero) into one group. */
    static void packQ4_0(byte[] in, int nb, byte[] out) {
        for (int b = 0; b < nb; b++) {
            int at = 288 * b;
            for (int r = 0; r < Q8Rows.GROUP; r++) {
                int src = 18 * (r * nb + b);
                out[at + 2 * r] = in[src];
                out[at + 2 * r + 1] = in[src + 1];
                blockNibbles(in, src + 2, out, at + 32, r);
            }
        }
    }

    /**
     * Sixteen MXFP4 file rows (per block an E8M0 exponent byte and 16 bytes, code i low nibble,
     * i+16 high) into one group: per block the 16 exponent bytes, then the codes as Q4_0's quants.
     */
    static void packMXFP4(byte[] in, int nb, byte[] out) {
        for (int b = 0; b < nb; b++) {
            int at = 272 * b;
            for (int r = 0; r < Q8Rows.GROUP; r++) {
                int src = 17 * (r * nb + b);
                out[at + r] = in[src];
                blockNibbles(in, src + 1, out, at + 16, r);
            }
        }
    }

    /**
     * Sixteen Q4_1, Q5_0 or Q5_1 file rows into one group (Q4_1: per block f16 d, f16 m, 16 bytes
     * of nibbles; Q5_0: f16 d, u32 qh, nibbles; Q5_1: d, m, qh, nibbles; value i's low four bits in
     * the low (i < 16) or high nibble of byte i % 16, its fifth bit bit i of qh): per block the 16
     * d, the 16 m (Q4_1, Q5_1), the nibbles as Q4_0's quants, and (Q5_0, Q5_1) a 64-byte stretch
     * whose bit {@code u} of byte {@code 4r + i} is the fifth bit of row {@code r}'s value {@code 4u + i}.
     */
    static void packLegacy(GgmlType type, byte[] in, int nb, byte[] out) {
        boolean mins = type != GgmlType.Q5_0, five = type != GgmlType.Q4_1;
        int block = type == GgmlType.Q4_1 ? 20 : type == GgmlType.Q5_0 ? 22 : 24, head = mins ? 64 : 32;
        int stride = head + (five ? 320 : 256), qh = mins ? 4 : 2, qs = qh + (five ? 4 : 0);
        for (int b = 0; b < nb; b++) {
            int at = stride * b;
            for (int r = 0; r < Q8Rows.GROUP; r++) {
                int src = block * (r * nb + b);
                for (int k = 0; k < 2; k++) {
                    out[at + 2 * r + k] = in[src + k];
                    if (mins) out[at + 32 + 2 * r + k] = in[src + 2 + k];
                }
                blockNibbles(in, src + qs, out, at + head, r);
                if (five) {
                    // byte 4r + i of the fifth bits holds, at bit u, bit 4u + i of qh: each nibble of qh spread over four bytes
                    int high = word(in, src + qh), fifth = 0;
                    for (int u = 0; u < 8; u++) {
                        int n = (high >>> (4 * u)) & 15;
                        fifth |= ((n & 1) | (n & 2) << 7 | (n & 4) << 14 | (n & 8) << 21) << u;
                    }
                    SpanKernels.putInt(out, at + head + 256 + 4 * r, fifth);
                }
            }
        }
    }

    /** Sixteen Q8_0 file rows (per block an f16 d and 32 int8) into one group. */
    static void packQ8_0(byte[] in, int nb, byte[] out) {
        for (int b = 0; b < nb; b++) {
            int at = 544 * b;
            for (int r = 0; r < Q8Rows.GROUP; r++) {
                int src = 34 * (r * nb + b);
                out[at + 2 * r] = in[src];
                out[at + 2 * r + 1] = in[src + 1];
                for (int c = 0; c < 8; c++) SpanKernels.putInt(out, at + 32 + 64 * c + 4 * r, word(in, src + 2 + 4 * c));
            }
        }
    }

    /**
     * Sixteen Q4_K file rows (per 256 values: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins,
     * 128 bytes of nibbles) into one group: per super-block the 16 d, the 16 dmin, a byte per
     * row and 32-value sub-block of scale (16 per sub-block), of min, then per sub-block the
     * quants as Q4_0's.
     */
    static void packQ4_K(byte[] in, int nsb, byte[] out) {
        for (int sb = 0; sb < nsb; sb++) {
            int at = 2368 * sb;
            for (int r = 0; r < Q8Rows.GROUP; r++) {
                int src = 144 * (r * nsb + sb);
                out[at + 2 * r] = in[src];
                out[at + 2 * r + 1] = in[src + 1];
                out[at + 32 + 2 * r] = in[src + 2];
                out[at + 32 + 2 * r + 1] = in[src + 3];
                for (int j = 0; j < 8; j++) {
                    out[at + 64 + 16 * j + r] = (byte) RowDecoder.scaleMinK4(in, src + 4, j, 0);
                    out[at + 192 + 16 * j + r] = (byte) RowDecoder.scaleMinK4(in, src + 4, j, 1);
                    nibbleWords(in, src + 16 + 32 * (j / 2), 4 * (j & 1), out, at + 320 + 256 * j, r);
                }
            }
        }
    }

    /**
     * Sixteen IQ4_XS file rows (per 256 values: f16 d, u16 scales_h, u8 scales_l[4], 128 bytes of
     * indices, 16 per 32-value sub-block as Q4_0's nibbles) into one group: per super-block the 16
     * d, an int8 {@code ls − 32} per row and sub-block (16 per sub-block), then per sub-block the
     * indices as Q4_0's quants.
     */
    static void packIQ4_XS(byte[] in, int nsb, byte[] out) {
        for (int sb = 0; sb < nsb; sb++) {
            int at = 2208 * sb;
            for (int r = 0; r < Q8Rows.GROUP; r++) {
                int src = 136 * (r * nsb + sb), sh = (in[src + 2] & 0xFF) | (in[src + 3] & 0xFF) << 8;
                out[at + 2 * r] = in[src];
                out[at + 2 * r + 1] = in[src + 1];
                for (int j = 0; j < 8; j++) {
                    int ls = (((in[src + 4 + j / 2] & 0xFF) >>> (4 * (j % 2))) & 0xF) | (((sh >>> (2 * j)) & 3) << 4);
                    out[at + 32 + 16 * j + r] = (byte) (ls - 32);
                    blockNibbles(in, src + 8 + 16 * j, out, at + 160 + 256 * j, r);
                }
            }
        }
    }

    /**
     * Sixteen Q2_K or Q3_K file rows into one group. Q2_K (84 bytes per 256 values: 16 bytes of
     * scale and min nibbles, qs[64], f16 d, f16 dmin): per super-block the 16 d, the 16 dmin, the
     * scale-and-min byte per row and 16-value sub-block (16 per sub-block), then per 32 values two
     * 64-byte stretches where bits {@code 2u..2u+1} of byte {@code 4r + i} of stretch {@code t} hold
     * row {@code r}'s value {@code 16t + 4u + i}. Q3_K (110 bytes: hmask[32], qs[64], 12 bytes of
     * 6-bit scales, f16 d): the 16 d, an int8 {@code sc − 32} per row and sub-block, then per 32
     * values the same two stretches of low bits and one whose bit {@code c} of byte {@code 4r + i}
     * is the third bit of value {@code 4c + i}. (File value {@code v = 16·g + l} of group
     * {@code g = 8n + 2j + h} takes its low bits from {@code qs[32n + 16h + l] >> 2j}, Q3_K its third
     * from bit {@code 4n + j} of {@code hmask[16h + l]}, as ggml's dequantization reads them.)
     */
    static void packQ2Q3_K(GgmlType type, byte[] in, int nsb, byte[] out) {
        boolean three = type == GgmlType.Q3_K;
        int block = three ? 110 : 84, bytes = three ? 1824 : 1344, quants = three ? 288 : 320, per32 = three ? 192 : 128;
        for (int sb = 0; sb < nsb; sb++) {
            int at = bytes * sb;
            for (int r = 0; r < Q8Rows.GROUP; r++) {
                int src = block * (r * nsb + sb);
                for (int k = 0; k < 2; k++) {
                    out[at + 2 * r + k] = in[src + (three ? 108 : 80) + k];
                    if (!three) out[at + 32 + 2 * r + k] = in[src + 82 + k];
                }
                for (int g = 0; g < 16; g++) {
                    out[at + (three ? 32 : 64) + 16 * g + r] = three ? (byte) (RowDecoder.q3Scale(in, src + 96, g) - 32) : in[src + g];
                }
                // value 16t + 4u + i of block b: its two low bits are bits 2(b % 4).. of qs[32(b / 4) + 16t + 4u + i], and go to
                // bits 2u.. of byte 4r + i of stretch t; Q3_K's third bit is bit 4(b / 4) + b % 4 of hmask[16t + 4u + i], to bit
                // 4t + u of byte 4r + i of the third-bit stretch
                int qs = src + (three ? 32 : 16);
                for (int b = 0; b < 8; b++) {
                    int n = b / 4, j = b % 4, blk = at + quants + per32 * b;
                    SpanKernels.putInt(out, blk + 4 * r, fields(in, qs + 32 * n, 2 * j, 0x03030303, 2));
                    SpanKernels.putInt(out, blk + 64 + 4 * r, fields(in, qs + 32 * n + 16, 2 * j, 0x03030303, 2));
                    if (three) SpanKernels.putInt(out, blk + 128 + 4 * r, fields(in, src, 4 * n + j, 0x01010101, 1) | fields(in, src + 16, 4 * n + j, 0x01010101, 1) << 4);
                }
            }
        }
    }

    /**
     * Sixteen Q5_K file rows (per 256 values: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins,
     * qh[32], 128 bytes of nibbles) into one group: as Q4_K, each sub-block's nibbles followed by a
     * 64-byte stretch whose bit {@code u} of byte {@code 4r + i} is the fifth bit of row {@code r}'s
     * value {@code 4u + i}.
     */
    static void packQ5_K(byte[] in, int nsb, byte[] out) {
        for (int sb = 0; sb < nsb; sb++) {
            int at = 2880 * sb;
            for (int r = 0; r < Q8Rows.GROUP; r++) {
                int src = 176 * (r * nsb + sb);
                for (int k = 0; k < 2; k++) {
                    out[at + 2 * r + k] = in[src + k];
                    out[at + 32 + 2 * r + k] = in[src + 2 + k];
                }
                for (int j = 0; j < 8; j++) {
                    out[at + 64 + 16 * j + r] = (byte) RowDecoder.scaleMinK4(in, src + 4, j, 0);
                    out[at + 192 + 16 * j + r] = (byte) RowDecoder.scaleMinK4(in, src + 4, j, 1);
                    int sub = at + 320 + 320 * j;
                    nibbleWords(in, src + 48 + 32 * (j / 2), 4 * (j & 1), out, sub, r);
                    // byte 4r + i of the fifth bits holds, at bit u, the fifth bit of value 4u + i: bit j of qh[4u + i]
                    SpanKernels.putInt(out, sub + 256 + 4 * r, fields(in, src + 16, j, 0x01010101, 1) | fields(in, src + 32, j, 0x01010101, 1) << 4);
                }
            }
        }
    }

    /**
     * Sixteen Q6_K file rows (per 256 values: ql[128], qh[64], 16 int8 scales, f16 d) into one
     * group: per super-block the 16 d, a byte per row and 16-value sub-block of scale (16 per
     * sub-block), then per 32 values four 64-byte stretches of low nibbles (as Q4_0's) and two of
     * high bits: byte {@code 4r + i} of stretch {@code t} holds, in bits {@code 2u..2u+1}, the top
     * two bits of row {@code r}'s value {@code 16t + 4u + i}.
     */
    static void packQ6_K(byte[] in, int nsb, byte[] out) {
        for (int sb = 0; sb < nsb; sb++) {
            int at = 3360 * sb;
            for (int r = 0; r < Q8Rows.GROUP; r++) {
                int src = 210 * (r * nsb + sb);
                out[at + 2 * r] = in[src + 208];
                out[at + 2 * r + 1] = in[src + 209];
                for (int k = 0; k < 16; k++) out[at + 32 + 16 * k + r] = in[src + 192 + k];
                for (int j = 0; j < 8; j++) {
                    // block j is ggml's half n = j / 4, quarter t = j % 4: low nibbles of ql[64n + 32(t & 1) + i] (t < 2) or high
                    // ones, top bits 2t..2t+1 of qh[32n + i]
                    int n = j / 4, t = j % 4, blk = at + 288 + 384 * j, qh = src + 128 + 32 * n;
                    nibbleWords(in, src + 64 * n + 32 * (t & 1), t < 2 ? 0 : 4, out, blk, r);
                    SpanKernels.putInt(out, blk + 256 + 4 * r, fields(in, qh, 2 * t, 0x03030303, 2));
                    SpanKernels.putInt(out, blk + 256 + 64 + 4 * r, fields(in, qh + 16, 2 * t, 0x03030303, 2));
                }
            }
        }
    }
}
