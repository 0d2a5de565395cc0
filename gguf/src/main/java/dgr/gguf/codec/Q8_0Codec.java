package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/** Q8_0: f16 d; int8 q[32]; x = d·q. quantize_row_q8_0_ref: d = amax/127, q = roundf(x/d). */
final class Q8_0Codec extends BlockLoop {
    Q8_0Codec() { super(GgmlType.Q8_0); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float scale = Le.f16(src, off);
        for (int j = 0; j < 32; j++) dst[d + j] = Le.i8(src, off + 2 + j) * scale;
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float d = Block32.amax(src, s) / 127;
        float id = d != 0 ? 1.0f / d : 0.0f;
        Le.putF16(dst, off, d);
        for (int j = 0; j < 32; j++) Le.put8(dst, off + 2 + j, CRound.roundf(src[s + j] * id));
    }
}
