package dgr.tracker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dgr.engine.EngineOptions;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import dgr.node.ModelSpec;
import dgr.node.NodeConfig;
import dgr.node.NodeServer;
import dgr.node.http.ListenerLimits;
import dgr.node.stage.StagePlan;
import dgr.tracker.cluster.Await;
import dgr.tracker.cluster.Cluster;
import dgr.tracker.cluster.InMemoryLedger;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Later stages of a route join the tracker with their span, and a head with {@code --tracker} gets the
 * live ones serving exactly a hop's span of its model as that hop's alternates ({@code GET /v1/stages},
 * node token only). Real nodes in this JVM on free 127.0.0.1 ports: a head [0,1) whose route names only
 * s1 [1,4); s2 [1,4) of the same model; s3 [2,4) and s5 [1,3) of other spans; s4 [1,4) of another model.
 */
class StageAlternatesTest {
    private static final String AUTH = "Authorization";
    private static final String CLUSTER_TOKEN = "stage-alternates-cluster";
    /** llama-tiny's shape with four layers, so spans can differ. */
    private static final SynthPreset LLAMA_TINY4 = new SynthPreset("llama-tiny4", "llama", 256, 4, 4, 2, 768, 2048, 10000f, false, "tiny-gpt2");

    @Test
    void aHeadGetsOnlyLiveStagesOfItsModelAndExactHopSpanAsAlternatesAndOneThatLeavesDropsOut() throws Exception {
        Path dir = Files.createTempDirectory("dgr-stage-alternates");
        Path model = dir.resolve("m.gguf"), other = dir.resolve("other.gguf");
        Synth.write(LLAMA_TINY4, QuantMix.parse("Q4_0"), 7, model);
        Synth.write(LLAMA_TINY4, QuantMix.parse("Q4_0"), 8, other);
        List<NodeServer> started = new ArrayList<>();
        try (Cluster c = new Cluster(Cluster.config(), new InMemoryLedger())) {
            NodeServer s1 = stage(started, c, "s1", model, "1:4");
            NodeServer s2 = stage(started, c, "s2", model, "1:4");
            stage(started, c, "s3", model, "2:4");
            stage(started, c, "s4", other, "1:4");
            stage(started, c, "s5", model, "1:3");
            String recipe = capabilities(c, s1).path("stage").path("model_recipe_id").asText();
            assertThat(recipe).isNotBlank();
            var reg = c.tracker.tracker().registry();
            Await.until("five stages in the registry", Duration.ofSeconds(20), () -> reg.all().stream().filter(n -> n.stage() != null).count() == 5);
            assertThat(reg.all()).as("a later stage serves no model to clients: never routed to").allMatch(n -> n.models().isEmpty());

            JsonNode hop = c.json(stages(c, "recipe=" + recipe + "&first_layer=1&end_layer=4", Cluster.NODE_TOKEN).body());
            assertThat(addresses(hop)).containsExactlyInAnyOrder(address(s1), address(s2));
            JsonNode first = hop.path("data").path(0);
            assertThat(first.path("state_layout_id").asText()).startsWith("llama-kv-");
            assertThat(first.path("boundary_schema_id").asText()).isNotBlank();
            assertThat(first.path("engine").asText()).isNotBlank();
            JsonNode all = c.json(stages(c, "recipe=" + recipe, Cluster.NODE_TOKEN).body());
            assertThat(addresses(all)).as("every span of the model, none of the other model")
                    .containsExactlyInAnyOrder(address(s1), address(s2), address(started.get(2)), address(started.get(4)));

            NodeServer head = head(started, c, model, address(s1));
            Await.until("the head's hop offered s2", Duration.ofSeconds(20), () -> alternates(c, head).equals(List.of(address(s2))));
            // Several answers later still only s2: s3 (other span), s4 (other model), s5 (other span) are never offered.
            long until = System.nanoTime() + 2_500_000_000L;
            while (System.nanoTime() < until) {
                assertThat(alternates(c, head)).containsExactly(address(s2));
                java.util.concurrent.locks.LockSupport.parkNanos(100_000_000);
            }

            started.remove(s2);
            s2.close(); // leaves the tracker
            Await.until("s2 dropped out of the head's alternates", Duration.ofSeconds(20), () -> alternates(c, head).isEmpty());
        } finally {
            for (NodeServer n : started) n.close();
        }
    }

