package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * IQ4_NL: f16 d; u8 qs[16]; value {@code j} is {@code d·VALUES[qs[j] & 15]}, value {@code j + 16}
 * {@code d·VALUES[qs[j] >> 4]} on the non-linear grid of {@link Iq4Fit}. quantize_row_iq4_nl_ref:
 * the block's searched scale, then every value's nearest grid index at that scale.
 */
final class Iq4NlCodec extends BlockLoop {
    Iq4NlCodec() { super(GgmlType.IQ4_NL); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        Iq4Fit.unpack(src, off + 2, Le.f16(src, off), dst, d);
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float d = Iq4Fit.blockScale(src, s);
        Le.putF16(dst, off, d);
        Iq4Fit.packIndices(src, s, d != 0 ? 1 / d : 0f, dst, off + 2);
    }
}
