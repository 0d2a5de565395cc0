package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/** bfloat16: the top half of a float32. */
final class Bf16Codec extends BlockLoop {
    Bf16Codec() { super(GgmlType.BF16); }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        dst[d] = Float.intBitsToFloat((Le.i16(src, off) & 0xffff) << 16);
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        Le.put16(dst, off, toBf16(src[s]));
    }

    /**
     * ggml_compute_fp32_to_bf16: round to nearest even on the dropped 16 bits; a NaN keeps its top
     * payload bits and is forced quiet (rounding could otherwise carry a NaN into infinity).
     */
    static short toBf16(float f) {
        int u = Float.floatToRawIntBits(f);
        if ((u & 0x7fffffff) > 0x7f800000) return (short) ((u >>> 16) | 64);
        return (short) ((u + (0x7fff + ((u >>> 16) & 1))) >>> 16);
    }
}
