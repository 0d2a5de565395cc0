package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * DESIGN.md contract 1: a session's logits and tokens are bit-identical alone or batched with 7
 * strangers, with prefill chunked at 1, 7, 64 or whole, on 1 or 2 threads; with f32 K/V and with
 * each compact cache type (rounded on store by a rule of the row's own values).
 */
class BatchInvarianceTest {
    static final int SESSIONS = 8, GENERATE = 4;

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        // Every fused SIMD kernel (the _M files mix in Q4_K to Q6_K), and scalar.
        for (String t : new String[] {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_M", "Q6_K",
                "IQ4_XS", "IQ4_NL", "IQ1_M", "IQ2_XXS", "IQ3_S", "gemma3-Q8_0", "mixtral-Q4_0", "qwen2moe-Q8_0", "qwen3moe-Q4_K_M", "smollm2-Q4_K_M", "smollm2-Q4_0", "phi2-Q8_0", "starcoder2-Q4_0", "gptneox-Q4_0", "gpt2-Q8_0", "command-r-Q4_0", "exaone4-swa-Q8_0", "glm4-Q4_K_M", "arcee-Q4_0", "stablelm-Q4_K_M", "deepseek2-Q4_0", "deepseek2-Q4_K_M", "deepseek2-kvb-Q8_0", "gpt-oss-Q8_0", "gpt-oss-MXFP4_MOE", "llama4-Q8_0", "phimoe-Q4_0", "ernie4_5-moe-Q4_K_M", "cohere2-Q8_0", "dots1-Q4_0", "hunyuan-moe-Q8_0", "bailingmoe-Q4_0", "hunyuan-dense-Q4_K_M", "mistral3-Q8_0", "deepseek-Q4_0", "nemotron-Q8_0", "minimax-m2-Q4_K_M"}) out.add(Arguments.of(t, EngineOptions.Kind.SIMD));
        out.add(Arguments.of("Q4_0", EngineOptions.Kind.SCALAR));
        // Experts: rows share an expert's pass with whichever rows chose it too.
        out.add(Arguments.of("mixtral-Q4_0", EngineOptions.Kind.SCALAR));
        // Latent attention's per-head projections, claimed head by head.
        out.add(Arguments.of("deepseek2-Q8_0", EngineOptions.Kind.SCALAR));
        // Llama 4's expert inputs scaled by their weights, its dense layers between.
        out.add(Arguments.of("llama4-Q8_0", EngineOptions.Kind.SCALAR));
        // 8-bit activations for Q4_0, Q8_0, the K-quants, IQ4_NL, IQ4_XS and MXFP4 (native kernel where the CPU has it), dense and with experts.
        for (String t : new String[] {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_M", "Q6_K", "IQ4_XS", "IQ4_NL", "smollm2-Q4_0", "mixtral-Q4_0", "phimoe-Q4_0", "qwen2moe-Q8_0", "qwen3moe-Q4_K_M", "gpt-oss-MXFP4_MOE"}) out.add(Arguments.of(t, EngineOptions.Kind.Q8));
        // The compact K/V cache types (--cache-type-k/-v), each alone and K and V of different types.
        List<Arguments> all = new ArrayList<>();
        for (Arguments a : out) all.add(Arguments.of(a.get()[0], a.get()[1], "f32"));
        for (String c : new String[] {"f16", "bf16", "q8_0", "q8_0/bf16"}) {
            all.add(Arguments.of("Q4_0", EngineOptions.Kind.Q8, c));
            all.add(Arguments.of("Q8_0", EngineOptions.Kind.SIMD, c));
        }
        all.add(Arguments.of("Q4_0", EngineOptions.Kind.SCALAR, "q8_0"));
        all.add(Arguments.of("gemma3-Q8_0", EngineOptions.Kind.SIMD, "f16"));
        return all.stream();
    }

    /** What one session saw: every logit row it asked for, and the tokens it chose. */
    record Trace(List<float[]> logits, List<Integer> tokens) {}

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cases")
    void sessionResultsAreBitIdenticalAloneBatchedChunkedAndThreaded(String type, EngineOptions.Kind kind, String cache) {
        SplittableRandom rnd = new SplittableRandom(7);
        int[][] prompts = new int[SESSIONS][];
        for (int s = 0; s < SESSIONS; s++) {
            prompts[s] = new int[1 + rnd.nextInt(3, 30)];
            for (int i = 0; i < prompts[s].length; i++) prompts[s][i] = rnd.nextInt(1025);
        }
        Trace[] alone = new Trace[SESSIONS];
        try (Engine e = TinyModels.load(type, kind, 1, 256, TinyModels.cache(cache))) {
            for (int s = 0; s < SESSIONS; s++) alone[s] = run(e, new int[][] {prompts[s]}, Integer.MAX_VALUE)[0];
        }
        for (int threads : new int[] {1, 2}) {
            try (Engine e = TinyModels.load(type, kind, threads, 256, TinyModels.cache(cache))) {
                for (int chunk : new int[] {1, 7, 64, Integer.MAX_VALUE}) {
                    Trace[] together = run(e, prompts, chunk);
                    for (int s = 0; s < SESSIONS; s++) {
                        String what = type + " " + kind + " " + cache + " session " + s + " chunk " + chunk + " threads " + threads;
                        assertThat(together[s].tokens()).as(what).isEqualTo(alone[s].tokens());
                        assertThat(together[s].logits()).as(what).hasSameSizeAs(alone[s].logits());
                        for (int i = 0; i < alone[s].logits().size(); i++) {
                            assertThat(bits(together[s].logits().get(i))).as(what + " output " + i)
                                    .isEqualTo(bits(alone[s].logits().get(i)));
                        }
                    }
                }
            }
        }
    }

    /**
     * A tiny continuous-batching loop: each iteration takes up to {@code chunk} prompt rows of every
     * prefilling session and one row of every decoding session, until all have generated.
     */
    static Trace[] run(Engine e, int[][] prompts, int chunk) {
        int n = prompts.length, vocab = e.info().vocabSize();
        StateSlot[] slots = new StateSlot[n];
        Trace[] traces = new Trace[n];
        int[] fed = new int[n];
        int[] last = new int[n];
        for (int s = 0; s < n; s++) {
            slots[s] = e.openSlot();
            traces[s] = new Trace(new ArrayList<>(), new ArrayList<>());
        }
        Batch b = new Batch(e.features().maxRows(), e.boundarySchema().rowWidth());
        int[] rowOf = new int[n];
        while (true) {
            b.clear();
            boolean any = false;
            for (int s = 0; s < n; s++) {
                rowOf[s] = -1;
                if (traces[s].tokens().size() == GENERATE) continue;
                any = true;
                if (fed[s] < prompts[s].length) {
                    int take = Math.min(chunk, prompts[s].length - fed[s]);
                    for (int i = 0; i < take; i++) {
                        boolean end = fed[s] + i == prompts[s].length - 1;
                        int r = b.addToken(slots[s], fed[s] + i, prompts[s][fed[s] + i], end);
                        if (end) rowOf[s] = r;
                    }
                    fed[s] += take;
                } else {
                    rowOf[s] = b.addToken(slots[s], slots[s].length(), last[s], true);
                }
            }
            if (!any) break;
            ForwardResult res = e.forward(b);
            for (int s = 0; s < n; s++) {
                if (rowOf[s] < 0) continue;
                float[] l = res.copyOutput(rowOf[s]);
                traces[s].logits().add(l);
                last[s] = TinyModels.argmax(l, 0, vocab);
                traces[s].tokens().add(last[s]);
            }
        }
        for (StateSlot s : slots) s.close();
        return traces;
    }

    static int[] bits(float[] f) {
        int[] b = new int[f.length];
        for (int i = 0; i < f.length; i++) b[i] = Float.floatToRawIntBits(f[i]);
        return b;
    }
}