    @Test
    void theStageListIsRefusedWithoutTheNodeTokenInOpenAisErrorShape() {
        try (Cluster c = new Cluster(Cluster.config(), new InMemoryLedger())) {
            for (String token : new String[] {null, "guess", Cluster.ADMIN_TOKEN}) {
                HttpResponse<String> r = stages(c, "recipe=abc", token);
                assertThat(r.statusCode()).as("token %s", token).isEqualTo(401);
                JsonNode error = c.json(r.body()).path("error");
                assertThat(error.path("message").asText()).contains("node token");
                assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
                assertThat(error.has("param")).isTrue();
                assertThat(error.path("code").asText()).isEqualTo("invalid_api_key");
            }
            HttpResponse<String> noRecipe = stages(c, "first_layer=1&end_layer=4", Cluster.NODE_TOKEN);
            assertThat(noRecipe.statusCode()).isEqualTo(400);
            assertThat(c.json(noRecipe.body()).path("error").path("param").asText()).isEqualTo("recipe");
            HttpResponse<String> halfSpan = stages(c, "recipe=abc&first_layer=1", Cluster.NODE_TOKEN);
            assertThat(halfSpan.statusCode()).isEqualTo(400);
            assertThat(c.json(halfSpan.body()).path("error").path("param").asText()).isEqualTo("end_layer");
            HttpResponse<String> badLayer = stages(c, "recipe=abc&first_layer=x&end_layer=4", Cluster.NODE_TOKEN);
            assertThat(c.json(badLayer.body()).path("error").path("message").asText()).contains("'first_layer' must be a layer number");
        }
    }

    private static HttpResponse<String> stages(Cluster c, String query, String token) {
        return token == null ? c.get(c.trackerUrl(), "v1/stages?" + query) : c.get(c.trackerUrl(), "v1/stages?" + query, AUTH, "Bearer " + token);
    }

    private static List<String> addresses(JsonNode list) {
        List<String> out = new ArrayList<>();
        for (JsonNode s : list.path("data")) out.add(s.path("address").asText());
        return out;
    }

    private static List<String> alternates(Cluster c, NodeServer head) {
        List<String> out = new ArrayList<>();
        for (JsonNode a : capabilities(c, head).path("stage").path("neighbours").path("tracker_alternates").path(0)) out.add(a.asText());
        return out;
    }

    private static JsonNode capabilities(Cluster c, NodeServer n) {
        return c.json(c.get(URI.create("http://127.0.0.1:" + n.port() + "/"), "v1/capabilities").body());
    }

    private static String address(NodeServer stage) { return "127.0.0.1:" + stage.stagePort(); }

    private static NodeServer stage(List<NodeServer> started, Cluster c, String id, Path model, String layers) {
        StagePlan plan = StagePlan.of(layers, null, 0, CLUSTER_TOKEN, Duration.ofSeconds(2), Duration.ofSeconds(1));
        return start(started, c, id, model, plan);
    }

    private static NodeServer head(List<NodeServer> started, Cluster c, Path model, String route) {
        StagePlan plan = StagePlan.of("0:1", route, null, CLUSTER_TOKEN, Duration.ofSeconds(2), Duration.ofSeconds(1));
        return start(started, c, "head", model, plan);
    }

    private static NodeServer start(List<NodeServer> started, Cluster c, String id, Path model, StagePlan plan) {
        NodeConfig config = NodeConfig.of(List.of(new ModelSpec(model, "m"))).withAddress("127.0.0.1", 0).withNodeId(id)
                .withEngine(EngineOptions.defaults().withThreads(1).withSpan(plan.firstLayer(), plan.endLayer()))
                .withNodeToken(Cluster.NODE_TOKEN);
        try {
            NodeServer n = NodeServer.start(config, ListenerLimits.defaults(), plan);
            started.add(n);
            n.joinTracker(c.trackerUrl());
            return n;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
