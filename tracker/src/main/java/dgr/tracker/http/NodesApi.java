package dgr.tracker.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.tracker.Tracker;
import dgr.tracker.registry.Backend;
import dgr.tracker.registry.BackendPoller;
import dgr.tracker.registry.CapabilityReports;
import dgr.tracker.registry.ModelCapacity;
import dgr.tracker.registry.NodeRegistry;
import dgr.tracker.registry.RegisteredNode;
import dgr.tracker.registry.StageSpan;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.net.URI;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The node–tracker channel and the operators' view of it (docs/tracker.md, "Node–tracker protocol").
 * A dgr node joins and stays with {@code POST /v1/nodes/heartbeat} (its URL and capability report,
 * node token), leaves with {@code DELETE /v1/nodes/ID}; an operator lists nodes with
 * {@code GET /v1/nodes} and registers an OpenAI server that is not dgr with {@code POST /v1/nodes}
 * (admin token).
 */
final class NodesApi {
    static final long HEARTBEAT_INTERVAL_MS = 1000;
    /** Capacity of a backend's model when its saturation file has no recommendation and none is given. */
    private static final int DEFAULT_BACKEND_CONCURRENCY = 4;

    private final Tracker tracker;
    private final ObjectMapper mapper;

    NodesApi(Tracker tracker, ObjectMapper mapper) {
        this.tracker = tracker;
        this.mapper = mapper;
    }

    void heartbeat(ServerRequest req, ServerResponse res) {
        requireNodeToken(tracker, req);
        JsonNode body = json(req);
        URI url = url(body.path("url"), "url");
        JsonNode caps = body.path("capabilities");
        if (!caps.isObject()) throw ApiFailure.invalid("'capabilities' must be the node's capability report (an object).", "capabilities");
        String id;
        Map<String, ModelCapacity> models;
        StageSpan stage;
        try {
            id = CapabilityReports.nodeId(caps);
            models = CapabilityReports.models(caps);
            stage = CapabilityReports.stage(caps);
        } catch (CapabilityReports.BadReport e) {
            throw ApiFailure.invalid(e.getMessage(), e.field());
        }
        boolean joined;
        try {
            joined = tracker.registry().report(id, Backend.DGR, url, tracker.config().nodeToken(), models, stage);
        } catch (IllegalArgumentException e) {
            throw new ApiFailure(409, "invalid_request_error", e.getMessage(), "capabilities.node_id", "node_id_taken");
        }
        tracker.capabilities().reported(id, joined, models);
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        out.put("node_id", id);
        out.put("joined", joined);
        out.put("heartbeat_interval_ms", HEARTBEAT_INTERVAL_MS);
        out.put("heartbeat_timeout_ms", tracker.config().heartbeatTimeout().toMillis());
        HttpIo.sendJson(res, mapper, 200, out);
    }

    /** A node removes itself (node token), or an operator removes any node (admin token). */
    void remove(ServerRequest req, ServerResponse res, String id) {
        String token = HttpIo.bearer(req).orElse(null);
        boolean admin = HttpIo.tokenMatches(token, tracker.config().adminToken());
        if (!admin && !HttpIo.tokenMatches(token, tracker.config().nodeToken())) {
            throw ApiFailure.unauthorized("Removing a node needs the node token or the admin token.");
        }
        tracker.poller().unregister(id);
        if (!tracker.registry().remove(id)) throw ApiFailure.notFound("No node '" + id + "' is registered.", "id", "node_not_found");
        res.status(204);
        res.send();
    }

