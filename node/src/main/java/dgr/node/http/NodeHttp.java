package dgr.node.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.node.ApiKeys;
import dgr.node.accounting.AccountingApi;
import dgr.node.ServingOptions;
import dgr.node.accounting.RecentRequests;
import dgr.node.api.ApiError;
import dgr.node.api.ChatRequest;
import dgr.node.api.CompletionRequest;
import dgr.node.api.ErrorBody;
import dgr.node.api.GenerationParams;
import dgr.node.api.PromptInput;
import dgr.node.api.RequestParser;
import dgr.node.api.ResponseFormat;
import dgr.node.metrics.NodeMetrics;
import dgr.node.model.ModelRegistry;
import dgr.node.model.ServedModel;
import dgr.node.tracker.RelayExtension;
import dgr.node.tracker.TrackerTrust;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The node's HTTP API. One catch-all handler dispatches on (method, path) itself, so unknown routes
 * (404), wrong methods (405), authentication and every error share OpenAI's error shape, whatever
 * the HTTP library would answer on its own.
 */
public final class NodeHttp {
    private static final System.Logger LOG = System.getLogger(NodeHttp.class.getName());
    /** Completions' default max_tokens in OpenAI's API; chat defaults to the rest of the context. */
    private static final int COMPLETIONS_DEFAULT_MAX_TOKENS = 16;
    private static final String OPEN_TENANT = "default";

    /** The tracker's request id, under which the node keeps a request's accounting ({@link RecentRequests}). */
    public static final String REQUEST_ID_HEADER = "X-Dgr-Request-Id";

    private enum Route { HEALTH, METRICS, MODELS, MODEL, CAPABILITIES, COMPLETIONS, CHAT, ACCOUNTING }

    private static final Map<String, Method> METHODS = Map.of(
            "/health", Method.GET, "/metrics", Method.GET, "/v1/models", Method.GET,
            "/v1/capabilities", Method.GET, "/v1/completions", Method.POST, "/v1/chat/completions", Method.POST,
            "/v1/accounting", Method.POST);

    private final ObjectMapper mapper = new ObjectMapper();
    private final RequestParser parser = new RequestParser();
    private final ModelRegistry models;
    private final ApiKeys keys;
    private final NodeMetrics metrics;
    private final Supplier<JsonNode> capabilities;
    private final long maxBodyBytes;
    private final Generation generation;
    private final AccountingApi accounting;
    private final Cors cors;
    private volatile TrackerTrust tracker = TrackerTrust.NONE;
    private ConnectionGuard guard;
    private ClientFaultLog faults = new ClientFaultLog(Duration.ofSeconds(1));

    public NodeHttp(ModelRegistry models, ApiKeys keys, NodeMetrics metrics, Supplier<JsonNode> capabilities,
                    long maxBodyBytes, Duration requestTimeout) {
        this(models, keys, metrics, capabilities, maxBodyBytes, requestTimeout,
                new RecentRequests(RecentRequests.DEFAULT_CAPACITY, java.time.Clock.systemUTC()), null,
                ServingOptions.defaults());
    }

    /**
     * @param recent    the accounting of the tracker's requests, served at {@code POST /v1/accounting}
     * @param nodeToken the node token that endpoint requires, or null (then it refuses everyone)
     * @param serving   sampling defaults, the max_tokens cap and CORS origins
     */
    public NodeHttp(ModelRegistry models, ApiKeys keys, NodeMetrics metrics, Supplier<JsonNode> capabilities,
                    long maxBodyBytes, Duration requestTimeout, RecentRequests recent, String nodeToken,
                    ServingOptions serving) {
        this.models = models;
        this.keys = keys;
        this.metrics = metrics;
        this.capabilities = capabilities;
        this.maxBodyBytes = maxBodyBytes;
        this.generation = new Generation(mapper, requestTimeout, recent, serving);
        this.cors = new Cors(serving.allowedOrigins());
        this.accounting = new AccountingApi(recent, nodeToken, mapper);
    }

