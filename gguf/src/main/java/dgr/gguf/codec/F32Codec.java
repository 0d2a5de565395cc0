package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/** Plain little-endian float32: a "block" is one value. */
final class F32Codec extends BlockLoop {
    F32Codec() { super(GgmlType.F32); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        dst[d] = Le.f32(src, off);
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        Le.putF32(dst, off, src[s]);
    }
}
