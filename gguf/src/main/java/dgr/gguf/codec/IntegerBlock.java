package dgr.gguf.codec;

import java.lang.foreign.MemorySegment;

/**
 * A 256-value block of the IQ1/IQ2/IQ3 types as one float and integers: value {@code i} is
 * {@code d · scale[i / 16] · q[i]} with {@code scale} 1..31 and {@code |q|} ≤ 62, exactly what
 * ggml's dequantize_row_* computes (its products of an f16 and small integers are exact in f32; the
 * codecs decode through this form, and {@code IqCodecTest} holds them to ggml's bits). The engine's
 * byte spans store blocks in this form.
 */
public interface IntegerBlock {
    /** Fills {@code scale[0 .. 16)} and {@code q[0 .. 256)} from the block at {@code off}; returns {@code d}. */
    float integers(MemorySegment src, long off, int[] scale, int[] q);
}
