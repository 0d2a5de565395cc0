package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * IQ1_M (1.75 bits per value): 32 bytes of low index bits, one per 8 values; 16 bytes {@code qh},
 * a nibble per group of 8: three high index bits (11 bits into {@link IqGrid#IQ1}) and the sign
 * of its offset {@code δ = ±1/8} in bit 3; 8 bytes = four little-endian u16 of 3-bit scale codes,
 * four per word (one per 16 values), whose top nibbles together are the block's f16 {@code d}.
 * Value: {@code d·(2s + 1) · (grid + δ)} (dequantize_row_iq1_m).
 */
final class Iq1MCodec extends IqCodec {
    private static final IqGrid G = IqGrid.IQ1;

    Iq1MCodec() {
        // The offset's sign chosen per group of 8.
        super(GgmlType.IQ1_M, new IqFit.Shape(G, IqFit.IQ1_SCALE, 7, 16, IqFit.Signs.NONE,
                new float[][] {{Iq1SCodec.DELTA, -Iq1SCodec.DELTA}}));
    }

    /** As IQ1_S's, with a scale per 16 values and an offset sign per 8. */
    @Override
    public float integers(MemorySegment src, long off, int[] scale, int[] q) {
        int bits = 0;
        for (int k = 0; k < 4; k++) {
            int w = Le.i16(src, off + 48 + 2 * k) & 0xFFFF;
            bits |= (w >>> 12) << 4 * k;
            for (int h = 0; h < 4; h++) scale[4 * k + h] = 2 * ((w >>> 3 * h) & 7) + 1;
        }
        for (int g = 0; g < 32; g++) {
            int nib = Le.u8(src, off + 32 + g / 2) >>> 4 * (g % 2);
            int e = Le.u8(src, off + g) | (nib & 7) << 8, delta = (nib & 8) != 0 ? -1 : 1;
            for (int j = 0; j < 8; j++) q[8 * g + j] = 8 * G.value(e, j) + delta;
        }
        return Float.float16ToFloat((short) bits) * 0.125f;
    }

    @Override
    void pack(IqFit.Fit f, MemorySegment dst, long off) {
        int f16 = Float.floatToFloat16(f.dd()) & 0xFFFF;
        int[] sc = new int[4], qh = new int[16];
        for (int h = 0; h < 16; h++) sc[h / 4] |= f.code()[h] << 3 * (h % 4);
        for (int g = 0; g < 32; g++) {
            int e = f.entry()[g];
            Le.put8(dst, off + g, e & 255);
            qh[g / 2] |= ((e >>> 8) | f.shift()[g] << 3) << 4 * (g % 2);
        }
        for (int k = 0; k < 16; k++) Le.put8(dst, off + 32 + k, qh[k]);
        for (int k = 0; k < 4; k++) Le.put16(dst, off + 48 + 2 * k, sc[k] | ((f16 >>> 4 * k) & 0xF) << 12);
    }
}
