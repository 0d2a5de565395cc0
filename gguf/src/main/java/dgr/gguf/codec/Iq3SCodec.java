package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * IQ3_S (3.44 bits per value): f16 d; 64 bytes of low index bits (two 4-value entries per 8
 * values); 8 bytes {@code qh}, bit {@code k} of byte {@code ib} the 9th index bit of entry
 * {@code k} of those 32 values, into {@link IqGrid#IQ3_S}; 32 bytes of signs (all 8 stored);
 * 4 bytes of scale codes, a nibble per 32 values. Value: {@code d·(1 + 2s) · grid · ±1}
 * (dequantize_row_iq3_s).
 */
final class Iq3SCodec extends BlockLoop implements IntegerBlock {
    private static final IqGrid G = IqGrid.IQ3_S;
    private static final IqFit.Mul MUL = (dd, s) -> dd * (1 + 2 * s);

    Iq3SCodec() { super(GgmlType.IQ3_S); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        IqFit.decode(this, src, off, dst, d);
    }

    /** {@code d·(1 + 2s)}: d, scales {@code 1 + 2s}, values ± grid. */
    @Override
    public float integers(MemorySegment src, long off, int[] scale, int[] q) {
        for (int ib = 0; ib < 8; ib++) {
            scale[2 * ib] = scale[2 * ib + 1] = 1 + 2 * ((Le.u8(src, off + 106 + ib / 2) >>> 4 * (ib % 2)) & 0xF);
            int qh = Le.u8(src, off + 66 + ib);
            for (int l = 0; l < 4; l++) {
                int e1 = Le.u8(src, off + 2 + 8 * ib + 2 * l) | (qh << (8 - 2 * l) & 256);
                int e2 = Le.u8(src, off + 3 + 8 * ib + 2 * l) | (qh << (7 - 2 * l) & 256);
                IqFit.signedPair(G, e1, e2, Le.u8(src, off + 74 + 4 * ib + l), q, 32 * ib + 8 * l);
            }
        }
        return Le.f16(src, off);
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float[] t = new float[256], sigma = new float[8];
        int[] signs = new int[32];
        IqFit.signs(src, s, 256, t, signs, false);
        for (int ib = 0; ib < 8; ib++) sigma[ib] = IqFit.scale(G, t, 32 * ib, 32, IqFit.NO_SHIFT);
        float dd = IqFit.blockScale(sigma, MUL, 15);
        Le.putF16(dst, off, dd);
        int[] codes = new int[8];
        for (int ib = 0; ib < 8; ib++) {
            codes[ib] = IqFit.code(dd, sigma[ib], MUL, 15);
            float db = MUL.db(dd, codes[ib]);
            int qh = 0;
            for (int k = 0; k < 8; k++) {
                int e = IqFit.pick(G, t, 32 * ib + 4 * k, db, IqFit.NO_SHIFT);
                Le.put8(dst, off + 2 + 8 * ib + k, e & 255);
                qh |= (e >>> 8) << k;
            }
            Le.put8(dst, off + 66 + ib, qh);
            for (int l = 0; l < 4; l++) Le.put8(dst, off + 74 + 4 * ib + l, signs[4 * ib + l]);
        }
        for (int k = 0; k < 4; k++) Le.put8(dst, off + 106 + k, codes[2 * k] | codes[2 * k + 1] << 4);
    }
}
