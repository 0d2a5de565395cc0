package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Converts between one ggml type's block layout (llama.cpp's exact bytes) and float32.
 * {@code n} is always a whole number of blocks. Implementations are stateless and thread-safe.
 */
public interface BlockCodec {
    GgmlType type();

    /** Decodes {@code n} values whose blocks start at byte {@code srcOffset} of {@code src}. */
    void dequantize(MemorySegment src, long srcOffset, float[] dst, int dstOffset, int n);

    /** Encodes {@code n} values into blocks written at byte {@code dstOffset} of {@code dst}. */
    void quantize(float[] src, int srcOffset, int n, MemorySegment dst, long dstOffset);

    /** Convenience: encode a whole row into a new byte array. */
    default byte[] quantize(float[] src) {
        byte[] out = new byte[Math.toIntExact(type().bytesFor(src.length))];
        quantize(src, 0, src.length, MemorySegment.ofArray(out), 0);
        return out;
    }

    /** Convenience: decode a whole byte array. */
    default float[] dequantize(byte[] src) {
        int n = Math.toIntExact(src.length / type().blockBytes * (long) type().blockValues);
        float[] out = new float[n];
        dequantize(MemorySegment.ofArray(src), 0, out, 0, n);
        return out;
    }
}
