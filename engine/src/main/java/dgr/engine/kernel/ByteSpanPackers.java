package dgr.engine.kernel;

import static dgr.engine.kernel.SpanKernels.putInt;
import dgr.gguf.GgmlType;
import dgr.gguf.codec.Iq4Fit;
import java.lang.foreign.MemorySegment;

/**
 * How each GGML block type becomes {@link ByteSpans}' layout: per type, the file row's quants
 * unpacked to one integer per column and written as spans ({@link #packSpans}) after the row's
 * scales. Runs once per matrix at load ({@link ByteSpans#repack}); the kernels never see file layout.
 */
final class ByteSpanPackers {
    private ByteSpanPackers() {}

    /**
     * Q6_K file row, per 210-byte super-block: ql[128], qh[64], int8 scales[16], f16 d. In half
     * {@code n}, position {@code p} (0..127) takes its low nibble from {@code ql[64n + (p & 31) +
     * 32·((p >> 5) & 1)]} (high nibble when {@code p >= 64}) and its top two bits from
     * {@code qh[32n + (p & 31)]} at bit {@code 2·(p >> 5)}; its sub-block is {@code 8n + p / 16}.
     */
    static void unpackQ6_K(byte[] in, int[] q) {
        for (int blk = 0; blk < q.length / 256; blk++) {
            int o = blk * ByteSpans.Q6_BLOCK;
            for (int n = 0; n < 2; n++) {
                for (int p = 0; p < 128; p++) {
                    int l = p & 31, g = p >> 5;
                    int lo = (in[o + 64 * n + l + 32 * (g & 1)] & 0xFF) >>> (4 * (g >> 1)) & 15;
                    int hi = ((in[o + 128 + 32 * n + l] & 0xFF) >>> (2 * g)) & 3;
                    q[256 * blk + 128 * n + p] = lo | (hi << 4);
                }
            }
        }
    }

    /** Q6_K: super-block d as f32, the int8 group scales as they were, then spans (class comment). */
    static void packQ6_K(byte[] in, int[] q, byte[] out) {
        int nsb = q.length / 256, p = 0;
        for (int blk = 0; blk < nsb; blk++) p = putInt(out, p, Float.floatToRawIntBits(RowDecoder.f16le(in, blk * ByteSpans.Q6_BLOCK + 208)));
        for (int blk = 0; blk < nsb; blk++) {
            for (int s = 0; s < 16; s++) out[p++] = in[blk * ByteSpans.Q6_BLOCK + 192 + s];
        }
        packSpans(q, out, p);
    }

    /**
     * Q5_K file row to byte spans. Per 176-byte super-block the file has f16 d, f16 dmin, 12 bytes
     * of 6-bit scales and mins (ggml's get_scale_min_k4 packing), 32 bytes {@code qh} and 128 bytes
     * {@code qs}: sub-blocks {@code 2p} and {@code 2p+1} take their low four bits from the low and
     * high nibbles of {@code qs[32p + l]} and their fifth bit from bits {@code 2p} and {@code 2p+1}
     * of {@code qh[l]}. Written: all d as f32, all dmin as f32, each sub-block's scale twice (once per
     * 16-value group), each min twice, then the spans.
     */
    static void packQ5_K(byte[] in, int[] q, byte[] out) {
        int nsb = q.length / 256, ng = q.length / 16;
        for (int blk = 0; blk < nsb; blk++) {
            int o = blk * ByteSpans.Q5_BLOCK;
            putInt(out, 4 * blk, Float.floatToRawIntBits(RowDecoder.f16le(in, o)));
            putInt(out, 4 * (nsb + blk), Float.floatToRawIntBits(RowDecoder.f16le(in, o + 2)));
            for (int j = 0; j < 8; j++) {
                int sc = RowDecoder.scaleMinK4(in, o + 4, j, 0), m = RowDecoder.scaleMinK4(in, o + 4, j, 1);
                int g = 8 * nsb + 16 * blk + 2 * j;
                out[g] = out[g + 1] = (byte) sc;
                out[g + ng] = out[g + ng + 1] = (byte) m;
                int pair = j / 2, nib = 4 * (j % 2);
                for (int l = 0; l < 32; l++) {
                    int lo = ((in[o + 48 + 32 * pair + l] & 0xFF) >>> nib) & 15, hi = ((in[o + 16 + l] & 0xFF) >>> j) & 1;
                    q[256 * blk + 32 * j + l] = lo | (hi << 4);
                }
            }
        }
        packSpans(q, out, 8 * nsb + 2 * ng);
    }

