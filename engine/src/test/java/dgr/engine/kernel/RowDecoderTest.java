package dgr.engine.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.gguf.GgmlType;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RowDecoderTest {

    static byte[] resource(String name) throws IOException {
        try (InputStream in = RowDecoderTest.class.getResourceAsStream("/conformance/" + name)) {
            assertThat(in).as(name).isNotNull();
            return in.readAllBytes();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"})
    void decodesEveryTypeBitIdenticalToGgml(String typeName) throws IOException {
        GgmlType type = GgmlType.parse(typeName);
        byte[] raw = resource("codecs/" + typeName + ".bin");
        ByteBuffer ref = ByteBuffer.wrap(resource("codecs/" + typeName + ".f32")).order(ByteOrder.LITTLE_ENDIAN);
        float[] got = new float[1024];
        RowDecoder.decode(type, MemorySegment.ofArray(raw), 0, got, 0, 1024);
        for (int i = 0; i < 1024; i++) {
            float want = ref.getFloat(4 * i);
            assertThat(Float.floatToRawIntBits(got[i])).as("%s value %d: %s vs %s", typeName, i, got[i], want)
                    .isEqualTo(Float.floatToRawIntBits(want));
        }
    }
}
