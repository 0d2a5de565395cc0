package dgr.gguf;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.gguf.codec.Codecs;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Files written by llama.cpp (llama-tiny-Q4_0) and gguf-py (a vocab-only GGUF) read as documented. */
class ConformanceFixtureReadTest {
    @TempDir Path dir;

    @Test
    void llamaTinyQ4_0HasTheDocumentedHyperparametersAndTensorTable() {
        try (GgufArtifact a = GgufArtifact.open(TestResources.copyTo(dir, "llama-tiny-Q4_0.gguf"))) {
            Metadata m = a.metadata();
            assertThat(m.getString("general.architecture")).isEqualTo("llama");
            assertThat(m.getLong("llama.embedding_length")).isEqualTo(256);
            assertThat(m.getLong("llama.block_count")).isEqualTo(2);
            assertThat(m.getLong("llama.attention.head_count")).isEqualTo(4);
            assertThat(m.getLong("llama.attention.head_count_kv")).isEqualTo(2);
            assertThat(m.getLong("llama.feed_forward_length")).isEqualTo(768);
            assertThat(m.getLong("llama.context_length")).isEqualTo(512);
            assertThat(m.getDouble("llama.rope.freq_base")).isEqualTo(10000.0);
            assertThat(m.getFloat("llama.attention.layer_norm_rms_epsilon", 0f)).isEqualTo(1e-5f);
            assertThat(m.getArray("tokenizer.ggml.tokens")).hasSize(1025).endsWith("<|endoftext|>");
            assertThat(m.getLong("tokenizer.ggml.bos_token_id")).isEqualTo(1024);
            assertThat(m.getBool("tokenizer.ggml.add_bos_token", false)).isTrue();

            Map<String, long[]> expected = new LinkedHashMap<>();
            expected.put("token_embd.weight", new long[] {256, 1025});
            expected.put("output.weight", new long[] {256, 1025});
            expected.put("output_norm.weight", new long[] {256});
            for (int b = 0; b < 2; b++) {
                String p = "blk." + b + ".";
                expected.put(p + "attn_norm.weight", new long[] {256});
                expected.put(p + "attn_q.weight", new long[] {256, 256});
                expected.put(p + "attn_k.weight", new long[] {256, 128});
                expected.put(p + "attn_v.weight", new long[] {256, 128});
                expected.put(p + "attn_output.weight", new long[] {256, 256});
                expected.put(p + "ffn_norm.weight", new long[] {256});
                expected.put(p + "ffn_gate.weight", new long[] {256, 768});
                expected.put(p + "ffn_up.weight", new long[] {256, 768});
                expected.put(p + "ffn_down.weight", new long[] {768, 256});
            }
            assertThat(a.tensors()).hasSize(21);
            expected.forEach((name, shape) -> {
                TensorInfo t = a.tensor(name);
                assertThat(t.shape()).as(name).containsExactly(shape);
                assertThat(t.type()).as(name).isEqualTo(shape.length == 1 ? GgmlType.F32 : GgmlType.Q4_0);
                assertThat(t.data().byteSize()).as(name).isEqualTo(t.byteSize());
            });
        }
    }

    /** codecs/Q4_0.bin was cut from this file's output.weight rows 0–3: the reader must point at them. */
    @Test
    void outputWeightRowsAreTheConformanceCodecSample() {
        try (GgufFile f = GgufFile.open(TestResources.copyTo(dir, "llama-tiny-Q4_0.gguf"))) {
            TensorInfo t = f.tensor("output.weight");
            byte[] sample = TestResources.bytes("codecs/Q4_0.bin");
            assertThat(t.data().asSlice(0, sample.length).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(sample);

            float[] values = new float[1024];
            Codecs.of(GgmlType.Q4_0).dequantize(t.data(), 0, values, 0, 1024);
            assertThat(values).containsExactly(TestResources.floats("codecs/Q4_0.f32"));
        }
    }

    @Test
    void gpt2VocabularyFileHasItsTokensMergesAndNoTensors() {
        try (GgufFile f = GgufFile.open(TestResources.copyTo(dir, "ggml-vocab-gpt-2.gguf"))) {
            Metadata m = f.metadata();
            assertThat(f.tensors()).isEmpty();
            assertThat(m.getString("tokenizer.ggml.model")).isEqualTo("gpt2");
            assertThat(m.getString("tokenizer.ggml.pre")).isEqualTo("gpt-2");
            List<Object> tokens = m.getArray("tokenizer.ggml.tokens");
            assertThat(tokens).hasSize(50257);
            assertThat(tokens.get(0)).isEqualTo("!");
            assertThat(tokens.get(50256)).isEqualTo("<|endoftext|>");
            assertThat(m.getArray("tokenizer.ggml.merges")).hasSize(50000).startsWith("Ġ t", "Ġ a");
            assertThat(m.getArray("tokenizer.ggml.token_type")).hasSize(50257);
            assertThat(m.getLong("tokenizer.ggml.eos_token_id")).isEqualTo(50256);
        }
    }
}
