package dgr.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Corrupt, truncated, hostile or unsupported input always ends in a GgufFormatException whose
 * message says what is wrong: never an OutOfMemoryError, an IndexOutOfBoundsException or a
 * half-opened file. Random cases use fixed seeds so a failure reproduces.
 */
class CorruptInputTest {
    @TempDir Path dir;
    private byte[] valid;
    /** First byte past the last tensor's data: a cut at or after it loses only padding. */
    private long validEnd;
    private long headerEnd;

    @BeforeEach
    void writeAValidFile() throws IOException {
        GgufWriter w = new GgufWriter()
                .put("general.architecture", MetaValue.of("llama"))
                .put("general.name", MetaValue.of("tïny 🦙"))
                .put("llama.block_count", MetaValue.u32(2))
                .put("llama.rope.freq_base", MetaValue.f32(10000f))
                .put("tokenizer.ggml.tokens", MetaValue.array(GgufValueType.STRING, List.of("a", "b", "Ġc", "<s>")))
                .put("tokenizer.ggml.scores", MetaValue.array(GgufValueType.FLOAT32, List.of(0f, -1f, -2f, -3f)))
                .put("x.nested", MetaValue.array(GgufValueType.ARRAY, List.of(
                        new MetaValue.MetaArray(GgufValueType.INT32, List.of(1, 2)),
                        new MetaValue.MetaArray(GgufValueType.STRING, List.of("z")))))
                .put("x.flag", MetaValue.bool(true));
        byte[] q = new byte[18 * 8];
        new SplittableRandom(1).nextBytes(q);
        w.tensor("token_embd.weight", GgmlType.Q4_0, new long[] {64, 4}, q);
        w.tensor("output_norm.weight", GgmlType.F32, new long[] {5}, new byte[20]);
        w.tensor("output.weight", GgmlType.Q8_0, new long[] {32, 3}, new byte[34 * 3]);
        Path p = dir.resolve("valid.gguf");
        w.write(p);
        valid = Files.readAllBytes(p);
        try (GgufFile f = GgufFile.open(p)) {
            headerEnd = f.dataOffset();
            validEnd = f.tensors().stream().mapToLong(t -> f.dataOffset() + t.offset() + t.byteSize()).max().orElseThrow();
        }
    }

    // ---- property tests -------------------------------------------------------------------

    @Test
    void truncationAtAnyPointBeforeTheLastTensorByteIsAFormatError() {
        Path p = dir.resolve("cut.gguf");
        SplittableRandom rnd = new SplittableRandom(7);
        // Every cut in the fixed header and the first key, then random cuts anywhere, including
        // inside the trailing padding (which must still open).
        java.util.stream.IntStream cuts = java.util.stream.IntStream.concat(
                java.util.stream.IntStream.range(0, 96), rnd.ints(250, 96, valid.length));
        int paddingCuts = 0;
        for (int cut : cuts.toArray()) {
            write(p, Arrays.copyOf(valid, cut));
            if (cut >= validEnd) {
                // Only trailing padding is gone: still a complete file.
                paddingCuts++;
                try (GgufFile f = GgufFile.open(p)) {
                    assertThat(f.tensors()).hasSize(3);
                }
            } else {
                final int c = cut;
                assertThatThrownBy(() -> GgufFile.open(p).close())
                        .as("cut at %d", c)
                        .isInstanceOf(GgufFormatException.class)
                        .hasMessageContaining(p.toString())
                        .message().containsAnyOf("truncated", "absurd", "runs past the end");
            }
        }
        assertThat(validEnd).isLessThan(valid.length);
        assertThat(paddingCuts).isPositive();
    }

    @Test
    void truncatedLlamaCppModelHeaderIsAFormatError() throws IOException {
        byte[] model = Files.readAllBytes(TestResources.copyTo(dir, "llama-tiny-Q4_0.gguf"));
        SplittableRandom rnd = new SplittableRandom(42);
        Path p = dir.resolve("cut-model.gguf");
        for (int i = 0; i < 120; i++) {
            int cut = rnd.nextInt(40_000); // header is 27,808 bytes; beyond it tensors run past the end
            write(p, Arrays.copyOf(model, cut));
            assertThatThrownBy(() -> GgufFile.open(p).close())
                    .as("cut at %d", cut)
                    .isInstanceOf(GgufFormatException.class)
                    .message().containsAnyOf("truncated", "absurd", "runs past the end");
        }
    }

    @Test
    void flippedHeaderBytesEitherStillParseOrFailWithAFormatError() {
        SplittableRandom rnd = new SplittableRandom(2024);
        Path p = dir.resolve("flip.gguf");
        int parsed = 0, rejected = 0;
        for (int i = 0; i < 400; i++) {
            byte[] b = valid.clone();
            int flips = 1 + rnd.nextInt(3);
            for (int k = 0; k < flips; k++) b[rnd.nextInt((int) headerEnd)] ^= (byte) (1 + rnd.nextInt(255));
            write(p, b);
            try (GgufFile f = GgufFile.open(p)) {
                parsed++; // a flip inside a string or float value leaves a well-formed file
                for (TensorInfo t : f.tensors()) assertThat(t.data().byteSize()).isEqualTo(t.byteSize());
            } catch (GgufFormatException e) {
                rejected++;
                assertThat(e.getMessage()).contains(p.toString());
            } catch (Throwable t) {
                fail("case " + i + ": expected GgufFormatException, got " + t, t);
            }
        }
        // Both outcomes must really occur, or the test is not exercising the parser.
        assertThat(parsed).isPositive();
        assertThat(rejected).isGreaterThan(200);
    }

