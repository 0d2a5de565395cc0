package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * IQ3_XXS (3.06 bits per value): f16 d; 64 bytes of indices into {@link IqGrid#IQ3_XXS} (4
 * magnitudes each, two per 8 values); then per 32 values a little-endian u32 with four 7-bit sign
 * groups ({@link IqGrid#ksigns}) in bits 0–27 and the scale code {@code s} in bits 28–31. Value:
 * {@code d·(0.5 + s)·0.5 · grid · ±1} (dequantize_row_iq3_xxs).
 */
final class Iq3XxsCodec extends BlockLoop implements IntegerBlock {
    private static final IqGrid G = IqGrid.IQ3_XXS;
    private static final IqFit.Mul MUL = (dd, s) -> dd * (0.5f + s) * 0.5f;

    Iq3XxsCodec() { super(GgmlType.IQ3_XXS); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        IqFit.decode(this, src, off, dst, d);
    }

    /** {@code d·(0.5 + s)·0.5 = (d/4)·(1 + 2s)}: d/4, scales {@code 1 + 2s}, values ± grid. */
    @Override
    public float integers(MemorySegment src, long off, int[] scale, int[] q) {
        for (int ib = 0; ib < 8; ib++) {
            int aux = Le.i32(src, off + 66 + 4 * ib);
            scale[2 * ib] = scale[2 * ib + 1] = 1 + 2 * (aux >>> 28);
            for (int l = 0; l < 4; l++) {
                IqFit.signedPair(G, Le.u8(src, off + 2 + 8 * ib + 2 * l), Le.u8(src, off + 3 + 8 * ib + 2 * l),
                        IqGrid.ksigns((aux >>> 7 * l) & 127), q, 32 * ib + 8 * l);
            }
        }
        return Le.f16(src, off) * 0.25f;
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float[] t = new float[256], sigma = new float[8];
        int[] signs = new int[32];
        IqFit.signs(src, s, 256, t, signs, true);
        for (int ib = 0; ib < 8; ib++) sigma[ib] = IqFit.scale(G, t, 32 * ib, 32, IqFit.NO_SHIFT);
        float dd = IqFit.blockScale(sigma, MUL, 15);
        Le.putF16(dst, off, dd);
        for (int ib = 0; ib < 8; ib++) {
            int code = IqFit.code(dd, sigma[ib], MUL, 15);
            float db = MUL.db(dd, code);
            int aux = code << 28;
            for (int k = 0; k < 8; k++) Le.put8(dst, off + 2 + 8 * ib + k, IqFit.pick(G, t, 32 * ib + 4 * k, db, IqFit.NO_SHIFT));
            for (int l = 0; l < 4; l++) aux |= (signs[4 * ib + l] & 127) << 7 * l;
            Le.put32(dst, off + 66 + 4 * ib, aux);
        }
    }
}
