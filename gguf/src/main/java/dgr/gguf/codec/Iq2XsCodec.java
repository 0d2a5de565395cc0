package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * IQ2_XS (2.31 bits per value): f16 d; 32 little-endian u16, one per 8 values: a 9-bit index into
 * {@link IqGrid#IQ2_XS} and 7 sign bits ({@link IqGrid#ksigns}) above it; then 8 bytes of scale
 * codes, the low nibble for the first 16 values of each 32, the high one for the second. Value:
 * {@code d·(0.5 + s)·0.25 · grid · ±1} (dequantize_row_iq2_xs).
 */
final class Iq2XsCodec extends IqCodec {
    private static final IqGrid G = IqGrid.IQ2_XS;

    Iq2XsCodec() {
        super(GgmlType.IQ2_XS, new IqFit.Shape(G, IqFit.IQ2_SCALE, 15, 16, IqFit.Signs.EVEN_NEGATIVES, new float[][] {IqFit.NO_SHIFT}));
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
    void pack(IqFit.Fit f, MemorySegment dst, long off) {
        Le.putF16(dst, off, f.dd());
        for (int g = 0; g < 32; g++) Le.put16(dst, off + 2 + 2 * g, f.entry()[g] | (f.signs()[g] & 127) << 9);
        for (int ib = 0; ib < 8; ib++) Le.put8(dst, off + 66 + ib, f.code()[2 * ib] | f.code()[2 * ib + 1] << 4);
    }
}
