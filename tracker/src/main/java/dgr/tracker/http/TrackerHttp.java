package dgr.tracker.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.tracker.Tracker;
import dgr.tracker.metrics.TrackerMetrics;
import dgr.tracker.registry.ModelCapacity;
import dgr.tracker.registry.RegisteredNode;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.util.TreeMap;

/**
 * The tracker's HTTP API. One catch-all handler dispatches on (method, path), so unknown routes (404),
 * wrong methods (405), authentication and every error share OpenAI's error shape, as on a node.
 *
 * <p>Front door (clients): {@code POST /v1/completions}, {@code POST /v1/chat/completions},
 * {@code GET /v1/models}, {@code /health}, {@code /metrics}. Nodes: {@code POST /v1/nodes/heartbeat},
 * {@code DELETE /v1/nodes/ID}, {@code GET /v1/stages?recipe=R} (node token). Operators: {@code GET /v1/nodes}, {@code POST /v1/nodes},
 * {@code DELETE /v1/nodes/ID}, {@code GET /v1/usage?tenant=T} (admin token).
 */
public final class TrackerHttp {
    private static final System.Logger LOG = System.getLogger(TrackerHttp.class.getName());

    private final ObjectMapper mapper = new ObjectMapper();
    private final Tracker tracker;
    private final FrontDoor frontDoor;
    private final NodesApi nodesApi;
    private final UsageApi usageApi;
    private final StagesApi stagesApi;

    public TrackerHttp(Tracker tracker) {
        this.tracker = tracker;
        this.frontDoor = new FrontDoor(tracker, mapper);
        this.nodesApi = new NodesApi(tracker, mapper);
        this.usageApi = new UsageApi(tracker, mapper);
        this.stagesApi = new StagesApi(tracker, mapper);
    }

    /** The Helidon handler: every request of every route comes here on its own virtual thread. */
    public void handle(ServerRequest req, ServerResponse res) {
        try {
            dispatch(req, res);
        } catch (ApiFailure e) {
            send(res, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            send(res, ApiFailure.unavailable("The tracker is shutting down.", "unavailable"));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "request " + req.prologue().method() + " " + req.path().path()
                    + " failed", e);
            send(res, new ApiFailure(500, "server_error", "The server had an error while processing your request.",
                    null, "internal_error"));
        }
    }

    private void dispatch(ServerRequest req, ServerResponse res) throws InterruptedException {
        String path = req.path().path();
        if (path.length() > 1 && path.endsWith("/")) path = path.substring(0, path.length() - 1);
        Method method = req.prologue().method();
        if (path.startsWith("/v1/nodes/") && !path.equals("/v1/nodes/heartbeat")) {
            require(path, method, Method.DELETE);
            nodesApi.remove(req, res, path.substring("/v1/nodes/".length()));
            return;
        }
        if (path.startsWith("/v1/models/") && path.length() > "/v1/models/".length()) {
            require(path, method, Method.GET);
            frontDoor.authenticate(req);
            model(res, path.substring("/v1/models/".length()));
            return;
        }
        switch (path) {
            case "/health" -> {
                require(path, method, Method.GET);
                health(res);
            }
            case "/metrics" -> {
                require(path, method, Method.GET);
                res.status(Status.OK_200);
                res.header(HeaderNames.CONTENT_TYPE, TrackerMetrics.CONTENT_TYPE);
                res.send(tracker.metrics().scrape());
            }
            case "/v1/models" -> {
                require(path, method, Method.GET);
                frontDoor.authenticate(req);
                HttpIo.sendJson(res, mapper, 200, modelList());
            }
            case "/v1/completions", "/v1/chat/completions" -> {
                require(path, method, Method.POST);
                frontDoor.generate(req, res, path);
            }
            case "/v1/nodes" -> {
                if (method.equals(Method.GET)) nodesApi.list(req, res);
                else if (method.equals(Method.POST)) nodesApi.registerBackend(req, res);
                else throw new MethodNotAllowed(path, method, "GET, POST");
            }
            case "/v1/usage" -> {
                require(path, method, Method.GET);
                usageApi.usage(req, res);
            }
            case "/v1/stages" -> {
                require(path, method, Method.GET);
                stagesApi.stages(req, res);
            }
            case "/v1/nodes/heartbeat" -> {
                require(path, method, Method.POST);
                nodesApi.heartbeat(req, res);
            }
            default -> throw ApiFailure.notFound("Unknown request URL: " + method.text() + " " + path + ".", null,
                    "unknown_url");
        }
    }

    private static void require(String path, Method method, Method allowed) {
        if (!method.equals(allowed)) throw new MethodNotAllowed(path, method, allowed.text());
    }

    private void health(ServerResponse res) {
        ObjectNode body = JsonNodeFactory.instance.objectNode();
        body.put("status", "ok");
        body.put("nodes_up", tracker.registry().all().stream().filter(tracker.registry()::healthy).count());
        HttpIo.sendJson(res, mapper, 200, body);
    }

    /** Every model some healthy node serves, once each. */
    private ObjectNode modelList() {
        TreeMap<String, Integer> models = new TreeMap<>();
        for (RegisteredNode n : tracker.registry().all()) {
            if (!tracker.registry().healthy(n)) continue;
            for (ModelCapacity m : n.models().values()) models.merge(m.model(), m.contextLength(), Math::max);
        }
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.put("object", "list");
        ArrayNode data = root.putArray("data");
        models.forEach((id, ctx) -> data.add(card(id, ctx)));
        return root;
    }

    private void model(ServerResponse res, String id) {
        ObjectNode list = modelList();
        for (var card : list.get("data")) {
            if (card.get("id").asText().equals(id)) {
                HttpIo.sendJson(res, mapper, 200, card);
                return;
            }
        }
        throw ApiFailure.notFound("The model '" + id + "' does not exist.", "model", "model_not_found");
    }

    private static ObjectNode card(String id, int contextLength) {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("id", id);
        o.put("object", "model");
        o.put("created", 0);
        o.put("owned_by", "dgr");
        if (contextLength > 0) o.put("context_length", contextLength);
        return o;
    }

    private void send(ServerResponse res, ApiFailure e) {
        if (res.isSent()) return;
        if (e.status() == 429) res.header(HeaderNames.RETRY_AFTER, "1");
        if (e instanceof MethodNotAllowed m) res.header(HeaderNames.ALLOW, m.allowed);
        if (e.status() == 401) res.header(HeaderNames.WWW_AUTHENTICATE, "Bearer");
        HttpIo.sendJson(res, mapper, e.status(), e.body());
    }

    private static final class MethodNotAllowed extends ApiFailure {
        final String allowed;

        MethodNotAllowed(String path, Method method, String allowed) {
            super(405, "invalid_request_error", "Method " + method.text() + " is not allowed for " + path
                    + "; use " + allowed + ".", null, "method_not_allowed");
            this.allowed = allowed;
        }
    }
}
