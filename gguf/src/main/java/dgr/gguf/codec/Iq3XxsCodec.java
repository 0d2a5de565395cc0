package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * IQ3_XXS (3.06 bits per value): f16 d; 64 bytes of indices into {@link IqGrid#IQ3_XXS} (4
 * magnitudes each, two per 8 values); then per 32 values a little-endian u32 with four 7-bit sign
 * groups ({@link IqGrid#ksigns}) in bits 0–27 and the scale code {@code s} in bits 28–31. Value:
 * {@code d·(0.5 + s)·0.5 · grid · ±1} (dequantize_row_iq3_xxs).
 */
final class Iq3XxsCodec extends IqCodec {
    private static final IqGrid G = IqGrid.IQ3_XXS;

    Iq3XxsCodec() {
        super(GgmlType.IQ3_XXS, new IqFit.Shape(G, (dd, s) -> dd * (0.5f + s) * 0.5f, 15, 32, IqFit.Signs.EVEN_NEGATIVES,
                new float[][] {IqFit.NO_SHIFT}));
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
    void pack(IqFit.Fit f, MemorySegment dst, long off) {
        Le.putF16(dst, off, f.dd());
        for (int k = 0; k < 64; k++) Le.put8(dst, off + 2 + k, f.entry()[k]);
        for (int ib = 0; ib < 8; ib++) {
            int aux = f.code()[ib] << 28;
            for (int l = 0; l < 4; l++) aux |= (f.signs()[4 * ib + l] & 127) << 7 * l;
            Le.put32(dst, off + 66 + 4 * ib, aux);
        }
    }
}
