package dgr.gguf.synth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.gguf.GgmlType;
import dgr.gguf.GgufFile;
import dgr.gguf.TensorInfo;
import dgr.gguf.codec.Codecs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SynthTest {
    @TempDir
    Path dir;

    private static String sha(Path p) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p)));
    }

    @Test
    void sameSeedGivesSameBytesAndOtherSeedDiffers() throws Exception {
        Path a = dir.resolve("a.gguf"), b = dir.resolve("b.gguf"), c = dir.resolve("c.gguf");
        Synth.write(SynthPreset.LLAMA_TINY, QuantMix.parse("Q4_0"), 7, a);
        Synth.write(SynthPreset.LLAMA_TINY, QuantMix.parse("Q4_0"), 7, b);
        Synth.write(SynthPreset.LLAMA_TINY, QuantMix.parse("Q4_0"), 8, c);
        assertThat(sha(a)).isEqualTo(sha(b));
        assertThat(sha(a)).isNotEqualTo(sha(c));
    }

    @Test
    void q4KmMixesTypesLikeLlamaQuantize() {
        Path p = dir.resolve("m.gguf");
        Synth.write(SynthPreset.LLAMA_TINY, QuantMix.parse("Q4_K_M"), 1, p);
        // The conformance llama-tiny-Q4_K_M (made by llama-quantize) has exactly these non-Q4_K matrices.
        try (GgufFile f = GgufFile.open(p)) {
            Map<String, GgmlType> notQ4K = new LinkedHashMap<>();
            for (TensorInfo t : f.tensors()) {
                if (t.shape().length == 2 && t.type() != GgmlType.Q4_K) notQ4K.put(t.name(), t.type());
                if (t.shape().length == 1) assertThat(t.type()).isEqualTo(GgmlType.F32);
            }
            assertThat(notQ4K).containsExactlyInAnyOrderEntriesOf(Map.of(
                    "output.weight", GgmlType.Q6_K, "blk.1.attn_v.weight", GgmlType.Q6_K,
                    "blk.1.ffn_down.weight", GgmlType.Q6_K));
            assertThat(f.metadata().getLong("general.file_type")).isEqualTo(15);
        }
    }

    /**
     * Rows whose width 256-value super-blocks do not divide (SmolLM's 576) get llama-quantize's
     * fallback type per tensor; rows they divide keep the mix's type.
     */
    @Test
    void superBlockTypesFallBackPerTensorOnRowsTheyDoNotDivide() {
        assertThat(QuantMix.fitRow(GgmlType.Q4_K, 576)).isEqualTo(GgmlType.Q5_0);
        assertThat(QuantMix.fitRow(GgmlType.Q5_K, 576)).isEqualTo(GgmlType.Q5_1);
        assertThat(QuantMix.fitRow(GgmlType.Q6_K, 576)).isEqualTo(GgmlType.Q8_0);
        assertThat(QuantMix.fitRow(GgmlType.Q3_K, 576)).isEqualTo(GgmlType.IQ4_NL);
        assertThat(QuantMix.fitRow(GgmlType.Q4_K, 1536)).isEqualTo(GgmlType.Q4_K);
        assertThat(QuantMix.fitRow(GgmlType.Q4_0, 576)).isEqualTo(GgmlType.Q4_0);
        Path p = dir.resolve("s.gguf");
        Synth.write(SynthPreset.SMOLLM2_TINY, QuantMix.parse("Q4_K_M"), 1, p);
        try (GgufFile f = GgufFile.open(p)) {
            Map<String, GgmlType> types = new LinkedHashMap<>();
            for (TensorInfo t : f.tensors()) types.put(t.name(), t.type());
            assertThat(types).containsEntry("token_embd.weight", GgmlType.Q8_0)   // Q6_K, 576 wide
                    .containsEntry("blk.0.attn_q.weight", GgmlType.Q5_0)           // Q4_K, 576 wide
                    .containsEntry("blk.1.attn_v.weight", GgmlType.Q8_0)           // Q6_K (more bits), 576 wide
                    .containsEntry("blk.0.ffn_down.weight", GgmlType.Q4_K)         // 1536 wide: fits
                    .containsEntry("blk.1.ffn_down.weight", GgmlType.Q6_K);
        }
    }

    @Test
    void tiedOutputGetsTheOutputTypeInMixes() {
        QuantMix m = QuantMix.parse("Q4_K_M");
        assertThat(m.typeFor("token_embd.weight", -1, 16, true)).isEqualTo(GgmlType.Q6_K);
        assertThat(m.typeFor("token_embd.weight", -1, 16, false)).isEqualTo(GgmlType.Q4_K);
        // use_more_bits for 16 layers: 0, 1 (first eighth), 14, 15 (last eighth), and (i-2)%3==2: 4, 7, 10, 13
        for (int i = 0; i < 16; i++) {
            boolean more = i < 2 || i >= 14 || (i - 2) % 3 == 2;
            assertThat(m.typeFor("blk." + i + ".ffn_down.weight", i, 16, true))
                    .isEqualTo(more ? GgmlType.Q6_K : GgmlType.Q4_K);
        }
    }

    @Test
    void modelHasEveryLlamaTensorARealTokenizerAndSaneWeights() {
        Path p = dir.resolve("t.gguf");
        Synth.write(SynthPreset.LLAMA_TINY, QuantMix.parse("Q8_0"), 3, p);
        try (GgufFile f = GgufFile.open(p)) {
            var md = f.metadata();
            assertThat(md.getString("general.architecture")).isEqualTo("llama");
            assertThat(md.getArray("tokenizer.ggml.tokens")).hasSize(1025);
            assertThat(md.getString("tokenizer.ggml.model")).isEqualTo("gpt2");
            assertThat(f.tensors()).hasSize(3 + 9 * 2);
            TensorInfo q = f.tensor("blk.0.attn_q.weight");
            assertThat(q.shape()).containsExactly(256, 256);
            assertThat(f.tensor("blk.1.attn_k.weight").shape()).containsExactly(256, 128);
            assertThat(f.tensor("blk.1.ffn_down.weight").shape()).containsExactly(768, 256);
            float[] w = new float[(int) q.elementCount()];
            Codecs.of(q.type()).dequantize(q.data(), 0, w, 0, w.length);
            double sum = 0, sq = 0;
            for (float x : w) { sum += x; sq += x * x; }
            double std = Math.sqrt(sq / w.length - Math.pow(sum / w.length, 2));
            assertThat(std).isBetween(0.018, 0.022);
            assertThat(Math.abs(sum / w.length)).isLessThan(0.002);
        }
    }

    @Test
    void unknownPresetAndQuantGiveClearErrors() {
        assertThatThrownBy(() -> SynthPreset.byName("llama-7b")).hasMessageContaining("unknown preset 'llama-7b'");
        assertThatThrownBy(() -> QuantMix.parse("Q9_9")).hasMessageContaining("unknown quantization 'Q9_9'");
        assertThatThrownBy(() -> QuantMix.parse("I32")).hasMessageContaining("not a weight format");
    }

    @Test
    void everyListedQuantizationParsesAndTheErrorListsThemAll() {
        for (String n : QuantMix.NAMES) assertThat(QuantMix.parse(n.toLowerCase(java.util.Locale.ROOT)).name()).isEqualTo(n);
        assertThat(QuantMix.NAMES).contains("IQ2_XXS", "TQ2_0", "MXFP4", "Q4_K_M", "MXFP4_MOE").doesNotContain("Q8_1", "I32", "F64");
        assertThatThrownBy(() -> QuantMix.parse("Q9_9")).hasMessageContaining("IQ1_M").hasMessageContaining("MXFP4_MOE");
    }
}
