package dgr.gguf.codec;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.gguf.GgmlType;
import dgr.gguf.TestResources;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * IQ4_NL, IQ4_XS and MXFP4, which the shared conformance set has no samples of: decoding equals
 * gguf-py's (llama.cpp's Python package) bit for bit on blocks that cover every index, every sub-block
 * scale pattern, both signs of d, a zero d and subnormal ones ({@code tools/codecs/iq4_vectors.py};
 * MXFP4's scale bytes from 0 and 1, subnormal, to 254: {@code tools/codecs/mxfp4_vectors.py});
 * the quantizer picks grid points and scales as llama.cpp's search does.
 */
class Iq4CodecTest {

    @ParameterizedTest
    @EnumSource(names = {"IQ4_NL", "IQ4_XS", "MXFP4"})
    void dequantizeIsBitIdenticalToGgufPy(GgmlType type) {
        byte[] bin = TestResources.resource("ggufpy/" + type + ".bin");
        float[] expected = TestResources.floats(TestResources.resource("ggufpy/" + type + ".f32"));
        assertThat(expected).hasSize(1024);
        assertThat((long) bin.length).isEqualTo(type.bytesFor(1024));

        assertThat(CodecConformanceTest.bits(Codecs.of(type).dequantize(bin))).containsExactly(CodecConformanceTest.bits(expected));
    }

    @Test
    void nearestGridPointBreaksTiesUpwardAndClampsAtTheEnds() {
        assertThat(Iq4Fit.nearest(-500f)).isZero();
        assertThat(Iq4Fit.nearest(500f)).isEqualTo(15);
        assertThat(Iq4Fit.nearest(1f)).isEqualTo(8);
        assertThat(Iq4Fit.nearest(-4.5f)).isEqualTo(8); // 5.5 from −10 and from 1: the upper index
        assertThat(Iq4Fit.nearest(-4.6f)).isEqualTo(7);
        assertThat(Iq4Fit.nearest(7f)).isEqualTo(9); // 6 from 1 and from 13: the upper index
        assertThat(Iq4Fit.nearest(6.99f)).isEqualTo(8);
    }

    @Test
    void aBlockOnTheGridRoundTripsExactly() {
        // Values that are a power-of-two scale times grid points come back unchanged: the search
        // finds that scale (any other loses weighted error) and every value sits on a grid point.
        float scale = 0x1p-7f;
        float[] x = new float[256];
        SplittableRandom rnd = new SplittableRandom(3);
        for (int i = 0; i < x.length; i++) x[i] = scale * Iq4Fit.VALUES[i % 32 == 0 ? 0 : rnd.nextInt(16)];
        float[] y = Codecs.of(GgmlType.IQ4_NL).dequantize(Codecs.of(GgmlType.IQ4_NL).quantize(x));
        assertThat(y).containsExactly(x);
    }

    @Test
    void xsWritesTheSixBitScalesWhereTheDecoderReadsThem() {
        // Sub-blocks of very different magnitude: each gets its own 6-bit scale relative to d.
        float[] x = new float[256];
        SplittableRandom rnd = new SplittableRandom(5);
        for (int ib = 0; ib < 8; ib++) {
            for (int j = 0; j < 32; j++) x[32 * ib + j] = (float) (rnd.nextGaussian() * (ib + 1) * (ib % 2 == 0 ? 1 : -0.5));
        }
        byte[] q = Codecs.of(GgmlType.IQ4_XS).quantize(x);
        float[] y = Codecs.of(GgmlType.IQ4_XS).dequantize(q);
        for (int ib = 0; ib < 8; ib++) {
            float[] xs = java.util.Arrays.copyOfRange(x, 32 * ib, 32 * ib + 32), ys = java.util.Arrays.copyOfRange(y, 32 * ib, 32 * ib + 32);
            assertThat(QuantErrorTest.relativeRmse(xs, ys)).as("sub-block %d", ib).isLessThan(0.2);
        }
        // The largest sub-block scale maps to l = −32 (d = −max/32), so its 6-bit code is 0.
        MemorySegment s = MemorySegment.ofArray(q);
        int sh = Le.i16(s, 2) & 0xFFFF;
        int[] ls = new int[8];
        for (int ib = 0; ib < 8; ib++) ls[ib] = ((Le.u8(s, 4 + ib / 2) >>> (4 * (ib % 2))) & 0xF) | (((sh >>> (2 * ib)) & 3) << 4);
        assertThat(ls).contains(0);
    }
}
