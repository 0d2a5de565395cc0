package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * IQ2_XS (2.31 bits per value): f16 d; 32 little-endian u16, one per 8 values: a 9-bit index into
 * {@link IqGrid#IQ2_XS} and 7 sign bits ({@link IqGrid#ksigns}) above it; then 8 bytes of scale
 * codes, the low nibble for the first 16 values of each 32, the high one for the second. Value:
 * {@code d·(0.5 + s)·0.25 · grid · ±1} (dequantize_row_iq2_xs).
 */
final class Iq2XsCodec extends BlockLoop implements IntegerBlock {
    private static final IqGrid G = IqGrid.IQ2_XS;
    private static final IqFit.Mul MUL = (dd, s) -> dd * (0.5f + s) * 0.25f;

    Iq2XsCodec() { super(GgmlType.IQ2_XS); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        IqFit.decode(this, src, off, dst, d);
    }

    /** {@code d·(0.5 + s)·0.25 = (d/8)·(1 + 2s)} per 16 values. */
    @Override
    public float integers(MemorySegment src, long off, int[] scale, int[] q) {
        for (int ib = 0; ib < 8; ib++) {
            int sc = Le.u8(src, off + 66 + ib);
            scale[2 * ib] = 1 + 2 * (sc & 0xF);
            scale[2 * ib + 1] = 1 + 2 * (sc >>> 4);
            for (int l = 0; l < 4; l++) {
                int v = Le.i16(src, off + 2 + 2 * (4 * ib + l)) & 0xFFFF;
                IqFit.signed(G, v & 511, IqGrid.ksigns(v >>> 9), q, 32 * ib + 8 * l);
            }
        }
        return Le.f16(src, off) * 0.125f;
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float[] t = new float[256], sigma = new float[16];
        int[] signs = new int[32];
        IqFit.signs(src, s, 256, t, signs, true);
        for (int h = 0; h < 16; h++) sigma[h] = IqFit.scale(G, t, 16 * h, 16, IqFit.NO_SHIFT);
        float dd = IqFit.blockScale(sigma, MUL, 15);
        Le.putF16(dst, off, dd);
        int[] code = new int[16];
        for (int h = 0; h < 16; h++) {
            code[h] = IqFit.code(dd, sigma[h], MUL, 15);
            float db = MUL.db(dd, code[h]);
            for (int l = 0; l < 2; l++) {
                int g = 2 * h + l;
                Le.put16(dst, off + 2 + 2 * g, IqFit.pick(G, t, 8 * g, db, IqFit.NO_SHIFT) | (signs[g] & 127) << 9);
            }
        }
        for (int ib = 0; ib < 8; ib++) Le.put8(dst, off + 66 + ib, code[2 * ib] | code[2 * ib + 1] << 4);
    }
}
