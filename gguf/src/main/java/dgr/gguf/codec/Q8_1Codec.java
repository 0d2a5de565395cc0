package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q8_1: f16 d; f16 s = d·Σq; int8 q[32]; x = d·q. It is the activation type llama.cpp pairs
 * with Q4_1/Q5_1 weights; s lets a dot product fold the weights' offset in with one multiply.
 */
final class Q8_1Codec extends BlockLoop {
    Q8_1Codec() { super(GgmlType.Q8_1); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float scale = Le.f16(src, off);
        for (int j = 0; j < 32; j++) dst[d + j] = Le.i8(src, off + 4 + j) * scale;
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float d = Block32.amax(src, s) / 127;
        float id = d != 0 ? 1.0f / d : 0.0f;
        Le.putF16(dst, off, d);
        int sum = 0;
        for (int j = 0; j < 16; j++) {
            byte q0 = (byte) CRound.roundf(src[s + j] * id);
            byte q1 = (byte) CRound.roundf(src[s + 16 + j] * id);
            Le.put8(dst, off + 4 + j, q0);
            Le.put8(dst, off + 4 + 16 + j, q1);
            sum += q0 + q1;
        }
        Le.putF16(dst, off + 2, sum * d);
    }
}
