package dgr.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Split sets as llama.cpp's gguf-split writes them: name-0000N-of-0000M.gguf with split.* keys. */
class SplitArtifactTest {
    @TempDir Path dir;

    /** Part i holds tensors t{2i} and t{2i+1}; every part carries the split keys. */
    private Path writeSet(int count, int totalTensors) {
        for (int i = 0; i < count; i++) {
            GgufWriter w = new GgufWriter()
                    .put("split.no", new MetaValue(GgufValueType.UINT16, i))
                    .put("split.count", new MetaValue(GgufValueType.UINT16, count))
                    .put("split.tensors.count", MetaValue.i32(totalTensors));
            if (i == 0) w.put("general.architecture", MetaValue.of("llama"));
            for (int k = 2 * i; k < 2 * i + 2; k++) {
                byte[] b = new byte[16];
                java.util.Arrays.fill(b, (byte) k);
                w.tensor("t" + k, GgmlType.F32, new long[] {4}, b);
            }
            w.write(dir.resolve(String.format("model-%05d-of-%05d.gguf", i + 1, count)));
        }
        return dir.resolve(String.format("model-00001-of-%05d.gguf", count));
    }

    @Test
    void threePartSetReadsAsOneArtifact() {
        try (GgufArtifact a = GgufArtifact.open(writeSet(3, 6))) {
            assertThat(a.parts()).hasSize(3);
            assertThat(a.metadata().getString("general.architecture")).isEqualTo("llama");
            assertThat(a.tensors()).extracting(TensorInfo::name).containsExactly("t0", "t1", "t2", "t3", "t4", "t5");
            for (int k = 0; k < 6; k++) {
                // each tensor's bytes come from its own part's mapping
                assertThat(a.tensor("t" + k).data().toArray(ValueLayout.JAVA_BYTE)).containsOnly(k);
            }
            assertThat(a.totalBytes()).isEqualTo(a.parts().stream().mapToLong(GgufFile::fileSize).sum());
        }
    }

    @Test
    void missingPartIsNamed() throws IOException {
        Path first = writeSet(3, 6);
        Files.delete(dir.resolve("model-00002-of-00003.gguf"));
        assertThatThrownBy(() -> GgufArtifact.open(first))
                .isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("model-00002-of-00003.gguf")
                .hasMessageContaining("split part 2 of 3 is missing");
    }

    @Test
    void openingALaterPartPointsToPartOne() {
        writeSet(3, 6);
        assertThatThrownBy(() -> GgufArtifact.open(dir.resolve("model-00003-of-00003.gguf")))
                .isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("this is part 3 of a split set; open part 00001 instead");
    }

    @Test
    void splitKeysThatContradictTheFileNameAreRejected() throws IOException {
        Path first = writeSet(3, 6);
        // Put a part of a 2-part set where part 2 of 3 belongs.
        new GgufWriter().put("split.no", new MetaValue(GgufValueType.UINT16, 1))
                .put("split.count", new MetaValue(GgufValueType.UINT16, 2))
                .write(dir.resolve("model-00002-of-00003.gguf"));
        assertThatThrownBy(() -> GgufArtifact.open(first))
                .isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("split.no/split.count say part 2 of 2 but the name says 2 of 3");
    }

    @Test
    void tensorCountThatDisagreesWithThePartsIsRejected() {
        Path first = writeSet(3, 7);
        assertThatThrownBy(() -> GgufArtifact.open(first))
                .isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("split.tensors.count is 7 but the parts hold 6 tensors");
    }
}
