package dgr.gguf.codec;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.gguf.GgmlType;
import dgr.gguf.TestResources;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The quantizers reproduce llama.cpp's quantize_row_*_ref byte for byte: hand-computed blocks
 * that pin ggml's rounding rules, and the conformance samples (written by llama-quantize, which
 * calls the _ref functions when no importance matrix is given) as fixed points.
 */
class ReferenceQuantizerTest {

    /**
     * The reference quantizers for these types are idempotent on their own output, so
     * re-quantizing a llama-quantize sample's values must give back llama-quantize's bytes.
     * That holds for every block of the samples (measured); for the legacy types the ggml rule
     * makes it hold in general: the extreme value maps to the extreme level exactly.
     */
    @ParameterizedTest
    @EnumSource(names = {"F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q4_K", "Q5_K"})
    void requantizingLlamaQuantizeOutputReproducesItsBytes(GgmlType type) {
        byte[] bin = TestResources.bytes("codecs/" + type + ".bin");
        BlockCodec codec = Codecs.of(type);

        byte[] again = codec.quantize(codec.dequantize(bin));

        assertThat(again).isEqualTo(bin);
    }

    /**
     * Q6_K's fit may pick the opposite sign for the block scale (negated int8 scales, mirrored
     * levels): other bytes, same values. One of the four sample blocks does that; the values
     * must still come back exactly.
     */
    @Test
    void requantizingQ6_KSampleReproducesItsValues() {
        BlockCodec codec = Codecs.of(GgmlType.Q6_K);
        float[] values = codec.dequantize(TestResources.bytes("codecs/Q6_K.bin"));

        float[] again = codec.dequantize(codec.quantize(values));

        assertThat(CodecConformanceTest.bits(again)).containsExactly(CodecConformanceTest.bits(values));
    }

    /**
     * Q3_K's reference fit is not idempotent: a 16-value group whose largest magnitude sits on
     * the +3 level gets mapped to −4 first and ends on a different scale (blocks of the sample
     * do this). What still must hold is that re-quantizing stays within Q3_K's error budget.
     */
    @Test
    void requantizingQ3_KSampleStaysWithinItsErrorBudget() {
        BlockCodec codec = Codecs.of(GgmlType.Q3_K);
        float[] values = codec.dequantize(TestResources.bytes("codecs/Q3_K.bin"));

        float[] again = codec.dequantize(codec.quantize(values));

        assertThat(QuantErrorTest.relativeRmse(values, again)).isLessThan(0.06);
    }

    @Test
    void q4_0MapsLargestMagnitudeToMinus8AndTruncatesAfterAddingEightAndAHalf() {
        float[] x = new float[32];
        x[0] = 4f; // largest magnitude, positive: d = 4 / -8 = -0.5, id = -2
        float[] rest = {0.25f, -0.25f, -3.75f, 1.0f, -0.4f, 3.9f, 0f, 2.2f};
        System.arraycopy(rest, 0, x, 1, rest.length);
        x[16] = -3.5f;
        x[17] = 0.26f;
        byte[] got = Codecs.of(GgmlType.Q4_0).quantize(x);

        // q = min(15, (int8)(x·id + 8.5)): 4→0, 0.25→8, -0.25→9, -3.75→16→15, 1→6, -0.4→9 (9.3),
        // 3.9→0 (0.7), 0→8, 2.2→4 (4.1); -3.5→15 (15.5); 0.26→7 (7.98); the zeros→8.
        int[] lo = {0, 8, 9, 15, 6, 9, 0, 8, 4, 8, 8, 8, 8, 8, 8, 8};
        int[] hi = {15, 7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8};
        byte[] expected = new byte[18];
        expected[0] = 0x00;
        expected[1] = (byte) 0xB8; // f16 -0.5
        for (int j = 0; j < 16; j++) expected[2 + j] = (byte) (lo[j] | hi[j] << 4);
        assertThat(got).isEqualTo(expected);
    }

