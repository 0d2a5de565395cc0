package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * IQ1_S (1.56 bits per value): f16 d; 32 bytes of low index bits, one per 8 values; per 32 values
 * a little-endian u16 {@code qh}: the three high index bits of each group (bits {@code 3l..3l+2}),
 * 11 bits into {@link IqGrid#IQ1} (values −1, 0, 1), the scale code {@code s} in bits 12–14 and
 * the sign of the offset {@code δ = ±1/8} in bit 15. Value: {@code d·(2s + 1) · (grid + δ)}
 * (dequantize_row_iq1_s).
 */
final class Iq1SCodec extends IqCodec {
    static final float DELTA = 0.125f;
    private static final IqGrid G = IqGrid.IQ1;

    Iq1SCodec() {
        // One offset sign per 32 values: whichever fits better.
        super(GgmlType.IQ1_S, new IqFit.Shape(G, IqFit.IQ1_SCALE, 7, 32, IqFit.Signs.NONE, new float[][] {{DELTA}, {-DELTA}}));
    }

    /** {@code d·(2s + 1)·(g ± 1/8) = (d/8)·(2s + 1)·(8g ± 1)}: d/8, scales {@code 2s + 1}, values {@code 8g ± 1}. */
    @Override
    public float integers(MemorySegment src, long off, int[] scale, int[] q) {
        for (int ib = 0; ib < 8; ib++) {
            int qh = Le.i16(src, off + 34 + 2 * ib) & 0xFFFF;
            scale[2 * ib] = scale[2 * ib + 1] = 2 * ((qh >>> 12) & 7) + 1;
            int delta = (qh & 0x8000) != 0 ? -1 : 1;
            for (int l = 0; l < 4; l++) {
                int e = Le.u8(src, off + 2 + 4 * ib + l) | ((qh >>> 3 * l) & 7) << 8;
                for (int j = 0; j < 8; j++) q[32 * ib + 8 * l + j] = 8 * G.value(e, j) + delta;
            }
        }
        return Le.f16(src, off) * 0.125f;
    }

    @Override
    void pack(IqFit.Fit f, MemorySegment dst, long off) {
        Le.putF16(dst, off, f.dd());
        for (int ib = 0; ib < 8; ib++) {
            int qh = f.code()[ib] << 12 | (f.unitSet()[ib] == 1 ? 0x8000 : 0);
            for (int l = 0; l < 4; l++) {
                int e = f.entry()[4 * ib + l];
                Le.put8(dst, off + 2 + 4 * ib + l, e & 255);
                qh |= (e >>> 8) << 3 * l;
            }
            Le.put16(dst, off + 34 + 2 * ib, qh);
        }
    }
}
