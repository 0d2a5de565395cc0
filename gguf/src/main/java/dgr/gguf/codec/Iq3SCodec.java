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
final class Iq3SCodec extends IqCodec {
    private static final IqGrid G = IqGrid.IQ3_S;

    Iq3SCodec() {
        super(GgmlType.IQ3_S, new IqFit.Shape(G, (dd, s) -> dd * (1 + 2 * s), 15, 32, IqFit.Signs.ALL, new float[][] {IqFit.NO_SHIFT}));
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
    void pack(IqFit.Fit f, MemorySegment dst, long off) {
        Le.putF16(dst, off, f.dd());
        for (int ib = 0; ib < 8; ib++) {
            int qh = 0;
            for (int k = 0; k < 8; k++) {
                int e = f.entry()[8 * ib + k];
                Le.put8(dst, off + 2 + 8 * ib + k, e & 255);
                qh |= (e >>> 8) << k;
            }
            Le.put8(dst, off + 66 + ib, qh);
            for (int l = 0; l < 4; l++) Le.put8(dst, off + 74 + 4 * ib + l, f.signs()[4 * ib + l]);
        }
        for (int k = 0; k < 4; k++) Le.put8(dst, off + 106 + k, f.code()[2 * k] | f.code()[2 * k + 1] << 4);
    }
}
