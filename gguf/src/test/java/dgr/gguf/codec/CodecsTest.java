package dgr.gguf.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.gguf.GgmlType;
import dgr.gguf.GgufFormatException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class CodecsTest {

    @ParameterizedTest
    @EnumSource(names = {"F32", "F16", "BF16", "Q8_0", "Q8_1", "Q4_0", "Q4_1", "Q5_0", "Q5_1",
            "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ4_NL", "IQ4_XS"})
    void everyWeightTypeHasACodecOfThatType(GgmlType type) {
        assertThat(Codecs.has(type)).isTrue();
        assertThat(Codecs.of(type).type()).isEqualTo(type);
    }

    @ParameterizedTest
    @EnumSource(names = {"I8", "I16", "I32", "I64", "F64"})
    void typesWithoutACodecGetAnErrorNamingTheType(GgmlType type) {
        assertThat(Codecs.has(type)).isFalse();
        assertThatThrownBy(() -> Codecs.of(type))
                .isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("ggml type " + type + " (id " + type.id + ")");
    }

    @Test
    void f32RoundTripsEveryBitPattern() {
        float[] x = {0f, -0f, 1.5f, Float.MIN_VALUE, Float.MAX_VALUE, Float.NEGATIVE_INFINITY,
                Float.intBitsToFloat(0x7fc00001)};
        BlockCodec c = Codecs.of(GgmlType.F32);
        assertThat(CodecConformanceTest.bits(c.dequantize(c.quantize(x)))).containsExactly(CodecConformanceTest.bits(x));
    }

    @Test
    void partialBlocksAreRejectedBeforeAnythingIsWritten() {
        byte[] dst = new byte[64];
        assertThatThrownBy(() -> Codecs.of(GgmlType.Q4_0).quantize(new float[48], 0, 48, MemorySegment.ofArray(dst), 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Q4_0 codes whole blocks of 32 values; n = 48");
        assertThat(dst).containsOnly(0);
        assertThatThrownBy(() -> Codecs.of(GgmlType.Q6_K).dequantize(MemorySegment.ofArray(new byte[210]), 0, new float[128], 0, 128))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Q6_K codes whole blocks of 256 values; n = 128");
    }

    @Test
    void rangesOutsideTheSegmentOrArrayAreRejected() {
        BlockCodec c = Codecs.of(GgmlType.Q8_0);
        MemorySegment oneBlock = MemorySegment.ofArray(new byte[34]);
        assertThatThrownBy(() -> c.dequantize(oneBlock, 1, new float[32], 0, 32))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> c.dequantize(oneBlock, 0, new float[40], 10, 32))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> c.quantize(new float[32], 0, 32, oneBlock.asReadOnly(), 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("read-only");
    }

    @Test
    void quantizeWritesOnlyItsOwnBlocksOfAnOffHeapSegment() {
        float[] x = new float[64];
        for (int i = 0; i < x.length; i++) x[i] = (i % 7) - 3;
        BlockCodec c = Codecs.of(GgmlType.Q5_1);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(5 + 48 + 5);
            seg.fill((byte) 0x5a);
            c.quantize(x, 0, 64, seg, 5);
            assertThat(seg.asSlice(0, 5).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).containsOnly(0x5a);
            assertThat(seg.asSlice(53, 5).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).containsOnly(0x5a);
            assertThat(seg.asSlice(5, 48).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).isEqualTo(c.quantize(x));
        }
    }
}
