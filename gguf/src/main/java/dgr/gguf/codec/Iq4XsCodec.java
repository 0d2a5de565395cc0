package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * IQ4_XS: f16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]. Sub-block {@code ib} (32 values) has the
 * 6-bit scale {@code ls = (scales_l[ib/2] >> 4·(ib%2) & 15) | (scales_h >> 2·ib & 3) << 4} and
 * values {@code (d·(ls − 32))·VALUES[index]} on the grid of {@link Iq4Fit}, its indices packed as
 * IQ4_NL's. quantize_row_iq4_xs_ref: each sub-block's searched scale, {@code d = −max/32} from the
 * largest of them, each scale rounded to {@code l} in −32..31, then the indices at {@code d·l}.
 */
final class Iq4XsCodec extends BlockLoop {
    Iq4XsCodec() { super(GgmlType.IQ4_XS); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float scale = Le.f16(src, off);
        int sh = Le.i16(src, off + 2) & 0xFFFF;
        for (int ib = 0; ib < 8; ib++) {
            int ls = ((Le.u8(src, off + 4 + ib / 2) >>> (4 * (ib % 2))) & 0xF) | (((sh >>> (2 * ib)) & 3) << 4);
            Iq4Fit.unpack(src, off + 8 + 16L * ib, scale * (ls - 32), dst, d + 32 * ib);
        }
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float[] scales = new float[8];
        float maxScale = 0, amaxScale = 0;
        for (int ib = 0; ib < 8; ib++) {
            scales[ib] = Iq4Fit.blockScale(src, s + 32 * ib);
            if (Math.abs(scales[ib]) > amaxScale) {
                amaxScale = Math.abs(scales[ib]);
                maxScale = scales[ib];
            }
        }
        float d = -maxScale / 32;
        Le.putF16(dst, off, d);
        float id = d != 0 ? 1 / d : 0f;
        int sh = 0;
        for (int ib = 0; ib < 8; ib++) {
            int l = Math.max(-32, Math.min(31, CRound.nearestInt(id * scales[ib])));
            float dl = d * l;
            Iq4Fit.packIndices(src, s + 32 * ib, dl != 0 ? 1 / dl : 0f, dst, off + 8 + 16L * ib);
            l += 32;
            long at = off + 4 + ib / 2;
            Le.put8(dst, at, ib % 2 == 0 ? l & 0xF : Le.u8(dst, at) | (l & 0xF) << 4);
            sh |= (l >>> 4) << (2 * ib);
        }
        Le.put16(dst, off + 2, sh);
    }
}
