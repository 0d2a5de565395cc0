package dgr.gguf.codec;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.gguf.GgmlType;
import dgr.gguf.TestResources;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Dequantization is bit-exact against the shared conformance samples (4 rows × 256 values of a
 * llama-tiny tensor per type, decoded by gguf-py and ggml's to_float, which agree bit for bit).
 */
class CodecConformanceTest {

    @ParameterizedTest
    @EnumSource(names = {"F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"})
    void dequantizeIsBitIdenticalToGgml(GgmlType type) {
        byte[] bin = TestResources.bytes("codecs/" + type + ".bin");
        float[] expected = TestResources.floats("codecs/" + type + ".f32");
        assertThat(expected).hasSize(1024);
        assertThat((long) bin.length).isEqualTo(type.bytesFor(1024));

        float[] got = Codecs.of(type).dequantize(bin);

        assertThat(bits(got)).containsExactly(bits(expected));
    }

    @ParameterizedTest
    @EnumSource(names = {"F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"})
    void dequantizeHonoursSourceAndDestinationOffsets(GgmlType type) {
        byte[] bin = TestResources.bytes("codecs/" + type + ".bin");
        float[] expected = TestResources.floats("codecs/" + type + ".f32");
        // The rows sit 3 bytes into a bigger segment (unaligned), decoded row by row in reverse
        // order into a destination with a 5-float lead: every offset path is exercised.
        byte[] shifted = new byte[bin.length + 3];
        System.arraycopy(bin, 0, shifted, 3, bin.length);
        MemorySegment seg = MemorySegment.ofArray(shifted);
        long rowBytes = type.bytesFor(256);
        float[] dst = new float[5 + 1024];
        for (int row = 3; row >= 0; row--) {
            Codecs.of(type).dequantize(seg, 3 + row * rowBytes, dst, 5 + row * 256, 256);
        }
        float[] got = java.util.Arrays.copyOfRange(dst, 5, dst.length);
        assertThat(bits(got)).containsExactly(bits(expected));
        assertThat(dst[0]).isZero();
    }

    static int[] bits(float[] f) {
        int[] b = new int[f.length];
        for (int i = 0; i < f.length; i++) b[i] = Float.floatToRawIntBits(f[i]);
        return b;
    }
}
