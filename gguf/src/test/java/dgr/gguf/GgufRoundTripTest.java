package dgr.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** GgufWriter → GgufFile keeps every metadata value, its exact type and every tensor byte. */
class GgufRoundTripTest {
    @TempDir Path dir;

    /** One value of every GGUF type, boxed as the reader returns it (see MetaValue). */
    static Map<String, MetaValue> everyValueType() {
        Map<String, MetaValue> m = new LinkedHashMap<>();
        m.put("t.uint8", new MetaValue(GgufValueType.UINT8, 200));
        m.put("t.int8", new MetaValue(GgufValueType.INT8, (byte) -5));
        m.put("t.uint16", new MetaValue(GgufValueType.UINT16, 65000));
        m.put("t.int16", new MetaValue(GgufValueType.INT16, (short) -30000));
        m.put("t.uint32", MetaValue.u32(4_000_000_000L));
        m.put("t.int32", MetaValue.i32(-7));
        m.put("t.float32", MetaValue.f32(-0f));
        m.put("t.bool.true", MetaValue.bool(true));
        m.put("t.bool.false", MetaValue.bool(false));
        m.put("t.string", MetaValue.of("héllo wörld ✓ 🦙 日本語"));
        m.put("t.string.empty", MetaValue.of(""));
        m.put("t.uint64", MetaValue.u64(-1L)); // 2^64 − 1 as raw bits
        m.put("t.int64", new MetaValue(GgufValueType.INT64, Long.MIN_VALUE));
        m.put("t.float64", new MetaValue(GgufValueType.FLOAT64, Math.PI));
        m.put("t.array.uint8", MetaValue.array(GgufValueType.UINT8, List.of(0, 127, 255)));
        m.put("t.array.float32", MetaValue.array(GgufValueType.FLOAT32, List.of(1.5f, Float.NaN, -3e-38f)));
        m.put("t.array.bool", MetaValue.array(GgufValueType.BOOL, List.of(true, false, true)));
        m.put("t.array.string", MetaValue.array(GgufValueType.STRING, List.of("Ġthe", "", "🦙\u0000x")));
        m.put("t.array.empty", MetaValue.array(GgufValueType.INT64, List.of()));
        m.put("t.array.nested", MetaValue.array(GgufValueType.ARRAY, List.of(
                new MetaValue.MetaArray(GgufValueType.INT32, List.of(1, -2, 3)),
                new MetaValue.MetaArray(GgufValueType.STRING, List.of("ä", "ß")),
                new MetaValue.MetaArray(GgufValueType.ARRAY, List.of(
                        new MetaValue.MetaArray(GgufValueType.UINT64, List.of(42L)))),
                new MetaValue.MetaArray(GgufValueType.FLOAT64, List.of()))));
        m.put("general.alignment", MetaValue.u32(64));
        return m;
    }

    @Test
    void everyMetadataValueTypeAndNestedArraySurvivesInOrder() {
        Map<String, MetaValue> written = everyValueType();
        GgufWriter w = new GgufWriter().putAll(written);
        Path p = dir.resolve("meta.gguf");
        w.write(p);

        try (GgufFile f = GgufFile.open(p)) {
            assertThat(f.version()).isEqualTo(3);
            assertThat(f.tensors()).isEmpty();
            assertThat(new ArrayList<>(f.metadata().asMap().entrySet()))
                    .containsExactlyElementsOf(written.entrySet());
            assertThat(f.metadata().getString("t.string")).isEqualTo("héllo wörld ✓ 🦙 日本語");
            assertThat(f.metadata().getLong("t.uint32")).isEqualTo(4_000_000_000L);
            assertThat(Float.floatToRawIntBits((Float) f.metadata().asMap().get("t.float32").value()))
                    .isEqualTo(0x80000000);
        }
    }

