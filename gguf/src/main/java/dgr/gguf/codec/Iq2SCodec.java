package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * IQ2_S (2.56 bits per value): f16 d; 32 bytes of low index bits, one per 8 values; 32 bytes of
 * signs (all 8 stored); 8 bytes {@code qh} holding the two high index bits of each group (bits
 * {@code 2l, 2l+1} of byte {@code ib}), 10 bits into {@link IqGrid#IQ2_S}; 8 bytes of scale codes
 * as IQ2_XS's. Value: {@code d·(0.5 + s)·0.25 · grid · ±1} (dequantize_row_iq2_s).
 */
final class Iq2SCodec extends IqCodec {
    private static final IqGrid G = IqGrid.IQ2_S;

    Iq2SCodec() {
        super(GgmlType.IQ2_S, new IqFit.Shape(G, IqFit.IQ2_SCALE, 15, 16, IqFit.Signs.ALL, new float[][] {IqFit.NO_SHIFT}));
    }

    /** {@code d·(0.5 + s)·0.25 = (d/8)·(1 + 2s)} per 16 values. */
    @Override
    public float integers(MemorySegment src, long off, int[] scale, int[] q) {
        for (int ib = 0; ib < 8; ib++) {
            int sc = Le.u8(src, off + 74 + ib), qh = Le.u8(src, off + 66 + ib);
            scale[2 * ib] = 1 + 2 * (sc & 0xF);
            scale[2 * ib + 1] = 1 + 2 * (sc >>> 4);
            for (int l = 0; l < 4; l++) {
                int e = Le.u8(src, off + 2 + 4 * ib + l) | (qh << (8 - 2 * l) & 0x300);
                IqFit.signed(G, e, Le.u8(src, off + 34 + 4 * ib + l), q, 32 * ib + 8 * l);
            }
        }
        return Le.f16(src, off) * 0.125f;
    }

    @Override
    void pack(IqFit.Fit f, MemorySegment dst, long off) {
        Le.putF16(dst, off, f.dd());
        int[] qh = new int[8];
        for (int g = 0; g < 32; g++) {
            Le.put8(dst, off + 2 + g, f.entry()[g] & 255);
            Le.put8(dst, off + 34 + g, f.signs()[g]);
            qh[g / 4] |= (f.entry()[g] >>> 8) << 2 * (g % 4);
        }
        for (int ib = 0; ib < 8; ib++) {
            Le.put8(dst, off + 66 + ib, qh[ib]);
            Le.put8(dst, off + 74 + ib, f.code()[2 * ib] | f.code()[2 * ib + 1] << 4);
        }
    }
}
