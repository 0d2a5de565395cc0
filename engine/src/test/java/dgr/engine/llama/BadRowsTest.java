package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.StateSlot;
import dgr.gguf.GgufWriter;
import dgr.gguf.MetaValue;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** DESIGN.md contract 6: bad rows get a precise IllegalArgumentException and touch no slot. */
class BadRowsTest {
    static Engine engine;

    @BeforeAll
    static void load() {
        engine = Engines.load(TinyModels.model("Q8_0"),
                EngineOptions.defaults().withThreads(1).withMaxRows(8).withContextLength(16));
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    private static void rejects(Batch b, String message, StateSlot... untouched) {
        int[] before = new int[untouched.length];
        for (int i = 0; i < untouched.length; i++) before[i] = untouched[i].length();
        assertThatThrownBy(() -> engine.forward(b)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
        for (int i = 0; i < untouched.length; i++) assertThat(untouched[i].length()).isEqualTo(before[i]);
    }

    @Test
    void rowsBreakingTheBatchRulesAreRejectedBeforeAnySlotChanges() {
        try (StateSlot a = engine.openSlot(); StateSlot c = engine.openSlot()) {
            TinyModels.prefill(engine, a, new int[] {1, 2, 3});
            Batch b = new Batch(8, engine.boundarySchema().rowWidth());

            b.addToken(c, 0, 5, true);
            b.addToken(a, 4, 5, true);
            rejects(b, "row 1: position 4 but the session's next position is 3", a, c);

            b.clear();
            b.addToken(a, 3, 1025, true);
            rejects(b, "token 1025 is outside the vocabulary", a);

            b.clear();
            b.addToken(a, 3, 7, false);
            b.addToken(c, 0, 7, false);
            b.addToken(a, 4, 7, true);
            rejects(b, "row 2: rows of one session must be consecutive", a, c);

            b.clear();
            for (int p = 0; p < 8; p++) b.addToken(c, p, 9, false);
            engine.forward(b);
            b.clear();
            for (int p = 8; p < 16; p++) b.addToken(c, p, 9, false);
            engine.forward(b);
            b.clear();
            b.addToken(c, 16, 9, true);
            rejects(b, "row 0: position 16 is past the context length 16", c);
            assertThat(c.length()).isEqualTo(16);
            assertThat(c.bytes()).isEqualTo(engine.stateLayout().bytesForTokens(16));
        }
    }

    @Test
    void slotsFromElsewhereOrClosedAreRejected() {
        StateSlot closed = engine.openSlot();
        closed.close();
        assertThat(closed.bytes()).isZero();
        Batch b = new Batch(4, engine.boundarySchema().rowWidth());
        b.addToken(closed, 0, 1, true);
        rejects(b, "row 0: state slot is closed");
        try (Engine other = Engines.load(TinyModels.model("Q8_0"), EngineOptions.defaults().withThreads(1).withMaxRows(4));
             StateSlot foreign = other.openSlot()) {
            b.clear();
            b.addToken(foreign, 0, 1, true);
            rejects(b, "row 0: state slot was not opened by this engine", foreign);
        }
    }

    /** Expert metadata the llama engine cannot honour is refused by key, before any tensor is read. */
    @Test
    void expertMetadataItCannotRunIsRefusedByKey(@TempDir Path dir) throws Exception {
        refusesMoe(dir, "qwen3", 8, 2, 1, ": qwen3.expert_count = 8: mixture-of-experts qwen3 models are not supported by the llama engine");
        refusesMoe(dir, "qwen3moe", 0, 0, 1, ": qwen3moe.expert_count is missing; qwen3moe models route every token through experts");
        refusesMoe(dir, "llama", 8, 9, 1, ": llama.expert_used_count = 9 must be between 1 and llama.expert_count = 8");
        refusesMoe(dir, "llama", 8, 0, 1, ": llama.expert_used_count = 0 must be between 1 and llama.expert_count = 8");
        refusesMoe(dir, "mistral", 8, 2, 2, ": mistral.expert_gating_func = 2: the llama engine routes with softmax (1) only");
    }

    private static void refusesMoe(Path dir, String arch, int count, int used, int gating, String message) throws Exception {
        java.util.Map<String, MetaValue> keys = new java.util.LinkedHashMap<>();
        if (count > 0) {
            keys.put(arch + ".expert_count", MetaValue.u32(count));
            keys.put(arch + ".expert_used_count", MetaValue.u32(used));
        }
        if (gating != 1) keys.put(arch + ".expert_gating_func", MetaValue.u32(gating));
        refuses(dir.resolve(arch + "-" + count + "-" + used + "-" + gating + ".gguf"), arch, keys, message);
    }

    /** llama-tiny Q8_0 renamed to {@code arch} with {@code keys} added must fail to load with {@code message} after its path. */
    private static void refuses(Path f, String arch, java.util.Map<String, MetaValue> keys, String message) throws Exception {
        TinyModels.rewrite(TinyModels.model("Q8_0"), f, k -> k.startsWith("llama.") ? arch + k.substring(5) : k, TinyModels::copy,
                w -> w.put("general.architecture", MetaValue.of(arch)).putAll(keys));
        assertThatThrownBy(() -> Engines.load(f, EngineOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(f + message);
    }

    @Test
    void anOlmo3WindowPatternWithoutWindowLayersIsRefusedByKey(@TempDir Path dir) throws Exception {
        refuses(dir.resolve("olmo3.gguf"), "olmo2", java.util.Map.of("olmo2.attention.sliding_window", MetaValue.u32(8),
                "olmo2.attention.sliding_window_pattern", MetaValue.u32(1)),
                ": olmo2.attention.sliding_window_pattern = 1: a pattern must have a global layer after at least one window layer");
    }

    /** An expert tensor of the wrong shape is named with the shape found and the one expected. */
    @Test
    void anExpertTensorOfTheWrongShapeIsRefusedByName(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("mixtral-short.gguf");
        TinyModels.rewrite(TinyModels.model("mixtral-Q8_0"), f, k -> k, (t, w) -> {
            if (!t.name().equals("blk.1.ffn_up_exps.weight")) {
                TinyModels.copy(t, w);
                return;
            }
            // Seven experts' rows where the file says eight.
            long[] s = {t.shape()[0], t.shape()[1], 7};
            w.tensor(t.name(), t.type(), s, sink -> sink.put(t.data().asSlice(0, t.data().byteSize() / 8 * 7).asByteBuffer()));
        }, w -> {});
        assertThatThrownBy(() -> Engines.load(f, EngineOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(f + ": tensor 'blk.1.ffn_up_exps.weight' has shape [256, 256, 7], expected [256, 256, 8]");
    }

    /** GPT-2 knows positions only up to its learned table: a longer context is refused at load, with the numbers. */
    @Test
    void gpt2ContextPastItsLearnedPositionsIsRefused() {
        Path f = TinyModels.model("gpt2-F32");
        assertThatThrownBy(() -> Engines.load(f, EngineOptions.defaults().withContextLength(1025)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(f + ": gpt2 has learned positions for 1024 tokens (context_length); a context of 1025 is longer");
        try (Engine e = Engines.load(f, EngineOptions.defaults().withContextLength(1024))) {
            assertThat(e.info().contextLength()).isEqualTo(1024);
        }
    }

    /**
     * A deepseek2 file in neither of llama.cpp's layouts (here the MLA one without its
     * key_length_mla) is refused with what is missing, not read as something it is not.
     */
    @Test
    void deepseek2InNeitherLayoutIsRefused(@TempDir Path dir) {
        Path f = dir.resolve("deepseek2-old.gguf");
        TinyModels.rewrite(TinyModels.model("deepseek2-F32"), f,
                k -> k.equals("deepseek2.attention.key_length_mla") ? "dgr.test.dropped" : k, TinyModels::copy, w -> {});
        assertThatThrownBy(() -> Engines.load(f, EngineOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(f + ": this deepseek2 file has neither blk.0.attn_kv_b.weight nor deepseek2.attention.key_length_mla; "
                        + "llama.cpp writes one or the other (before and since its MLA layout)");
    }

    @Test
    void unknownArchitectureNamesTheFileAndWhatIsSupported(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("bert.gguf");
        new GgufWriter().put("general.architecture", MetaValue.of("bert")).write(f);
        assertThat(Files.exists(f)).isTrue();
        assertThatThrownBy(() -> Engines.load(f, EngineOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("unsupported architecture 'bert' in " + f + "; dgr supports llama, mistral3, mistral, exaone, ernie4_5, ernie4_5-moe, xverse, internlm2, exaone4, glm4, arcee, seed_oss, gpt-oss, smollm3, qwen2, qwen3, qwen2moe, olmoe, dots1, hunyuan-moe, bailingmoe, hunyuan-dense, deepseek, minimax-m2, qwen3moe, llama4, phi3, phimoe, olmo2, granitemoe, granite, minicpm, deepseek2, glm4moe, gemma, gemma2, gemma3, stablelm, starcoder2, gptneox, gpt2, command-r, cohere2, nemotron, phi2, deepseek4");
    }

    /**
     * A block tensor the graph does not read (here an output-projection bias, which llama.cpp would
     * add) is refused by name instead of being skipped into wrong logits.
     */
    @Test
    void aBlockTensorTheGraphDoesNotReadIsRefusedByName(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("llama-with-bo.gguf");
        TinyModels.rewrite(TinyModels.model("Q8_0"), f, k -> k, TinyModels::copy,
                w -> w.tensor("blk.1.attn_output.bias", dgr.gguf.GgmlType.F32, new long[] {256}, sink -> sink.put(new byte[256 * 4])));
        assertThatThrownBy(() -> Engines.load(f, EngineOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(f + ": tensor 'blk.1.attn_output.bias' is not part of the llama graph dgr runs; computing without it would give wrong results");
        // A stage without that layer loads: only its own layers' tensors are its business.
        try (Engine head = Engines.load(f, EngineOptions.defaults().withSpan(0, 1))) {
            assertThat(head.recipe().isFirstStage()).isTrue();
        }
    }
}