    @Test
    void everyTensorTypeKeepsShapeAlignmentAndBytesWithCustomAlignment() throws IOException {
        SplittableRandom rnd = new SplittableRandom(7);
        GgufWriter w = new GgufWriter().put("general.alignment", MetaValue.u32(64));
        Map<String, byte[]> data = new LinkedHashMap<>();
        Map<String, long[]> shapes = new LinkedHashMap<>();
        for (GgmlType t : GgmlType.values()) {
            // 3-D, odd row counts, so tensor sizes are rarely multiples of 64 and padding shows.
            long[] shape = {t.blockValues * 3L, 5, t.ordinal() % 3 + 1};
            byte[] bytes = new byte[Math.toIntExact(t.bytesFor(shape[0] * shape[1] * shape[2]))];
            rnd.nextBytes(bytes);
            String name = "tensor." + t.name().toLowerCase();
            w.tensor(name, t, shape, bytes);
            data.put(name, bytes);
            shapes.put(name, shape);
        }
        w.tensor("four.dims", GgmlType.Q8_0, new long[] {32, 2, 3, 2}, new byte[12 * 34]);
        Path p = dir.resolve("tensors.gguf");
        w.write(p);

        try (GgufFile f = GgufFile.open(p)) {
            assertThat(f.alignment()).isEqualTo(64);
            assertThat(f.dataOffset() % 64).isZero();
            assertThat(f.tensors()).hasSize(GgmlType.values().length + 1);
            for (GgmlType t : GgmlType.values()) {
                TensorInfo ti = f.tensor("tensor." + t.name().toLowerCase());
                assertThat(ti.type()).isEqualTo(t);
                assertThat(ti.shape()).containsExactly(shapes.get(ti.name()));
                assertThat(ti.offset() % 64).as(ti.name()).isZero();
                assertThat(ti.data().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).isEqualTo(data.get(ti.name()));
                assertThat(ti.data().isReadOnly()).isTrue();
            }
            assertThat(f.tensor("four.dims").shape()).containsExactly(32, 2, 3, 2);
            assertThat(f.tensor("four.dims").rows()).isEqualTo(12);
            assertThat(f.fileSize() % 64).isZero();
        }
    }

    @Test
    void rewritingAWrittenFileIsByteIdentical() throws IOException {
        GgufWriter w = new GgufWriter().putAll(everyValueType());
        byte[] q = new byte[34 * 3];
        new SplittableRandom(3).nextBytes(q);
        w.tensor("a", GgmlType.Q8_0, new long[] {96}, q);
        w.tensor("b", GgmlType.F32, new long[] {3, 1}, new byte[12]);
        Path p = dir.resolve("orig.gguf");
        w.write(p);
        assertThat(Files.mismatch(p, rewrite(p, dir.resolve("copy.gguf")))).isEqualTo(-1L);
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama-tiny-Q4_0.gguf", "ggml-vocab-gpt-2.gguf"})
    void rewritingLlamaCppFilesIsByteIdentical(String fixture) throws IOException {
        Path p = TestResources.copyTo(dir, fixture);
        assertThat(Files.mismatch(p, rewrite(p, dir.resolve("copy.gguf")))).isEqualTo(-1L);
    }

    /** Writes a read file's metadata and tensors again, in file order. */
    static Path rewrite(Path src, Path dst) {
        try (GgufFile f = GgufFile.open(src)) {
            GgufWriter w = new GgufWriter().putAll(f.metadata().asMap());
            for (TensorInfo t : f.tensors()) w.tensor(t.name(), t.type(), t.shape(), out -> out.put(t.data().asByteBuffer()));
            w.write(dst);
        }
        return dst;
    }

    @Test
    void writerRefusesAnAlignmentNoReaderAccepts() {
        assertThatThrownBy(() -> new GgufWriter().put("general.alignment", MetaValue.u32(48)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("general.alignment must be a power of two")
                .hasMessageContaining("48");
        assertThatThrownBy(() -> new GgufWriter().put("general.alignment", MetaValue.u32(0)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void writerRefusesDuplicateTensorNames() {
        GgufWriter w = new GgufWriter().tensor("x", GgmlType.F32, new long[] {1}, new byte[4]);
        assertThatThrownBy(() -> w.tensor("x", GgmlType.F32, new long[] {1}, new byte[4]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tensor 'x' added twice");
    }

    @Test
    void aTensorSourceWithTheWrongByteCountLeavesNoFileBehind() throws IOException {
        Path p = dir.resolve("bad.gguf");
        GgufWriter w = new GgufWriter().tensor("short", GgmlType.Q4_0, new long[] {64}, new byte[35]);
        assertThatThrownBy(() -> w.write(p))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("tensor 'short' produced 35 bytes, expected 36");
        try (var files = Files.list(dir)) {
            assertThat(files).as("neither the file nor its temporary").isEmpty();
        }
    }
}
