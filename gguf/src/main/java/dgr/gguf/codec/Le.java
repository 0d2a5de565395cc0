package dgr.gguf.codec;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Little-endian, unaligned access to block fields. GGUF blocks are packed (a Q4_0 block is 18
 * bytes), so no field is guaranteed to be naturally aligned.
 */
final class Le {
    static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Le() {}

    static int u8(MemorySegment s, long off) { return s.get(ValueLayout.JAVA_BYTE, off) & 0xff; }

    static int i8(MemorySegment s, long off) { return s.get(ValueLayout.JAVA_BYTE, off); }

    static void put8(MemorySegment s, long off, int v) { s.set(ValueLayout.JAVA_BYTE, off, (byte) v); }

    static short i16(MemorySegment s, long off) { return s.get(I16, off); }

    static void put16(MemorySegment s, long off, int v) { s.set(I16, off, (short) v); }

    static int i32(MemorySegment s, long off) { return s.get(I32, off); }

    static void put32(MemorySegment s, long off, int v) { s.set(I32, off, v); }

    static float f32(MemorySegment s, long off) { return s.get(F32, off); }

    static void putF32(MemorySegment s, long off, float v) { s.set(F32, off, v); }

    /** IEEE binary16 at {@code off}, widened exactly (as ggml's GGML_FP16_TO_FP32). */
    static float f16(MemorySegment s, long off) { return Float.float16ToFloat(s.get(I16, off)); }

    /** Rounds to binary16 to nearest even, as ggml's GGML_FP32_TO_FP16 (F16C on x86). */
    static void putF16(MemorySegment s, long off, float v) { s.set(I16, off, Float.floatToFloat16(v)); }
}
