package dgr.node;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Engine;
import dgr.engine.sampler.GreedySampler;
import dgr.engine.sampler.TokenSampler;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import dgr.node.model.ServedModel;
import dgr.runtime.CompatibilityKey;
import dgr.runtime.SchedulerEvent;
import dgr.runtime.Session;
import dgr.runtime.SessionRequest;
import dgr.runtime.Submission;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DESIGN.md contract 3 inside one node: llama-tiny in two recipes (Q4_0 and Q8_0 files) and
 * DeepSeek-V4's dsv4-tiny loaded at once, sessions of all three running at the same time. Every
 * batch a model's scheduler ran carried that model's engine, recipe, boundary schema and state
 * layout, and every session's logits are bit-identical to its run alone, so no row crossed models.
 * (runtime's CompatibilityTest proves the one-key-per-batch rule on the rows themselves.)
 */
class TwoArchitecturesInOneNodeTest {

    /** Greedy, keeping a copy of every logits row it saw. */
    static final class Recorder implements TokenSampler {
        final List<float[]> logits = new ArrayList<>();

        @Override
        public int sample(float[] l, int offset, int width) {
            logits.add(Arrays.copyOfRange(l, offset, offset + width));
            return GreedySampler.INSTANCE.sample(l, offset, width);
        }
    }

    @Test
    void twoArchitecturesAndTwoRecipesRunSideBySideAndEachBatchHoldsOneModelsKey(@TempDir Path dir) throws Exception {
        Path q8 = dir.resolve("llama-tiny-Q8_0.gguf"), v4 = dir.resolve("dsv4-tiny.gguf");
        Synth.write(SynthPreset.LLAMA_TINY, QuantMix.parse("Q8_0"), 7, q8);
        Synth.write(SynthPreset.DSV4_TINY, QuantMix.parse("Q8_0"), 7, v4);
        List<ModelSpec> specs = List.of(new ModelSpec(TestNodes.modelPath(), "llama-q4"), new ModelSpec(q8, "llama-q8"),
                new ModelSpec(v4, "dsv4"));
        NodeConfig config = TestNodes.config();
        config = NodeConfig.of(specs).withAddress("127.0.0.1", 0).withEngine(config.engine()).withScheduler(config.scheduler());
        try (NodeServer node = TestNodes.start(config)) {
            Map<String, List<CompatibilityKey>> keys = new ConcurrentHashMap<>();
            List<ServedModel> models = specs.stream().map(s -> node.models().find(s.id()).orElseThrow()).toList();
            for (ServedModel m : models) {
                List<CompatibilityKey> seen = java.util.Collections.synchronizedList(new ArrayList<>());
                keys.put(m.id(), seen);
                m.scheduler().addListener(e -> { if (e instanceof SchedulerEvent.IterationEvent it) seen.add(it.key()); });
            }
            int[][] prompts = {{1, 5, 9, 13, 2}, {3, 4, 40, 7}, {11, 6, 8, 21, 30, 2, 5}};
            // Alone: one session at a time on the whole node.
            Map<String, List<float[]>> solo = new ConcurrentHashMap<>();
            for (ServedModel m : models) {
                for (int p = 0; p < prompts.length; p++) solo.put(m.id() + "/" + p, run(m, prompts[p]).logits);
            }
            // Together: every model's sessions submitted before any finishes.
            List<Session> sessions = new ArrayList<>();
            Map<Session, String> names = new java.util.HashMap<>();
            Map<Session, Recorder> recorders = new java.util.HashMap<>();
            for (ServedModel m : models) {
                for (int p = 0; p < prompts.length; p++) {
                    Recorder r = new Recorder();
                    Session s = accepted(m.scheduler().submit(SessionRequest.of("t" + p, prompts[p], 6).withSampler(r)));
                    sessions.add(s);
                    names.put(s, m.id() + "/" + p);
                    recorders.put(s, r);
                }
            }
            for (Session s : sessions) s.completion().get();
            for (Session s : sessions) {
                List<float[]> together = recorders.get(s).logits, alone = solo.get(names.get(s));
                assertThat(together).as(names.get(s)).hasSameSizeAs(alone).hasSize(6);
                for (int i = 0; i < alone.size(); i++) {
                    assertThat(Arrays.equals(together.get(i), alone.get(i))).as(names.get(s) + " token " + i + " bits").isTrue();
                }
            }
            for (ServedModel m : models) {
                Engine e = m.engine();
                assertThat(keys.get(m.id())).as(m.id()).isNotEmpty().allSatisfy(k -> {
                    assertThat(k.engine()).isEqualTo(e.id());
                    assertThat(k.recipeId()).isEqualTo(e.recipe().id());
                    assertThat(k.boundarySchemaId()).isEqualTo(e.boundarySchema().id());
                    assertThat(k.stateLayoutId()).isEqualTo(e.stateLayout().id());
                });
            }
            Set<String> architectures = models.stream().map(m -> m.engine().info().architecture()).collect(Collectors.toSet());
            Set<String> recipes = models.stream().map(m -> m.engine().recipe().id()).collect(Collectors.toSet());
            assertThat(architectures).containsExactlyInAnyOrder("llama", "deepseek4");
            assertThat(recipes).hasSize(3);
            // The capability report counts every model's working buffers, DeepSeek-V4's included.
            com.fasterxml.jackson.databind.JsonNode c = Http.json(new Http(node).get("/v1/capabilities"));
            assertThat(c.at("/memory/workspace_uncounted_models").asInt()).isZero();
            assertThat(c.get("models")).hasSize(3).allSatisfy(m ->
                    assertThat(m.at("/engine/workspace_bytes").asLong()).as(m.get("id").asText()).isPositive());
        }
    }

    private static Recorder run(ServedModel m, int[] prompt) throws Exception {
        Recorder r = new Recorder();
        accepted(m.scheduler().submit(SessionRequest.of("solo", prompt, 6).withSampler(r))).completion().get();
        return r;
    }

    private static Session accepted(Submission sub) {
        if (sub instanceof Submission.Accepted a) return a.session();
        throw new AssertionError("rejected: " + sub);
    }
}
