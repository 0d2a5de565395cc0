package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/** IEEE binary16; the JDK's conversions round to nearest even exactly like ggml's F16C path. */
final class F16Codec extends BlockLoop {
    F16Codec() { super(GgmlType.F16); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        dst[d] = Le.f16(src, off);
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        Le.putF16(dst, off, src[s]);
    }
}