    @Test
    void randomGarbageAfterAValidMagicIsAFormatError() {
        SplittableRandom rnd = new SplittableRandom(99);
        Path p = dir.resolve("garbage.gguf");
        for (int i = 0; i < 200; i++) {
            byte[] b = new byte[8 + rnd.nextInt(2000)];
            rnd.nextBytes(b);
            System.arraycopy(valid, 0, b, 0, 8); // magic + version 3, then noise
            write(p, b);
            try (GgufFile f = GgufFile.open(p)) {
                assertThat(f.version()).isEqualTo(3); // astronomically unlikely, but not wrong
            } catch (GgufFormatException e) {
                assertThat(e.getMessage()).isNotBlank();
            } catch (Throwable t) {
                fail("case " + i + ": expected GgufFormatException, got " + t, t);
            }
        }
    }

    // ---- targeted cases ---------------------------------------------------------------------

    @Test
    void emptyFile() {
        expectError(new byte[0], "truncated: reading magic needs 4 bytes, 0 left");
    }

    @Test
    void missingFile() {
        assertThatThrownBy(() -> GgufFile.open(dir.resolve("nope.gguf")))
                .isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("nope.gguf: no such file");
    }

    @Test
    void badMagic() {
        byte[] b = valid.clone();
        b[3] = 'X';
        expectError(b, "bad magic 0x58554747: not a GGUF file");
    }

    @Test
    void bigEndianFileWithReversedMagic() {
        byte[] b = valid.clone();
        b[0] = 'F'; b[1] = 'U'; b[2] = 'G'; b[3] = 'G';
        b[4] = 0; b[7] = 3;
        expectError(b, "big-endian GGUF files are not supported");
    }

    @Test
    void bigEndianFileAsGgufPyWritesIt() {
        // gguf-py writes the magic as "GGUF" in any byte order, then a big-endian version.
        byte[] b = valid.clone();
        b[4] = 0; b[5] = 0; b[6] = 0; b[7] = 3;
        expectError(b, "big-endian GGUF files are not supported");
    }

    @Test
    void versionTwoIsNamed() {
        byte[] b = valid.clone();
        b[4] = 2;
        expectError(b, "GGUF version 2 is not supported (dgr reads version 3");
    }

    @Test
    void absurdTensorCount() {
        expectError(RawGguf.header(1L << 60, 0).bytes(), "absurd tensor count 1152921504606846976");
        expectError(RawGguf.header(-1, 0).bytes(), "absurd tensor count -1");
    }

    @Test
    void absurdMetadataCount() {
        expectError(RawGguf.header(0, 1L << 40).kvU32("a", 1).bytes(), "absurd metadata count 1099511627776");
    }

    @Test
    void absurdKeyLength() {
        byte[] b = RawGguf.header(0, 1).u64(1L << 62).u32(4).u32(0).bytes();
        expectError(b, "metadata key #0 is 4611686018427387904 bytes long; at most 65535 allowed");
    }

    @Test
    void absurdStringValueLength() {
        byte[] b = RawGguf.header(0, 1).str("general.name").u32(GgufValueType.STRING.id).u64(1L << 62).bytes();
        expectError(b, "absurd string length 4611686018427387904 for value of 'general.name'");
    }

    @Test
    void absurdArrayLength() {
        byte[] b = RawGguf.header(0, 1).str("tokenizer.ggml.tokens").u32(GgufValueType.ARRAY.id)
                .u32(GgufValueType.STRING.id).u64(1L << 61).zeros(64).bytes();
        expectError(b, "absurd array length 2305843009213693952 for 'tokenizer.ggml.tokens'");
    }

    @Test
    void absurdInnerArrayLength() {
        byte[] b = RawGguf.header(0, 1).str("x.nested").u32(GgufValueType.ARRAY.id)
                .u32(GgufValueType.ARRAY.id).u64(1)
                .u32(GgufValueType.UINT8.id).u64(Long.MAX_VALUE).zeros(16).bytes();
        expectError(b, "absurd array length 9223372036854775807 for 'x.nested'");
    }

    @Test
    void arraysNestedTooDeeply() {
        RawGguf r = RawGguf.header(0, 1).str("deep").u32(GgufValueType.ARRAY.id);
        for (int i = 0; i < 20; i++) r.u32(GgufValueType.ARRAY.id).u64(1);
        r.u32(GgufValueType.UINT8.id).u64(0);
        expectError(r.bytes(), "metadata key 'deep' nests arrays too deeply");
    }

    @Test
    void unknownValueType() {
        byte[] b = RawGguf.header(0, 1).str("k").u32(13).u32(0).bytes();
        expectError(b, "metadata key 'k' has unknown value type id 13");
    }