    @Test
    void q4_0OfAllZerosHasScaleMinusZeroAndLevelEight() {
        // ggml computes d = 0 / -8 = -0.0 and stores it: f16 0x8000, every nibble 8.
        byte[] got = Codecs.of(GgmlType.Q4_0).quantize(new float[32]);
        byte[] expected = new byte[18];
        expected[1] = (byte) 0x80;
        Arrays.fill(expected, 2, 18, (byte) 0x88);
        assertThat(got).isEqualTo(expected);
        for (float v : Codecs.of(GgmlType.Q4_0).dequantize(got)) assertThat(v).isZero(); // -0.0, as in ggml
    }

    @Test
    void q8_0RoundsHalvesAwayFromZeroLikeCRoundf() {
        float[] x = new float[32];
        float[] v = {127f, -63.5f, 0.5f, -0.5f, 1.5f, -2.5f, 2.4999998f, -126.5f};
        System.arraycopy(v, 0, x, 0, v.length);
        byte[] got = Codecs.of(GgmlType.Q8_0).quantize(x);

        byte[] expected = new byte[34];
        expected[0] = 0x00;
        expected[1] = 0x3C; // d = 127 / 127 = 1.0
        int[] q = {127, -64, 1, -1, 2, -3, 2, -127};
        for (int j = 0; j < q.length; j++) expected[2 + j] = (byte) q[j];
        assertThat(got).isEqualTo(expected);
    }

    @Test
    void q4_1StoresMinAndRangeOverFifteen() {
        float[] x = new float[32];
        Arrays.fill(x, 3f);
        x[0] = -1f;  // min
        x[1] = 14f;  // max: d = 15 / 15 = 1
        x[2] = 0.49f; // (0.49 + 1) + 0.5 = 1.99 → 1
        x[3] = 0.5f;  // 2.0 → 2
        x[16] = 13.6f; // 15.1 → 15
        byte[] got = Codecs.of(GgmlType.Q4_1).quantize(x);

        byte[] expected = new byte[20];
        expected[1] = 0x3C;          // d = 1.0
        expected[3] = (byte) 0xBC;   // m = -1.0
        int[] lo = {0, 15, 1, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4};
        int[] hi = {15, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4};
        for (int j = 0; j < 16; j++) expected[4 + j] = (byte) (lo[j] | hi[j] << 4);
        assertThat(got).isEqualTo(expected);
    }

    @Test
    void q5_0PutsTheFifthBitOfValueJIntoQhBitJ() {
        float[] x = new float[32];
        x[0] = -16f; // largest magnitude, negative: d = 1, levels x + 16
        for (int j = 1; j < 32; j++) x[j] = j - 16;  // x[j] → level j
        byte[] got = Codecs.of(GgmlType.Q5_0).quantize(x);

        byte[] expected = new byte[22];
        expected[1] = 0x3C;
        int qh = 0;
        for (int j = 0; j < 32; j++) if ((j & 0x10) != 0) qh |= 1 << j;
        expected[2] = (byte) qh;
        expected[3] = (byte) (qh >>> 8);
        expected[4] = (byte) (qh >>> 16);
        expected[5] = (byte) (qh >>> 24);
        for (int j = 0; j < 16; j++) expected[6 + j] = (byte) ((j & 0xf) | (((j + 16) & 0xf) << 4));
        assertThat(got).isEqualTo(expected);
        assertThat(Codecs.of(GgmlType.Q5_0).dequantize(got)).containsExactly(x);
    }

    @Test
    void q5_1CoversMinToMaxInThirtyOneSteps() {
        float[] x = new float[32];
        for (int j = 0; j < 32; j++) x[j] = 2f * (31 - j) + 10f; // min 10, max 72: d = 2
        byte[] got = Codecs.of(GgmlType.Q5_1).quantize(x);

        byte[] expected = new byte[24];
        expected[1] = 0x40;                            // d = 2.0
        expected[2] = 0x00; expected[3] = 0x49;        // m = 10.0
        int qh = 0;
        for (int j = 0; j < 32; j++) if (((31 - j) & 0x10) != 0) qh |= 1 << j;
        for (int k = 0; k < 4; k++) expected[4 + k] = (byte) (qh >>> (8 * k));
        for (int j = 0; j < 16; j++) expected[8 + j] = (byte) (((31 - j) & 0xf) | (((15 - j) & 0xf) << 4));
        assertThat(got).isEqualTo(expected);
        assertThat(Codecs.of(GgmlType.Q5_1).dequantize(got)).containsExactly(x);
    }