    /** Trusts the tracker this node joined: requests with its node token may use the relay extension. */
    public void trustTracker(TrackerTrust trust) { this.tracker = trust; }

    /** The Helidon handler: every request of every route comes here on its own virtual thread. */
    public void handle(ServerRequest req, ServerResponse res) {
        try {
            if (cors.answerPreflight(req, res)) return;
            cors.decorate(req, res);
            dispatch(req, res);
        } catch (io.helidon.webserver.CloseConnectionException e) {
            throw e; // the answer is sent; Helidon closes the connection
        } catch (ApiError e) {
            sendError(res, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            sendError(res, new ApiError(503, "server_error", "The server is shutting down.", null, "unavailable"));
        } catch (RuntimeException e) {
            if (RequestFaults.clientGone(e)) { // nobody to answer: one line, no trace
                faults.fault("client left " + req.prologue().method() + " " + req.path().path() + ": " + e);
                return;
            }
            // A real fault: logged in full under an id the client is told, never a stack trace to the client.
            String incident = RequestFaults.incidentId();
            LOG.log(System.Logger.Level.ERROR, "request " + incident + " (" + req.prologue().method() + " "
                    + req.path().path() + (requestId(req) != null ? ", " + REQUEST_ID_HEADER + " " + requestId(req) : "")
                    + ") failed", e);
            sendError(res, new ApiError(500, "server_error", "The server had an error while processing your request "
                    + "(request id " + incident + ").", null, "internal_error"));
        }
    }

    /**
     * The listener's guard and the client-fault log ({@link NodeServer} sets both before it starts):
     * request bodies are read under the header timeout, and a non-streaming generation watches its
     * connection so a client that leaves cancels it.
     */
    public NodeHttp guardedBy(ConnectionGuard guard, ClientFaultLog faults) {
        this.guard = guard;
        this.faults = faults;
        generation.watchConnections(guard);
        return this;
    }

    private void dispatch(ServerRequest req, ServerResponse res) throws InterruptedException {
        String path = req.path().path();
        if (path.length() > 1 && path.endsWith("/")) path = path.substring(0, path.length() - 1);
        Method method = req.prologue().method();
        Route route = route(path, method);
        if (route != Route.HEALTH && route != Route.METRICS && route != Route.ACCOUNTING) authenticate(req);
        switch (route) {
            case HEALTH -> health(res);
            case METRICS -> {
                res.status(Status.OK_200);
                res.header(HeaderNames.CONTENT_TYPE, NodeMetrics.CONTENT_TYPE);
                res.send(metrics.scrape());
            }
            case MODELS -> JsonReply.send(res, mapper, Status.OK_200, modelList());
            case MODEL -> JsonReply.send(res, mapper, Status.OK_200, modelCard(model(path.substring("/v1/models/".length()))));
            case CAPABILITIES -> JsonReply.send(res, mapper, Status.OK_200, capabilities.get());
            case COMPLETIONS -> completions(req, res);
            case CHAT -> chat(req, res);
            case ACCOUNTING -> JsonReply.send(res, mapper, Status.OK_200,
                    accounting.answer(req.headers().first(HeaderNames.AUTHORIZATION).orElse(null), body(req)));
        }
    }

    private static Route route(String path, Method method) {
        if (path.startsWith("/v1/models/") && path.length() > "/v1/models/".length()) {
            requireMethod(path, method, Method.GET);
            return Route.MODEL;
        }
        Method allowed = METHODS.get(path);
        if (allowed == null) {
            throw ApiError.notFound("Unknown request URL: " + method.text() + " " + path + ".", null, "unknown_url");
        }
        requireMethod(path, method, allowed);
        return switch (path) {
            case "/health" -> Route.HEALTH;
            case "/metrics" -> Route.METRICS;
            case "/v1/models" -> Route.MODELS;
            case "/v1/capabilities" -> Route.CAPABILITIES;
            case "/v1/completions" -> Route.COMPLETIONS;
            case "/v1/accounting" -> Route.ACCOUNTING;
            default -> Route.CHAT;
        };
    }

    private static void requireMethod(String path, Method method, Method allowed) {
        if (!method.equals(allowed)) {
            throw new MethodNotAllowed(path, method, allowed);
        }
    }

    private void authenticate(ServerRequest req) {
        if (!keys.enabled()) return;
        String header = req.headers().first(HeaderNames.AUTHORIZATION).orElse(null);
        if (tracker.fromTracker(header)) return;
        if (keys.tenantFor(header).isEmpty()) {
            throw ApiError.unauthorized(header == null
                    ? "You didn't provide an API key. Provide it in the Authorization header (Authorization: Bearer KEY)."
                    : "Incorrect API key provided.");
        }
    }

    private String tenant(ServerRequest req, GenerationParams params, RelayExtension relay) {
        // The tracker authenticated the client and names its tenant, so fairness spans the cluster's traffic.
        if (relay.tenant() != null) return relay.tenant();
        String header = req.headers().first(HeaderNames.AUTHORIZATION).orElse(null);
        if (keys.enabled() && !tracker.fromTracker(header)) return keys.tenantFor(header).orElseThrow();
        // An open node has no accounts: OpenAI's end-user id is the closest thing to a tenant.
        return params.user() != null && !params.user().isBlank() ? params.user() : OPEN_TENANT;
    }

    private void health(ServerResponse res) {
        ObjectNode body = JsonNodeFactory.instance.objectNode();
        String waiting = models.waitingFor();
        if (models.ready()) {
            body.put("status", "ok");
            JsonReply.send(res, mapper, Status.OK_200, body);
        } else if (waiting != null) {
            body.put("status", "waiting for route");
            body.put("detail", waiting);
            JsonReply.send(res, mapper, Status.SERVICE_UNAVAILABLE_503, body);
        } else {
            body.put("status", "loading");
            JsonReply.send(res, mapper, Status.SERVICE_UNAVAILABLE_503, body);
        }
    }

    private void completions(ServerRequest req, ServerResponse res) throws InterruptedException {
        long arrival = System.nanoTime();
        byte[] bytes = body(req);
        CompletionRequest r = parser.completion(bytes);
        RelayExtension relay = relay(req, bytes);
        ServedModel model = model(r.params().model());
        int[] prompt = switch (r.prompt()) {
            case PromptInput.Text t -> model.encodePrompt(t.text());
            case PromptInput.Tokens t -> {
                model.checkTokenIds(t.ids());
                yield t.ids();
            }
        };
        generation.run(model, prompt, r.params(), new ResponseFormat.TextCompletion(), tenant(req, r.params(), relay),
                COMPLETIONS_DEFAULT_MAX_TOKENS, "prompt", requestId(req), relay, res);
        metrics.observeE2e(model.id(), System.nanoTime() - arrival);
    }

    private void chat(ServerRequest req, ServerResponse res) throws InterruptedException {
        long arrival = System.nanoTime();
        byte[] bytes = body(req);
        ChatRequest r = parser.chat(bytes);
        RelayExtension relay = relay(req, bytes);
        ServedModel model = model(r.params().model());
        int[] prompt = model.encodeChat(r.messages(), r.templateKwargs());
        generation.run(model, prompt, r.params(), new ResponseFormat.ChatCompletion(), tenant(req, r.params(), relay), -1,
                "messages", requestId(req), relay, res);
        metrics.observeE2e(model.id(), System.nanoTime() - arrival);
    }

    private static String requestId(ServerRequest req) {
        return req.headers().first(HeaderNames.create(REQUEST_ID_HEADER)).orElse(null);
    }

    /** The relay extension of a request from the tracker (node token); for anyone else, none. */
    private RelayExtension relay(ServerRequest req, byte[] body) {
        if (!tracker.fromTracker(req.headers().first(HeaderNames.AUTHORIZATION).orElse(null))) return RelayExtension.NONE;
        return RelayExtension.parse(body, requestId(req), req.headers().first(HeaderNames.create("X-Dgr-Tenant")).orElse(null));
    }

    private ServedModel model(String id) {
        if (!models.loaded()) {
            throw new ApiError(503, "server_error", "Models are still loading; retry shortly.", null, "loading");
        }
        String waiting = models.waitingFor();
        if (waiting != null) {
            throw new ApiError(503, "server_error", "The model's route is not ready: " + waiting + "; retry shortly.", null,
                    "route_unavailable");
        }
        return models.find(id).orElseThrow(() -> ApiError.notFound("The model '" + id + "' does not exist. "
                + "This node serves: " + String.join(", ", models.all().stream().map(ServedModel::id).toList()) + ".",
                "model", "model_not_found"));
    }

    private ObjectNode modelList() {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.put("object", "list");
        ArrayNode data = root.putArray("data");
        for (ServedModel m : models.all()) data.add(modelCard(m));
        return root;
    }

    private static ObjectNode modelCard(ServedModel m) {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("id", m.id());
        o.put("object", "model");
        o.put("created", m.created());
        o.put("owned_by", "dgr");
        o.put("context_length", m.contextLength());
        return o;
    }

    /** Reads the body, refusing more than {@code maxBodyBytes} before reading it all (HTTP 413). */
    private byte[] body(ServerRequest req) {
        long declared = req.headers().contentLength().orElse(-1);
        if (declared > maxBodyBytes) throw tooLarge();
        dgr.node.api.BodyEncoding.requireUtf8Charset(req.headers().first(HeaderNames.CONTENT_TYPE).orElse(null));
        return guard == null ? readBody(req) : guard.deadline(() -> readBody(req));
    }

    /**
     * The body, or a 400 naming what was wrong with its framing: a chunk size that is not hex, a body
     * shorter than its Content-Length, a connection closed mid-body (Helidon's decoder throws plain
     * runtime exceptions for these, which are the client's fault, not a server error).
     */
    private byte[] readBody(ServerRequest req) {
        try (InputStream in = req.content().inputStream()) {
            byte[] bytes = in.readNBytes((int) Math.min(maxBodyBytes + 1, Integer.MAX_VALUE - 8));
            if (bytes.length > maxBodyBytes) throw tooLarge();
            return bytes;
        } catch (ApiError e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            String why = RequestFaults.bodyFault(e);
            faults.fault("400 " + req.prologue().method() + " " + req.path().path() + ": " + why);
            throw ApiError.invalid("We could not read the body of your request: " + why + ".", null, "invalid_body");
        }
    }

    private ApiError tooLarge() {
        return new ApiError(413, "invalid_request_error", "The request body is larger than this server accepts ("
                + maxBodyBytes + " bytes).", null, "request_too_large");
    }

    private void sendError(ServerResponse res, ApiError e) {
        if (res.isSent()) return;
        try {
            sendErrorBody(res, e);
        } catch (RuntimeException gone) {
            if (!RequestFaults.clientGone(gone)) throw gone;
            faults.fault("client left before its " + e.status() + " was sent: " + e.getMessage());
        }
    }

    private void sendErrorBody(ServerResponse res, ApiError e) {
        if (e.status() == 429) res.header(HeaderNames.RETRY_AFTER, "1");
        if (e instanceof MethodNotAllowed m) res.header(HeaderNames.ALLOW, m.allowed.text());
        if (e.status() == 401) res.header(HeaderNames.WWW_AUTHENTICATE, "Bearer");
        JsonReply.send(res, mapper, Status.create(e.status()), ErrorBody.of(e));
    }

    private static final class MethodNotAllowed extends ApiError {
        final Method allowed;

        MethodNotAllowed(String path, Method method, Method allowed) {
            super(405, "invalid_request_error", "Method " + method.text() + " is not allowed for " + path
                    + "; use " + allowed.text() + ".", null, "method_not_allowed");
            this.allowed = allowed;
        }
    }
}
