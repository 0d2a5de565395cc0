package dgr.tracker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dgr.node.NodeServer;
import dgr.tracker.cluster.Await;
import dgr.tracker.cluster.Cluster;
import dgr.tracker.cluster.InMemoryLedger;
import dgr.tracker.cluster.StubNode;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Nodes join with the node token, report every second, leave when they stop, and drop out when silent. */
class MembershipTest {
    private static final String AUTH = "Authorization";

    @Test
    void aNodeJoinsWithTheTokenIsListedForTheAdminAndLeavesWhenItStops() {
        try (Cluster c = new Cluster(Cluster.config(), new InMemoryLedger())) {
            NodeServer n = c.join(Cluster.node("n1", 3));
            assertThat(c.get(c.trackerUrl(), "v1/nodes").statusCode()).isEqualTo(401);
            assertThat(c.get(c.trackerUrl(), "v1/nodes", AUTH, "Bearer wrong").statusCode()).isEqualTo(401);
            HttpResponse<String> r = c.get(c.trackerUrl(), "v1/nodes", AUTH, "Bearer " + Cluster.ADMIN_TOKEN);
            assertThat(r.statusCode()).isEqualTo(200);
            JsonNode node = c.json(r.body()).path("data").path(0);
            List<String> fields = new ArrayList<>();
            node.fieldNames().forEachRemaining(fields::add);
            assertThat(fields).contains("id", "url", "healthy", "models", "recommended_max_concurrency", "running",
                    "last_heartbeat");
            assertThat(node.path("id").asText()).isEqualTo("n1");
            assertThat(node.path("url").asText()).isEqualTo("http://127.0.0.1:" + n.port() + "/");
            assertThat(node.path("healthy").asBoolean()).isTrue();
            assertThat(node.path("models").get(0).asText()).isEqualTo(Cluster.MODEL);
            assertThat(node.path("recommended_max_concurrency").asInt()).isEqualTo(3);
            assertThat(node.path("running").asInt()).isZero();
            assertThat(node.path("capacity_measured").asBoolean()).as("--max-batch-rows is configured, not measured").isFalse();
            assertThat(c.json(c.get(c.trackerUrl(), "v1/models").body()).path("data").get(0).path("id").asText())
                    .isEqualTo(Cluster.MODEL);

            c.nodes.remove(n);
            n.close();
            assertThat(c.tracker.tracker().registry().find("n1")).as("a stopping node leaves").isEmpty();
            assertThat(c.json(c.get(c.trackerUrl(), "v1/models").body()).path("data").size()).isZero();
        }
    }

    @Test
    void aHeartbeatWithoutTheNodeTokenIsRefusedAndTheNodeNeverRouted() {
        try (Cluster c = new Cluster(Cluster.config(), new InMemoryLedger())) {
            String hb = "{\"url\":\"http://127.0.0.1:9/\",\"capabilities\":{\"node_id\":\"intruder\",\"ready\":true,"
                    + "\"models\":[{\"id\":\"llama-tiny\",\"concurrency_limit\":{\"max_running_sessions\":4}}]}}";
            HttpResponse<String> none = c.post(c.trackerUrl(), "v1/nodes/heartbeat", hb);
            HttpResponse<String> wrong = c.post(c.trackerUrl(), "v1/nodes/heartbeat", hb, AUTH, "Bearer guess");
            assertThat(none.statusCode()).isEqualTo(401);
            assertThat(wrong.statusCode()).isEqualTo(401);
            assertThat(c.json(wrong.body()).path("error").path("message").asText()).contains("node token");
            assertThat(c.tracker.tracker().registry().all()).isEmpty();
            HttpResponse<String> bad = c.post(c.trackerUrl(), "v1/nodes/heartbeat", "{\"url\":\"ftp://x\"}",
                    AUTH, "Bearer " + Cluster.NODE_TOKEN);
            assertThat(bad.statusCode()).isEqualTo(400);
            assertThat(c.json(bad.body()).path("error").path("param").asText()).isEqualTo("url");
        }
    }

    private static final String QUIET = "{\"node_id\":\"quiet\",\"ready\":true,\"models\":[{\"id\":\"llama-tiny\","
            + "\"recipe_id\":\"r\",\"engine\":{\"id\":\"java-q8/1\"},\"concurrency_limit\":{\"max_running_sessions\":4}}]}";

    @Test
    void aNodeWhoseUrlDoesNotAnswerTheJoinPullOfItsCapabilitiesIsOutOfRoutingAtOnce() {
        try (Cluster c = new Cluster(Cluster.config(), new InMemoryLedger())) {
            String hb = "{\"url\":\"http://127.0.0.1:9/\",\"capabilities\":" + QUIET + "}";
            assertThat(c.post(c.trackerUrl(), "v1/nodes/heartbeat", hb, AUTH, "Bearer " + Cluster.NODE_TOKEN).statusCode())
                    .isEqualTo(200);
            var reg = c.tracker.tracker().registry();
            var node = reg.find("quiet").orElseThrow();
            Await.until("the unreachable node out of routing", Duration.ofSeconds(5), () -> !reg.healthy(node));
            assertThat(reg.unhealthyReason(node)).contains("GET /v1/capabilities (join) failed");
        }
    }

    @Test
    void aLateHeartbeatIsPulledForANodeThatAnswersStaysInRoutingAndIsOutAtOnceWhenItStopsAnswering() {
        TrackerConfig config = Cluster.config().withHeartbeatTimeout(Duration.ofMillis(2000));
        try (Cluster c = new Cluster(config, new InMemoryLedger()); StubNode stub = new StubNode(QUIET)) {
            assertThat(c.post(c.trackerUrl(), "v1/nodes/heartbeat", stub.heartbeat(), AUTH, "Bearer " + Cluster.NODE_TOKEN)
                    .statusCode()).isEqualTo(200);
            var reg = c.tracker.tracker().registry();
            var node = reg.find("quiet").orElseThrow();
            Await.until("the join pull", Duration.ofSeconds(5), () -> stub.capabilityPulls.get() >= 1);
            // No heartbeat after the first: from half the heartbeat timeout on, the tracker pulls the report.
            Await.until("two pulls of a silent node", Duration.ofSeconds(10), () -> stub.capabilityPulls.get() >= 3);
            assertThat(reg.healthy(node)).as("a node that answers is in routing without heartbeats").isTrue();
            stub.close();
            Await.until("the node out of routing", Duration.ofSeconds(10), () -> !reg.healthy(node));
            assertThat(reg.unhealthyReason(node)).contains("GET /v1/capabilities (stale) failed");
            assertThat(c.json(c.get(c.trackerUrl(), "v1/models").body()).path("data").size()).isZero();
            String again = "{\"url\":\"http://127.0.0.1:9/\",\"capabilities\":" + QUIET + "}";
            assertThat(c.post(c.trackerUrl(), "v1/nodes/heartbeat", again, AUTH, "Bearer " + Cluster.NODE_TOKEN).statusCode())
                    .isEqualTo(200);
            assertThat(reg.unhealthyReason(node)).as("back at its next report").isNull();
        }
    }
}
