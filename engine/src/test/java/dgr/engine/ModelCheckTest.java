package dgr.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.gguf.GgufArtifact;
import dgr.gguf.GgufFile;
import dgr.gguf.GgufFormatException;
import dgr.gguf.GgufWriter;
import dgr.gguf.MetaValue;
import dgr.gguf.TensorInfo;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Architecture parameters that contradict each other or the tensors are refused before the engine
 * sizes anything from them, each refusal naming the key or tensor and the rule (the probe's
 * {@code block_count = 2^31−1} was an OutOfMemoryError, {@code head_count_kv = 0} a division by zero).
 */
class ModelCheckTest {
    @TempDir
    Path dir;

    static Stream<Arguments> brokenKeys() {
        return Stream.of(
                Arguments.of("llama.block_count", MetaValue.u32(Integer.MAX_VALUE), "llama.block_count: = 2147483647 but the file has no tensors of layer blk.2"),
                Arguments.of("llama.block_count", MetaValue.u32(1_000_000_000), "but the file has no tensors of layer blk.2"),
                Arguments.of("llama.block_count", MetaValue.u32(1), "llama.block_count: = 1 but the file has tensors of layer blk.1"),
                Arguments.of("llama.block_count", MetaValue.u32(0), "llama.block_count: = 0 must be between 1 and"),
                Arguments.of("llama.attention.head_count_kv", MetaValue.u32(0), "llama.attention.head_count_kv: = 0 must be between 1 and"),
                Arguments.of("llama.attention.head_count_kv", MetaValue.u32(3), "llama.attention.head_count_kv: = 3 does not divide llama.attention.head_count = 4"),
                Arguments.of("llama.attention.head_count", MetaValue.u64(1L << 40), "llama.attention.head_count: = 1099511627776 must be between 1 and 2147483647"),
                Arguments.of("llama.rope.dimension_count", MetaValue.u32(Integer.MAX_VALUE), "llama.rope.dimension_count: = 2147483647 is more than the head size 64"),
                Arguments.of("llama.rope.dimension_count", MetaValue.u32(33), "llama.rope.dimension_count: = 33 is odd"),
                Arguments.of("llama.attention.layer_norm_rms_epsilon", MetaValue.f32(0f), "llama.attention.layer_norm_rms_epsilon: = 0.0 must be a finite number above 0"),
                Arguments.of("llama.attention.layer_norm_rms_epsilon", MetaValue.f32(Float.NaN), "llama.attention.layer_norm_rms_epsilon: = NaN must be a finite number above 0"),
                Arguments.of("llama.rope.freq_base", MetaValue.f32(Float.POSITIVE_INFINITY), "llama.rope.freq_base: = Infinity must be a finite number above 0"),
                Arguments.of("llama.rope.freq_base", MetaValue.f32(-10000f), "llama.rope.freq_base: = -10000.0 must be a finite number above 0"),
                Arguments.of("llama.embedding_length", MetaValue.u32(512), "token_embd.weight: has rows of 256 values but llama.embedding_length is 512"),
                Arguments.of("llama.context_length", MetaValue.i32(-1), "llama.context_length: = -1 must be between 1 and"),
                Arguments.of("llama.attention.head_count", MetaValue.of("four"), "llama.attention.head_count: must be an integer, not STRING"));
    }

    @ParameterizedTest
    @MethodSource("brokenKeys")
    void aBrokenArchitectureKeyIsRefusedBeforeLoadingNamingTheKeyAndTheRule(String key, MetaValue value, String expected) {
        Path p = rewrite(w -> w.put(key, value));
        assertThatThrownBy(() -> Engines.load(p, EngineOptions.defaults().withThreads(1)))
                .isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("refused before loading")
                .hasMessageContaining(expected);
    }

    @Test
    void everyFixtureAndEveryTinyPresetPassesTheChecks() throws Exception {
        for (String f : new String[] {"llama-tiny-Q4_0.gguf", "llama-tiny-F16.gguf", "dsv4-tiny.gguf"}) {
            try (GgufArtifact a = GgufArtifact.open(fixture(f))) {
                assertThat(ModelCheck.problems(a)).as(f).isEmpty();
            }
        }
        for (dgr.gguf.synth.SynthPreset preset : dgr.gguf.synth.SynthPreset.ALL) {
            if (!preset.name().endsWith("-tiny")) continue;
            Path p = dir.resolve(preset.name() + ".gguf");
            dgr.gguf.synth.Synth.write(preset, dgr.gguf.synth.QuantMix.parse("Q8_0"), 1, p);
            try (GgufArtifact a = GgufArtifact.open(p)) {
                assertThat(ModelCheck.problems(a)).as(preset.name()).isEmpty();
            }
            Files.delete(p);
        }
    }

    /** llama-tiny Q4_0 with {@code edit} applied to its metadata (a key put again replaces it). */
    private Path rewrite(Consumer<GgufWriter> edit) {
        Path out = dir.resolve("edited.gguf");
        try (GgufFile f = GgufFile.open(fixture("llama-tiny-Q4_0.gguf"))) {
            GgufWriter w = new GgufWriter();
            f.metadata().asMap().forEach(w::put);
            edit.accept(w);
            for (TensorInfo t : f.tensors()) w.tensor(t.name(), t.type(), t.shape(), sink -> sink.put(t.data().asByteBuffer()));
            w.write(out);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    private static Path fixture(String name) throws URISyntaxException {
        return Path.of(ModelCheckTest.class.getResource("/conformance/models/" + name).toURI());
    }
}
