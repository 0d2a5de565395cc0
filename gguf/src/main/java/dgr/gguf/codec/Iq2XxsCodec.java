package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * IQ2_XXS (2.06 bits per value): f16 d; then per 32 values two little-endian u32: the first holds
 * four 8-bit indices into {@link IqGrid#IQ2_XXS} (8 magnitudes each), the second four 7-bit sign
 * groups ({@link IqGrid#ksigns}) in bits 0–27 and the scale code {@code s} in bits 28–31. Value:
 * {@code d·(0.5 + s)·0.25 · grid · ±1} (dequantize_row_iq2_xxs; the same floats).
 */
final class Iq2XxsCodec extends IqCodec {
    private static final IqGrid G = IqGrid.IQ2_XXS;

    Iq2XxsCodec() {
        super(GgmlType.IQ2_XXS, new IqFit.Shape(G, IqFit.IQ2_SCALE, 15, 32, IqFit.Signs.EVEN_NEGATIVES, new float[][] {IqFit.NO_SHIFT}));
    }

    /** {@code d·(0.5 + s)·0.25 = (d/8)·(1 + 2s)}: d/8, scales {@code 1 + 2s}, values ± grid. */
    @Override
    public float integers(MemorySegment src, long off, int[] scale, int[] q) {
        for (int ib = 0; ib < 8; ib++) {
            int a0 = Le.i32(src, off + 2 + 8 * ib), a1 = Le.i32(src, off + 6 + 8 * ib);
            scale[2 * ib] = scale[2 * ib + 1] = 1 + 2 * (a1 >>> 28);
            for (int l = 0; l < 4; l++) IqFit.signed(G, (a0 >>> 8 * l) & 255, IqGrid.ksigns((a1 >>> 7 * l) & 127), q, 32 * ib + 8 * l);
        }
        return Le.f16(src, off) * 0.125f;
    }

    @Override
    void pack(IqFit.Fit f, MemorySegment dst, long off) {
        Le.putF16(dst, off, f.dd());
        for (int ib = 0; ib < 8; ib++) {
            int a0 = 0, a1 = f.code()[ib] << 28;
            for (int l = 0; l < 4; l++) {
                a0 |= f.entry()[4 * ib + l] << 8 * l;
                a1 |= (f.signs()[4 * ib + l] & 127) << 7 * l;
            }
            Le.put32(dst, off + 2 + 8 * ib, a0);
            Le.put32(dst, off + 6 + 8 * ib, a1);
        }
    }
}
