package dgr.tracker;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.node.NodeServer;
import dgr.tracker.cluster.Await;
import dgr.tracker.cluster.Cluster;
import dgr.tracker.cluster.InMemoryLedger;
import dgr.tracker.cluster.StubNode;
import dgr.tracker.ledger.Settlement;
import dgr.tracker.routing.Decision;
import dgr.tracker.routing.Lease;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The front door over one real node: keys and tenants, retry before the first byte, 429 when full, errors. */
class FrontDoorTest {
    private static final InMemoryLedger LEDGER = new InMemoryLedger().withKey("sk-alice", "alice");
    private static Cluster cluster;
    private static NodeServer node;
    private static final String BODY = "{\"model\":\"llama-tiny\",\"prompt\":\"Hello\",\"max_tokens\":6,\"temperature\":0}";

    @BeforeAll
    static void start() {
        cluster = new Cluster(Cluster.config().withQueue(Duration.ofMillis(200), 4), LEDGER);
        node = cluster.join(Cluster.node("only", 1));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    private static HttpResponse<String> post(String body) {
        return cluster.post(cluster.trackerUrl(), "v1/completions", body, "Authorization", "Bearer sk-alice");
    }

    @Test
    void aRequestIsAnsweredAsTheNodeAnswersAndSettledWithTheNodesExactUsage() {
        HttpResponse<String> viaTracker = post(BODY);
        HttpResponse<String> direct = cluster.post(Cluster.nodeUrl(node), "v1/completions", BODY);
        assertThat(viaTracker.statusCode()).isEqualTo(200);
        assertThat(cluster.json(viaTracker.body()).path("choices")).isEqualTo(cluster.json(direct.body()).path("choices"));
        assertThat(cluster.json(viaTracker.body()).path("usage")).isEqualTo(cluster.json(direct.body()).path("usage"));
        Settlement s = LEDGER.settled.getLast();
        assertThat(s.nodes()).containsExactly("only");
        assertThat(s.generatedTokens()).isEqualTo(6);
        assertThat(s.promptTokens()).isEqualTo(cluster.json(direct.body()).path("usage").path("prompt_tokens").asLong());
        assertThat(s.outcome()).isEqualTo(Settlement.Outcome.LENGTH);
        assertThat(LEDGER.reserved.getLast().holder().tenant()).isEqualTo("alice");
        assertThat(LEDGER.reserved.getLast().reservedTokens()).isGreaterThanOrEqualTo(6 + 1);
    }

    @Test
    void withoutAValidKeyTheTrackerAnswers401() {
        HttpResponse<String> none = cluster.post(cluster.trackerUrl(), "v1/completions", BODY);
        HttpResponse<String> wrong = cluster.post(cluster.trackerUrl(), "v1/completions", BODY, "Authorization", "Bearer sk-eve");
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(cluster.json(wrong.body()).path("error").path("code").asText()).isEqualTo("invalid_api_key");
    }

    @Test
    void badRequestsGetOpenAiErrorsNamingTheField() {
        assertThat(post("{\"prompt\":\"x\"}").statusCode()).isEqualTo(400);
        assertThat(cluster.json(post("{\"prompt\":\"x\"}").body()).path("error").path("param").asText()).isEqualTo("model");
        assertThat(post("{not json").statusCode()).isEqualTo(400);
        HttpResponse<String> unknown = post("{\"model\":\"nope\",\"prompt\":\"x\"}");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(cluster.json(unknown.body()).path("error").path("code").asText()).isEqualTo("model_not_found");
        // A request the node refuses (max_tokens beyond the context) comes back as the node said it, not retried.
        HttpResponse<String> tooLong = post("{\"model\":\"llama-tiny\",\"prompt\":\"x\",\"max_tokens\":100000000}");
        assertThat(tooLong.statusCode()).isEqualTo(400);
        assertThat(cluster.json(tooLong.body()).path("error").path("param").asText()).isEqualTo("max_tokens");
        HttpResponse<String> wrongMethod = cluster.get(cluster.trackerUrl(), "v1/completions");
        assertThat(wrongMethod.statusCode()).isEqualTo(405);
    }

    @Test
    void whenEveryNodeIsAtItsRecommendationTheRequestWaitsThenGets429WithRetryAfter() throws Exception {
        Decision d = cluster.tracker.tracker().router().route(Cluster.MODEL, null, Set.of());
        try (Lease held = ((Decision.Routed) d).lease()) {
            HttpResponse<String> r = post(BODY);
            assertThat(r.statusCode()).isEqualTo(429);
            assertThat(r.headers().firstValue("Retry-After")).contains("1");
            assertThat(cluster.json(r.body()).path("error").path("code").asText()).isEqualTo("cluster_full");
            assertThat(LEDGER.settled.getLast().outcome()).isEqualTo(Settlement.Outcome.FAILED);
        }
        assertThat(post(BODY).statusCode()).as("served again once the slot is free").isEqualTo(200);
    }

    @Test
    void aNodeThatFailsBeforeItsFirstByteIsLeftOutAndTheRequestRetriedInvisibly() throws Exception {
        // It answers the tracker's pull of its capabilities (so it joins) and drops every request unanswered.
        try (StubNode dead = new StubNode("{\"node_id\":\"dead\",\"ready\":true,\"models\":[{\"id\":\"llama-tiny\","
                + "\"recipe_id\":\"r\",\"concurrency_limit\":{\"max_running_sessions\":64}}]}")) {
            var reg = cluster.tracker.tracker().registry();
            for (boolean stream : new boolean[] {false, true}) {
                // (Re-)report, so the dead node is in routing and preferred (more headroom) for each round.
                cluster.post(cluster.trackerUrl(), "v1/nodes/heartbeat", dead.heartbeat(), "Authorization", "Bearer " + Cluster.NODE_TOKEN);
                Await.until("the stub in routing and the real node free", java.time.Duration.ofSeconds(10),
                        () -> reg.find("dead").map(reg::healthy).orElse(false)
                                && reg.find("only").map(o -> o.headroom(Cluster.MODEL) > 0).orElse(false));
                HttpResponse<String> r = post(BODY.replace("}", ",\"stream\":" + stream + "}"));
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.body()).doesNotContain("error");
                assertThat(LEDGER.settled.getLast().nodes()).endsWith("only");
            }
            assertThat(dead.dropped.get()).as("both requests went to the failing node first").isEqualTo(2);
            assertThat(LEDGER.settled.getLast().nodes()).containsExactly("dead", "only");
        } finally {
            cluster.tracker.tracker().registry().remove("dead");
        }
    }
}