    /**
     * Q3_K file row to byte spans. Per 110-byte super-block the file has 32 bytes {@code hmask},
     * 64 bytes {@code qs}, 12 bytes of 6-bit scales and an f16 d; group {@code 8n + 2j + h}
     * ({@code n} the 128-value half, {@code j} the 2-bit shift step, {@code h} which 16 bytes)
     * takes its two low bits from {@code qs[32n + 16h + l] >> 2j} and its third from bit
     * {@code 4n + j} of {@code hmask[16h + l]}: {@code q = low + 4·bit}, value {@code d·(sc − 32)·(q − 4)}.
     * Written: all d as f32, each group's {@code sc − 32} as int8, then the spans.
     */
    static void packQ3_K(byte[] in, int[] q, byte[] out) {
        int nsb = q.length / 256;
        for (int blk = 0; blk < nsb; blk++) {
            int o = blk * ByteSpans.Q3_BLOCK;
            putInt(out, 4 * blk, Float.floatToRawIntBits(RowDecoder.f16le(in, o + 108)));
            for (int grp = 0; grp < 16; grp++) {
                int n = grp / 8, j = (grp % 8) / 2, h = grp % 2;
                out[4 * nsb + 16 * blk + grp] = (byte) (RowDecoder.q3Scale(in, o + 96, grp) - 32);
                for (int l = 0; l < 16; l++) {
                    int low = ((in[o + 32 + 32 * n + 16 * h + l] & 0xFF) >>> (2 * j)) & 3;
                    int bit = ((in[o + 16 * h + l] & 0xFF) >>> (4 * n + j)) & 1;
                    q[256 * blk + 16 * grp + l] = low | (bit << 2);
                }
            }
        }
        packSpans(q, out, 4 * nsb + q.length / 16);
    }

    /**
     * Q2_K file row to byte spans. Per 84-byte super-block the file has 16 scale bytes (low
     * nibble scale, high nibble min, one per group), 64 bytes {@code qs} and f16 d and dmin; group
     * {@code 8n + 2j + h} takes its two bits from {@code qs[32n + 16h + l] >> 2j}. Written: all d as
     * f32, all dmin as f32, a byte of scale and one of min per group, then the spans.
     */
    static void packQ2_K(byte[] in, int[] q, byte[] out) {
        int nsb = q.length / 256, ng = q.length / 16;
        for (int blk = 0; blk < nsb; blk++) {
            int o = blk * ByteSpans.Q2_BLOCK;
            putInt(out, 4 * blk, Float.floatToRawIntBits(RowDecoder.f16le(in, o + 80)));
            putInt(out, 4 * (nsb + blk), Float.floatToRawIntBits(RowDecoder.f16le(in, o + 82)));
            for (int grp = 0; grp < 16; grp++) {
                int n = grp / 8, j = (grp % 8) / 2, h = grp % 2;
                int sm = in[o + grp] & 0xFF, g = 8 * nsb + 16 * blk + grp;
                out[g] = (byte) (sm & 15);
                out[g + ng] = (byte) (sm >>> 4);
                for (int l = 0; l < 16; l++) q[256 * blk + 16 * grp + l] = ((in[o + 16 + 32 * n + 16 * h + l] & 0xFF) >>> (2 * j)) & 3;
            }
        }
        packSpans(q, out, 8 * nsb + 2 * ng);
    }