    @Test
    void boolThatIsNeitherZeroNorOne() {
        byte[] b = RawGguf.header(0, 1).str("x.flag").u32(GgufValueType.BOOL.id).u8(2).bytes();
        expectError(b, "metadata key 'x.flag' has bool value 2");
    }

    @Test
    void duplicateKey() {
        expectError(RawGguf.header(0, 2).kvU32("a", 1).kvU32("a", 2).bytes(), "duplicate metadata key 'a'");
    }

    @Test
    void alignmentThatIsNotAPowerOfTwo() {
        expectError(RawGguf.header(0, 1).kvU32("general.alignment", 48).bytes(),
                "general.alignment 48 is not a power of two");
    }

    @Test
    void tensorDataPastTheEndOfTheFile() {
        RawGguf r = RawGguf.header(2, 0)
                .tensor("a", GgmlType.F32.id, 0, 8)
                .tensor("b", GgmlType.F32.id, 32, 8)
                .padTo(32).zeros(32 + 16); // b needs 32 bytes at 32, only 16 are there
        expectError(r.bytes(), "tensor 'b' data [32, 64) runs past the end of the file (data section holds 48 bytes");
    }

    @Test
    void tensorOffsetFarPastTheEnd() {
        RawGguf r = RawGguf.header(1, 0).tensor("a", GgmlType.F32.id, 1L << 50, 8).padTo(32).zeros(32);
        expectError(r.bytes(), "tensor 'a' data [1125899906842624, 1125899906842656) runs past the end");
    }

    @Test
    void misalignedTensorOffset() {
        RawGguf r = RawGguf.header(1, 0).tensor("a", GgmlType.F32.id, 4, 8).padTo(32).zeros(64);
        expectError(r.bytes(), "tensor 'a' data offset 4 is misaligned (alignment 32)");
    }

    @Test
    void offsetMisalignedForACustomAlignment() {
        RawGguf r = RawGguf.header(1, 1).kvU32("general.alignment", 64)
                .tensor("a", GgmlType.F32.id, 32, 8).padTo(64).zeros(128);
        expectError(r.bytes(), "tensor 'a' data offset 32 is misaligned (alignment 64)");
    }

    @Test
    void negativeTensorOffset() {
        RawGguf r = RawGguf.header(1, 0).tensor("a", GgmlType.F32.id, -32, 8).padTo(32).zeros(64);
        expectError(r.bytes(), "tensor 'a' data offset -32 is misaligned");
    }

    @Test
    void unknownTensorTypeIdNamesTheTypeIdAndTheTensor() {
        RawGguf r = RawGguf.header(1, 0).tensor("blk.0.attn_q.weight", 99, 0, 32).padTo(32).zeros(128);
        expectError(r.bytes(), "tensor 'blk.0.attn_q.weight' has unsupported ggml type id 99");
        // id 4 was Q4_2, removed from ggml: a gap in the id space, not an out-of-range id
        RawGguf gap = RawGguf.header(1, 0).tensor("old", 4, 0, 32).padTo(32).zeros(128);
        expectError(gap.bytes(), "tensor 'old' has unsupported ggml type id 4");
    }

    @Test
    void badDimensions() {
        expectError(RawGguf.header(1, 0).tensor("a", 0, 0).zeros(8).bytes(), "tensor 'a' has 0 dimensions (1..4 allowed)");
        expectError(RawGguf.header(1, 0).tensor("a", 0, 0, 1, 1, 1, 1, 1).bytes(), "tensor 'a' has 5 dimensions (1..4 allowed)");
        expectError(RawGguf.header(1, 0).tensor("a", 0, 0, 8, 0).padTo(32).bytes(), "tensor 'a' has dimension 0");
        expectError(RawGguf.header(1, 0).tensor("a", 0, 0, 1L << 40, 1L << 40).padTo(32).bytes(),
                "tensor 'a' has an absurd element count");
        expectError(RawGguf.header(1, 0).tensor("a", GgmlType.Q4_0.id, 0, 33).padTo(32).zeros(64).bytes(),
                "tensor 'a' row length 33 is not a multiple of Q4_0's block size 32");
    }

    @Test
    void duplicateTensorName() {
        RawGguf r = RawGguf.header(2, 0).tensor("a", 0, 0, 8).tensor("a", 0, 32, 8).padTo(32).zeros(64);
        expectError(r.bytes(), "duplicate tensor name 'a'");
    }

    @Test
    void tensorsWithoutADataSection() {
        byte[] b = RawGguf.header(1, 0).tensor("a", 0, 0, 8).bytes();
        expectError(b, "truncated: tensor data section is missing");
    }

    private void write(Path p, byte[] b) {
        try {
            Files.write(p, b);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private AbstractThrowableAssert<?, ?> expectError(byte[] bytes, String fragment) {
        Path p = dir.resolve("case.gguf");
        write(p, bytes);
        return assertThatThrownBy(() -> GgufFile.open(p).close())
                .isInstanceOf(GgufFormatException.class)
                .hasMessageContaining(p.toString())
                .hasMessageContaining(fragment);
    }
}
