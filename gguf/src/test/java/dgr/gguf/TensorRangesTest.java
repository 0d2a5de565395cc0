package dgr.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tensors whose data ranges overlap are refused by name; inspect's lenient open lists them instead. */
class TensorRangesTest {
    @TempDir
    Path dir;

    /** Two F32 tensors of 8 values (32 bytes); {@code second} starts at {@code secondOffset}. */
    private Path twoTensors(long secondOffset, long secondCols) throws IOException {
        RawGguf g = RawGguf.header(2, 0)
                .tensor("a.weight", 0, 0, 8)
                .tensor("b.weight", 0, secondOffset, secondCols)
                .padTo(32).zeros(96);
        Path p = dir.resolve("t.gguf");
        Files.write(p, g.bytes());
        return p;
    }

    @Test
    void tensorsSharingBytesAreRefusedNamingBothAndTheirRanges() throws IOException {
        Path p = twoTensors(0, 8);
        assertThatThrownBy(() -> GgufFile.open(p)).isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("tensor 'b.weight' data [0, 32) overlaps tensor 'a.weight' data [0, 32)");
    }

    @Test
    void aTensorWhoseShapeGrewIntoItsNeighbourIsRefused() throws IOException {
        // a.weight [0, 32), b.weight at 32 — unless a's shape grows: here b is widened backwards by offset.
        Path p = twoTensors(32, 16); // b: [32, 96) fits; now overlap a by moving b to 0 with 16 values
        try (GgufFile f = GgufFile.open(p)) {
            assertThat(f.tensors()).hasSize(2);
        }
        Path q = twoTensors(0, 16);
        assertThatThrownBy(() -> GgufFile.open(q)).hasMessageContaining("overlaps");
    }

    @Test
    void backToBackTensorsAreAccepted() throws IOException {
        try (GgufFile f = GgufFile.open(twoTensors(32, 8))) {
            assertThat(f.layoutWarnings()).isEmpty();
        }
    }

    @Test
    void aLenientOpenListsTheOverlapAsAWarning() throws IOException {
        try (GgufArtifact a = GgufArtifact.open(twoTensors(0, 8), false)) {
            assertThat(a.parts().getFirst().layoutWarnings()).singleElement().asString()
                    .contains("'b.weight'").contains("'a.weight'").contains("must not share bytes");
        }
    }

    @Test
    void anOversizedTensorNameIsRefusedBeforeItIsRead() throws IOException {
        RawGguf g = RawGguf.header(1, 0).str("x".repeat(64)).u32(1).u64(8).u32(0).u64(0).padTo(32).zeros(32);
        Path p = dir.resolve("n.gguf");
        Files.write(p, g.bytes());
        assertThatThrownBy(() -> GgufFile.open(p)).isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("tensor name #0 is 64 bytes long; at most 63 allowed");
    }
}