    /**
     * Q5_0 (22-byte blocks: f16 d, 4 bytes {@code qh}, 16 bytes {@code qs}) or Q5_1 (24 bytes: f16
     * d, f16 m, then the same) to byte spans: value {@code j} of a block takes its low four bits
     * from the low ({@code j < 16}) or high nibble of {@code qs[j % 16]} and its fifth from bit
     * {@code j} of {@code qh}. Written: all d, then (Q5_1) all m, as they were, then the spans.
     */
    static void packQ5_01(byte[] in, int[] q, byte[] out, boolean mins) {
        int nb = q.length / 32, block = mins ? 24 : 22, h = mins ? 4 : 2;
        for (int b = 0; b < nb; b++) {
            int o = b * block;
            Q4Spans.copyScales(in, o, out, b, nb, mins);
            int qh = (in[o + h] & 0xFF) | (in[o + h + 1] & 0xFF) << 8 | (in[o + h + 2] & 0xFF) << 16 | (in[o + h + 3] & 0xFF) << 24;
            for (int j = 0; j < 16; j++) {
                int v = in[o + h + 4 + j] & 0xFF;
                q[32 * b + j] = (v & 15) | ((qh >>> j) & 1) << 4;
                q[32 * b + j + 16] = (v >>> 4) | ((qh >>> (j + 16)) & 1) << 4;
            }
        }
        packSpans(q, out, (mins ? 4 : 2) * nb);
    }

    /**
     * IQ4_XS file row to byte spans. Per 136-byte super-block the file has f16 d, u16
     * {@code scales_h}, 4 bytes {@code scales_l} and 128 bytes {@code qs}: sub-block {@code j} has
     * the 6-bit scale {@code ls = (scales_l[j/2] >> 4·(j%2) & 15) | (scales_h >> 2j & 3) << 4} and
     * its value {@code l} the index in the low ({@code l < 16}) or high nibble of
     * {@code qs[16j + l % 16]}. Written: all d as f32, each sub-block's {@code ls − 32} as int8 for
     * both its groups, then the spans of grid value + 128.
     */
    static void packIQ4_XS(byte[] in, int[] q, byte[] out) {
        int nsb = q.length / 256;
        for (int blk = 0; blk < nsb; blk++) {
            int o = blk * ByteSpans.IQ4_XS_BLOCK;
            putInt(out, 4 * blk, Float.floatToRawIntBits(RowDecoder.f16le(in, o)));
            int sh = (in[o + 2] & 0xFF) | (in[o + 3] & 0xFF) << 8;
            for (int j = 0; j < 8; j++) {
                int ls = ((in[o + 4 + j / 2] & 0xFF) >>> (4 * (j % 2)) & 15) | ((sh >>> (2 * j)) & 3) << 4;
                out[4 * nsb + 16 * blk + 2 * j] = out[4 * nsb + 16 * blk + 2 * j + 1] = (byte) (ls - 32);
                gridBytes(in, o + 8 + 16 * j, q, 256 * blk + 32 * j);
            }
        }
        packSpans(q, out, 4 * nsb + q.length / 16);
    }

    /** IQ4_NL (18-byte blocks: f16 d, 16 bytes {@code qs} as IQ4_XS's) to byte spans: all d as they were, then the spans. */
    static void packIQ4_NL(byte[] in, int[] q, byte[] out) {
        for (int b = 0; b < q.length / 32; b++) {
            int o = b * ByteSpans.IQ4_NL_BLOCK;
            out[2 * b] = in[o];
            out[2 * b + 1] = in[o + 1];
            gridBytes(in, o + 2, q, 32 * b);
        }
        packSpans(q, out, q.length / 16);
    }

