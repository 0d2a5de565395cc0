package dgr.gguf.codec;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.gguf.GgmlType;
import dgr.gguf.TestResources;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The IQ1/IQ2/IQ3 types. Decoding equals ggml's own {@code dequantize_row_*} bit for bit on
 * samples ggml made ({@code tools/iq-grids/IqVectors.java}: random blocks — every index, sign
 * pattern and scale code, a negative, a subnormal scale — and rows ggml's quantizer wrote); the
 * encoder's blocks decode close to their input and are stable under a second pass.
 */
class IqCodecTest {
    private static final String IQ = "IQ1_S|IQ1_M|IQ2_XXS|IQ2_XS|IQ2_S|IQ3_XXS|IQ3_S";

    @ParameterizedTest
    @EnumSource(names = {"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S"})
    void dequantizeIsBitIdenticalToGgml(GgmlType type) {
        byte[] bin = TestResources.resource("ggml/" + type + ".bin");
        float[] expected = TestResources.floats(TestResources.resource("ggml/" + type + ".f32"));
        assertThat(expected).hasSize(8 * 256);
        assertThat((long) bin.length).isEqualTo(type.bytesFor(8 * 256));

        assertThat(CodecConformanceTest.bits(Codecs.of(type).dequantize(bin))).containsExactly(CodecConformanceTest.bits(expected));
    }

    @Test
    void codebooksAreTheExtractedOnes() throws Exception {
        // tools/iq-grids/extract.sh printed this for node-llama-cpp 3.21.1's libggml-base.so.
        byte[] sha = MessageDigest.getInstance("SHA-256").digest(IqGrid.dataForTests());
        assertThat(HexFormat.of().formatHex(sha)).isEqualTo("73200ae7c65920e044fd65660b5c6ef66d2bdd99c3e9897a1e32eadd1d7d21f2");
        // ggml-common.h's first entries, and the implied sign of ksigns_iq2xs.
        assertThat(IqGrid.IQ2_XXS.value(1, 0)).isEqualTo(0x2b);
        assertThat(IqGrid.IQ3_XXS.value(1, 0)).isEqualTo(0x14);
        assertThat(IqGrid.IQ1.value(0, 0)).isEqualTo(-1);
        assertThat(IqGrid.ksigns(1)).isEqualTo(129);
        assertThat(IqGrid.ksigns(3)).isEqualTo(3);
    }

    @ParameterizedTest
    @EnumSource(names = {"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S"})
    void encodedBlocksDecodeCloseToTheirInput(GgmlType type) {
        SplittableRandom rnd = new SplittableRandom(7);
        float[] x = new float[4 * 256];
        for (int i = 0; i < x.length; i++) x[i] = (float) (rnd.nextGaussian() * (1 + i / 256));
        BlockCodec c = Codecs.of(type);
        byte[] q = c.quantize(x);
        float[] y = c.dequantize(q);
        // Bounds: what these bit budgets give on Gaussian data (ggml's quantizers: IQ1_S ≈ 0.45,
        // IQ2_XXS ≈ 0.3, IQ3_XXS ≈ 0.18 relative RMS error), with some room for a simpler search.
        double bound = switch (type) {
            case IQ1_S, IQ1_M -> 0.6;
            case IQ2_XXS, IQ2_XS, IQ2_S -> 0.45;
            default -> 0.3;
        };
        assertThat(QuantErrorTest.relativeRmse(x, y)).as(type.toString()).isLessThan(bound);
        // Values on the decoded grid encode to the same values again.
        assertThat(c.dequantize(c.quantize(y))).as(type + " twice").containsExactly(y);
    }

    @ParameterizedTest
    @EnumSource(names = {"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S"})
    void zeroBlocksStayZero(GgmlType type) {
        float[] y = Codecs.of(type).dequantize(Codecs.of(type).quantize(new float[256]));
        for (float v : y) assertThat(Math.abs(v)).isZero();
    }
}