    void list(ServerRequest req, ServerResponse res) {
        requireAdmin(req);
        NodeRegistry reg = tracker.registry();
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.put("object", "list");
        root.put("routing", tracker.router().policy().flag());
        root.put("queued_requests", tracker.router().queued());
        ArrayNode data = root.putArray("data");
        for (RegisteredNode n : reg.all()) {
            ObjectNode o = data.addObject();
            o.put("id", n.id());
            o.put("url", n.url().toString());
            o.put("healthy", reg.healthy(n));
            ArrayNode models = o.putArray("models");
            int recommended = 0;
            int running = 0;
            boolean measured = true;
            for (ModelCapacity m : n.models().values()) {
                models.add(m.model());
                recommended += m.recommendedMaxConcurrency();
                running += n.running(m.model());
                measured &= m.measured();
            }
            o.put("recommended_max_concurrency", recommended);
            o.put("running", running);
            o.put("last_heartbeat", n.lastReport() == null ? null : n.lastReport().toString());
            // What else helps an operator: why a node is out, where its numbers come from, what it can do.
            o.put("unhealthy_reason", reg.unhealthyReason(n));
            o.put("backend", n.backend().wireName());
            o.put("capacity_measured", measured && !n.models().isEmpty());
            o.put("resumes_mid_stream", n.backend().resumesMidStream());
            o.put("exact_accounting", n.backend().exactAccounting());
            o.put("routed_total", n.routedTotal());
            o.put("failures_total", n.failuresTotal());
            StageSpan stage = n.stage();
            if (stage != null) {
                // A later stage of a route: offered to heads as an alternate (GET /v1/stages), never routed requests.
                ObjectNode st = o.putObject("stage");
                st.put("address", stage.address());
                st.putArray("span").add(stage.firstLayer()).add(stage.endLayer());
                st.put("model_recipe_id", stage.modelRecipeId());
                st.put("sessions", stage.sessions());
                st.put("headroom", stage.headroom());
            }
            ArrayNode detail = o.putArray("model_capacity");
            for (ModelCapacity m : n.models().values()) {
                ObjectNode d = detail.addObject();
                d.put("model", m.model());
                d.put("recipe_id", m.recipeId());
                d.put("engine", m.engine());
                d.put("expected_session_tokens_per_second", m.sessionThroughput());
                d.put("expected_output_tokens_per_second", m.outputThroughput());
                d.put("recommended_max_concurrency", m.recommendedMaxConcurrency());
                d.put("source", m.limitSource());
                d.put("measured", m.measured());
                d.put("running", n.running(m.model()));
                d.put("in_flight_from_tracker", n.inFlight(m.model()));
                d.put("headroom", n.headroom(m.model()));
                d.put("waiting_reported", m.reportedWaiting());
            }
        }
        HttpIo.sendJson(res, mapper, 200, root);
    }

    /**
     * Registers an OpenAI-compatible server that is not dgr: {@code {"url", "saturation", "id", "api_key",
     * "max_concurrency"}}; only url is required. Each model the server lists gets the recommendation of the
     * saturation file whose model_name names it (the only one, when the file has one), else max_concurrency
     * (default 4) marked as not measured.
     */
    void registerBackend(ServerRequest req, ServerResponse res) {
        requireAdmin(req);
        JsonNode body = json(req);
        URI url = url(body.path("url"), "url");
        String id = body.hasNonNull("id") ? text(body.get("id"), "id") : "openai-" + url.getHost() + ":" + url.getPort();
        String apiKey = body.hasNonNull("api_key") ? text(body.get("api_key"), "api_key") : null;
        int fallbackMax = DEFAULT_BACKEND_CONCURRENCY;
        if (body.has("max_concurrency")) {
            JsonNode mc = body.get("max_concurrency");
            if (!mc.canConvertToInt() || !mc.isIntegralNumber() || mc.asInt() < 1) {
                throw ApiFailure.invalid("'max_concurrency' must be an integer >= 1, got " + mc + ".", "max_concurrency");
            }
            fallbackMax = mc.asInt();
        }
        Map<String, BackendPoller.Capacity> byModel = new HashMap<>();
        BackendPoller.Capacity fallback = new BackendPoller.Capacity(fallbackMax, false,
                body.has("max_concurrency") ? "operator" : "default", 0, 0);
        JsonNode sat = body.path("saturation");
        if (!sat.isMissingNode() && !sat.isNull()) {
            if (!sat.isObject() || sat.path("schema_version").asInt(-1) != 1 || !sat.path("recommendations").isArray()) {
                throw ApiFailure.invalid("'saturation' must be a saturation.json of schema_version 1 (from dgr bench --url).",
                        "saturation");
            }
            JsonNode recs = sat.get("recommendations");
            for (JsonNode r : recs) {
                int max = r.path("recommended_max_concurrency").asInt(0);
                if (max < 1) {
                    throw ApiFailure.invalid("'saturation': a recommendation's recommended_max_concurrency must be >= 1, got "
                            + r.path("recommended_max_concurrency") + ".", "saturation");
                }
                BackendPoller.Capacity c = new BackendPoller.Capacity(max, true, "saturation",
                        r.path("expected_per_session_output_throughput").asDouble(0),
                        r.path("expected_output_throughput").asDouble(0));
                if (r.hasNonNull("model_name")) byModel.put(r.get("model_name").asText(), c);
                if (recs.size() == 1) fallback = c;
            }
        }
        if (tracker.registry().find(id).filter(n -> n.backend() != Backend.OPENAI).isPresent()) {
            throw new ApiFailure(409, "invalid_request_error", "Node id '" + id + "' is taken by a dgr node.", "id", "node_id_taken");
        }
        boolean up = tracker.poller().register(new BackendPoller.Registration(id, url, apiKey, byModel, fallback));
        if (!up) {
            tracker.poller().unregister(id);
            tracker.registry().remove(id);
            throw new ApiFailure(502, "server_error", "The backend at " + url + " did not answer GET /v1/models with a"
                    + " model list; it was not registered.", "url", "backend_unreachable");
        }
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        out.put("id", id);
        out.put("backend", Backend.OPENAI.wireName());
        out.put("resumes_mid_stream", false);
        HttpIo.sendJson(res, mapper, 201, out);
    }