    @Test
    void q8_1StoresScaleTimesSumOfQuants() {
        float[] x = new float[32];
        x[0] = -127f;
        x[5] = 10f;
        x[20] = 3.5f; // roundf → 4
        byte[] got = Codecs.of(GgmlType.Q8_1).quantize(x);

        assertThat(got[1]).isEqualTo((byte) 0x3C); // d = 1
        // s = fp16(sum · d) = fp16(-127 + 10 + 4) = -113 = 0xD710
        assertThat(got[2]).isEqualTo((byte) 0x10);
        assertThat(got[3]).isEqualTo((byte) 0xD7);
        assertThat(got[4]).isEqualTo((byte) -127);
        assertThat(got[4 + 5]).isEqualTo((byte) 10);
        assertThat(got[4 + 20]).isEqualTo((byte) 4);
    }

    @Test
    void f16RoundsToNearestEvenAndOverflowsToInfinity() {
        float tieDown = 1f + 0x1p-11f;     // halfway between 1 and 1+2^-10: even is 1.0
        float tieUp = 1f + 3 * 0x1p-11f;   // halfway between 1+2^-10 and 1+2^-9: even is 1+2^-9
        float[] x = {1f, tieDown, tieUp, 65520f, -0f, 0x1p-24f};
        byte[] got = Codecs.of(GgmlType.F16).quantize(x);
        assertThat(got).containsExactly(
                0x00, 0x3C,
                0x00, 0x3C,
                0x02, 0x3C,
                0x00, 0x7C,
                0x00, (byte) 0x80,
                0x01, 0x00);
    }

    @Test
    void bf16RoundsToNearestEvenAndQuietsNaNLikeGgml() {
        float[] x = {
                1f,
                Float.intBitsToFloat(0x3F808000), // tie, kept half even (0x3F80)
                Float.intBitsToFloat(0x3F818000), // tie, kept half odd: rounds up to 0x3F82
                Float.intBitsToFloat(0x3F808001), // above the tie: 0x3F81
                Float.intBitsToFloat(0x7F800001), // signalling NaN: quieted to 0x7FC0
                Float.intBitsToFloat(0xFF800001), // negative NaN: 0xFFC0
                Float.MAX_VALUE,                  // rounds to +inf, as ggml does
                Float.NEGATIVE_INFINITY};
        byte[] got = Codecs.of(GgmlType.BF16).quantize(x);
        assertThat(got).containsExactly(
                (byte) 0x80, 0x3F,
                (byte) 0x80, 0x3F,
                (byte) 0x82, 0x3F,
                (byte) 0x81, 0x3F,
                (byte) 0xC0, 0x7F,
                (byte) 0xC0, (byte) 0xFF,
                (byte) 0x80, 0x7F,
                (byte) 0x80, (byte) 0xFF);
    }

    @Test
    void q8_KMapsLargestMagnitudeToMinus127AndStoresGroupSums() {
        float[] x = new float[256];
        x[0] = 127f;  // positive extreme: iscale = -1, so d = -1 and every level is negated
        x[1] = 2.5f;  // nearest_int rounds half to even: -2.5 → -2
        x[2] = 3.5f;  // -3.5 → -4
        x[17] = -5f;  // → 5, in the second group of 16
        byte[] got = Codecs.of(GgmlType.Q8_K).quantize(x);

        var seg = java.lang.foreign.MemorySegment.ofArray(got);
        var f32 = java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
        var i16 = java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThat(seg.get(f32, 0)).isEqualTo(-1f);
        assertThat(got[4]).isEqualTo((byte) -127);
        assertThat(got[5]).isEqualTo((byte) -2);
        assertThat(got[6]).isEqualTo((byte) -4);
        assertThat(got[4 + 17]).isEqualTo((byte) 5);
        assertThat(seg.get(i16, 260)).isEqualTo((short) (-127 - 2 - 4));
        assertThat(seg.get(i16, 262)).isEqualTo((short) 5);
        for (int g = 2; g < 16; g++) assertThat(seg.get(i16, 260 + 2 * g)).isZero();
    }
}
