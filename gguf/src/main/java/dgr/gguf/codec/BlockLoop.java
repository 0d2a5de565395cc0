package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * The shared part of every codec: argument checks and the walk over whole blocks. A codec only
 * says how one block decodes and encodes; the walk is the same for all of them.
 */
abstract class BlockLoop implements BlockCodec {
    private final GgmlType type;

    BlockLoop(GgmlType type) {
        this.type = type;
    }

    @Override
    public final GgmlType type() {
        return type;
    }

    /** Decodes one block at byte {@code off} into {@code dst[d .. d + blockValues)}. */
    abstract void decodeBlock(MemorySegment src, long off, float[] dst, int d);

    /** Encodes {@code src[s .. s + blockValues)} into one block at byte {@code off}. */
    abstract void encodeBlock(float[] src, int s, MemorySegment dst, long off);

    @Override
    public final void dequantize(MemorySegment src, long srcOffset, float[] dst, int dstOffset, int n) {
        check(n, dstOffset, dst.length, src, srcOffset);
        int bv = type.blockValues;
        long off = srcOffset;
        for (int i = 0; i < n; i += bv, off += type.blockBytes) decodeBlock(src, off, dst, dstOffset + i);
    }

    @Override
    public final void quantize(float[] src, int srcOffset, int n, MemorySegment dst, long dstOffset) {
        check(n, srcOffset, src.length, dst, dstOffset);
        if (dst.isReadOnly()) throw new IllegalArgumentException(type + ": destination segment is read-only");
        int bv = type.blockValues;
        long off = dstOffset;
        for (int i = 0; i < n; i += bv, off += type.blockBytes) encodeBlock(src, srcOffset + i, dst, off);
    }

    /** Fails before touching memory, so a bad call never leaves a half-written destination. */
    private void check(int n, int floatOffset, int floatLength, MemorySegment seg, long segOffset) {
        Objects.requireNonNull(seg, "segment");
        if (n < 0 || n % type.blockValues != 0) {
            throw new IllegalArgumentException(type + " codes whole blocks of " + type.blockValues
                    + " values; n = " + n + " is not a multiple");
        }
        Objects.checkFromIndexSize(floatOffset, n, floatLength);
        long bytes = (long) (n / type.blockValues) * type.blockBytes;
        Objects.checkFromIndexSize(segOffset, bytes, seg.byteSize());
    }
}