    /** 401 unless the request presents the node token (compared in constant time). */
    static void requireNodeToken(Tracker tracker, ServerRequest req) {
        if (tracker.config().nodeToken() == null) {
            throw ApiFailure.unauthorized("This tracker takes no nodes: it was started without --node-token.");
        }
        if (!HttpIo.tokenMatches(HttpIo.bearer(req).orElse(null), tracker.config().nodeToken())) {
            throw ApiFailure.unauthorized("Incorrect node token: start the node with --node-token set to the tracker's.");
        }
    }

    private void requireAdmin(ServerRequest req) {
        if (!HttpIo.tokenMatches(HttpIo.bearer(req).orElse(null), tracker.config().adminToken())) {
            throw ApiFailure.unauthorized(tracker.config().adminToken() == null
                    ? "This tracker has no admin API: it was started without --admin-token."
                    : "This endpoint needs the admin token (Authorization: Bearer ADMIN_TOKEN).");
        }
    }

    private JsonNode json(ServerRequest req) {
        byte[] bytes = HttpIo.body(req, tracker.config().maxBodyBytes());
        try {
            JsonNode n = mapper.readTree(bytes);
            if (n == null || !n.isObject()) throw ApiFailure.invalid("The body must be a JSON object.", null);
            return n;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw ApiFailure.invalid("The body is not valid JSON: " + e.getOriginalMessage() + ".", null);
        } catch (IOException e) {
            throw ApiFailure.invalid("We could not read the body of your request.", null);
        }
    }

    private static String text(JsonNode n, String field) {
        if (!n.isTextual() || n.asText().isBlank()) throw ApiFailure.invalid("'" + field + "' must be a non-empty string.", field);
        return n.asText();
    }

    /** An absolute http(s) URL; a trailing {@code /v1} (as {@code dgr bench --url} takes) is dropped. */
    private static URI url(JsonNode n, String field) {
        String s = text(n, field).trim();
        while (s.endsWith("/")) s = s.substring(0, s.length() - 1);
        if (s.endsWith("/v1")) s = s.substring(0, s.length() - 3);
        try {
            URI u = new URI(s + "/");
            if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme())) || u.getHost() == null) {
                throw ApiFailure.invalid("'" + field + "' must be an absolute http(s) URL, got '" + n.asText() + "'.", field);
            }
            return u;
        } catch (java.net.URISyntaxException e) {
            throw ApiFailure.invalid("'" + field + "' is not a URL: " + e.getMessage() + ".", field);
        }
    }
}
