package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * What the IQ1/IQ2/IQ3 codecs share: each block decodes through its integer form
 * ({@link IntegerBlock}, the same floats as ggml's dequantize_row_*), and encodes by one search
 * ({@link IqFit#fit}) whose choices the format then writes in its own layout. A codec states its
 * layout twice, once read ({@link #integers}) and once written ({@link #pack}).
 */
abstract sealed class IqCodec extends BlockLoop implements IntegerBlock
        permits Iq1SCodec, Iq1MCodec, Iq2XxsCodec, Iq2XsCodec, Iq2SCodec, Iq3XxsCodec, Iq3SCodec {
    private final IqFit.Shape shape;

    IqCodec(GgmlType type, IqFit.Shape shape) {
        super(type);
        this.shape = shape;
    }

    @Override
    final void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        IqFit.decode(this, src, off, dst, d);
    }

    @Override
    final void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        pack(IqFit.fit(shape, src, s), dst, off);
    }

    /** Writes one block's choices at {@code off} in the format's layout. */
    abstract void pack(IqFit.Fit f, MemorySegment dst, long off);
}