    /**
     * MXFP4 (17-byte blocks: the E8M0 exponent {@code e}, then 16 bytes of 4-bit indices, low
     * nibbles values 0–15, high nibbles 16–31) to byte spans: all {@code e} as they were, then each
     * value's doubled E2M1 point + 128 (116..140), so that value = (q − 128)·2^(e−128).
     */
    static void packMXFP4(byte[] in, int[] q, byte[] out) {
        for (int b = 0; b < q.length / 32; b++) {
            int o = b * ByteSpans.MXFP4_BLOCK;
            out[b] = in[o];
            for (int l = 0; l < 16; l++) {
                int v = in[o + 1 + l] & 0xFF;
                q[32 * b + l] = MXFP4_POINTS[v & 15] + 128;
                q[32 * b + l + 16] = MXFP4_POINTS[v >>> 4] + 128;
            }
        }
        packSpans(q, out, q.length / 32);
    }

    /**
     * TQ1_0 or TQ2_0 file row to byte spans in the symmetric layout: each block's d as f32, an int8
     * scale of 1 per group, each trit (0..2) as a byte, so value = d·q − 1·d. The trits come from the
     * codec's own decode ({@code (trit − 1)·d}, so exactly −d, 0, d, or 2·d for TQ2_0's unused fourth
     * code), which keeps the packing order in one place; {@code vals} is the packer's scratch.
     */
    static void packTQ(GgmlType type, byte[] in, int[] q, float[] vals, byte[] out) {
        int nsb = q.length / 256, block = (int) type.bytesFor(256), dAt = block - 2;
        dgr.gguf.codec.Codecs.of(type).dequantize(MemorySegment.ofArray(in), 0, vals, 0, q.length);
        for (int b = 0; b < nsb; b++) {
            float d = RowDecoder.f16le(in, b * block + dAt);
            putInt(out, 4 * b, Float.floatToRawIntBits(d));
            for (int g = 0; g < 16; g++) out[4 * nsb + 16 * b + g] = 1;
            for (int i = 256 * b; i < 256 * (b + 1); i++) q[i] = d == 0 ? 1 : Math.round(vals[i] / d) + 1;
        }
        packSpans(q, out, 4 * nsb + q.length / 16);
    }

    /**
     * An IQ1/IQ2/IQ3 file row to byte spans in the symmetric layout, from the codec's integer form
     * ({@code value = d·scale·q}, exactly the decoded value): each block's d as f32, its 16 scales
     * (1..31) as int8, each {@code q + 128} (66..190) as a byte, so value = s·byte − 128·s;
     * {@code scale} and {@code v} are the packer's scratch for one block.
     */
    static void packIQ(GgmlType type, dgr.gguf.codec.IntegerBlock form, byte[] in, int[] q, int[] scale, int[] v, byte[] out) {
        int nsb = q.length / 256, block = type.blockBytes;
        MemorySegment src = MemorySegment.ofArray(in);
        for (int b = 0; b < nsb; b++) {
            putInt(out, 4 * b, Float.floatToRawIntBits(form.integers(src, (long) b * block, scale, v)));
            for (int g = 0; g < 16; g++) out[4 * nsb + 16 * b + g] = (byte) scale[g];
            for (int i = 0; i < 256; i++) q[256 * b + i] = v[i] + 128;
        }
        packSpans(q, out, 4 * nsb + q.length / 16);
    }

    /** E2M1's points doubled (ggml's kvalues_mxfp4), index 8–15 the negatives. */
    private static final int[] MXFP4_POINTS = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

    /** The 32 values of 16 index bytes at {@code in[o]} as grid value + 128 (1..241) into {@code q[at ..]}. */
    private static void gridBytes(byte[] in, int o, int[] q, int at) {
        for (int l = 0; l < 16; l++) {
            int v = in[o + l] & 0xFF;
            q[at + l] = Iq4Fit.value(v & 15) + 128;
            q[at + l + 16] = Iq4Fit.value(v >>> 4) + 128;
        }
    }

    /** Quants (column order) into spans from {@code out[p]}: byte k of int j of span i is column 32i + 8k + j. */
    private static void packSpans(int[] q, byte[] out, int p) {
        for (int i = 0; i < q.length / 32; i++) {
            for (int j = 0; j < 8; j++) {
                for (int k = 0; k < 4; k++) out[p++] = (byte) q[32 * i + 8 * k + j];
            }
        }
    }
}
