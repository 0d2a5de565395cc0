package dgr.node.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dgr.node.ServingOptions;
import dgr.node.accounting.RecentRequests;
import dgr.node.api.ApiError;
import dgr.node.api.ErrorBody;
import dgr.node.api.GenerationParams;
import dgr.node.api.ResponseFormat;
import dgr.node.api.Usage;
import dgr.node.model.ServedModel;
import dgr.node.tracker.RelayExtension;
import dgr.node.tracker.ResumedSession;
import dgr.runtime.ContextRule;
import dgr.runtime.FinishReason;
import dgr.runtime.Session;
import dgr.runtime.SessionEvent;
import dgr.runtime.SessionRequest;
import dgr.runtime.Submission;
import dgr.runtime.TokenStream;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerResponse;
import java.io.OutputStream;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Runs one API generation: settles max_tokens, submits a session (the scheduler checks the context), and writes its
 * events as one JSON answer or as a server-sent event stream. The request's virtual thread blocks on
 * the session's {@link TokenStream}; a failed write means the client is gone and cancels the session.
 */
final class Generation {
    /** The scheduler's documented cancellation message for an expired deadline. */
    private static final String DEADLINE_MESSAGE = "deadline exceeded";
    private static final String CLIENT_GONE = "client disconnected";

    private final ObjectMapper mapper;
    private final Duration timeout;
    private final RecentRequests recent;
    private final ServingOptions serving;

    /** Watches the connection of a non-streaming generation, or null (then a gone client is noticed at the end). */
    private ConnectionGuard guard;

    Generation(ObjectMapper mapper, Duration timeout, RecentRequests recent, ServingOptions serving) {
        this.mapper = mapper;
        this.timeout = timeout;
        this.recent = recent;
        this.serving = serving;
    }

    void watchConnections(ConnectionGuard guard) {
        this.guard = guard;
    }

    /**
     * @param defaultMaxTokens max_tokens when the request gives none, or -1 for the server's cap; either way
     *                         no more than the rest of the context. A request's own max_tokens is held to the cap.
     * @param promptParam      the request field that held the prompt (for errors)
     * @param requestId        the tracker's request id, under which this node keeps the request's accounting, or null
     */
    void run(ServedModel model, int[] prompt, GenerationParams params, ResponseFormat format, String tenant,
             int defaultMaxTokens, String promptParam, String requestId, ServerResponse res) throws InterruptedException {
        run(model, prompt, params, format, tenant, defaultMaxTokens, promptParam, requestId, RelayExtension.NONE, res);
    }

    /** @param relay what the tracker asked beyond OpenAI's API (token ids, a resumed session), or NONE */
    void run(ServedModel model, int[] prompt, GenerationParams params, ResponseFormat format, String tenant,
             int defaultMaxTokens, String promptParam, String requestId, RelayExtension relay, ServerResponse res)
            throws InterruptedException {
        if (relay.countPrompt()) { // the tracker's exact reservation: nothing runs
            JsonReply.send(res, mapper, Status.OK_200, mapper.createObjectNode().put("prompt_tokens", prompt.length));
            return;
        }
        // The scheduler alone checks the context (ContextRule); here only the length the request gets.
        int maxTokens = params.maxTokens() != null ? Math.min(params.maxTokens(), serving.maxTokens())
                : (int) Math.max(1, Math.min(defaultMaxTokens < 0 ? serving.maxTokens() : defaultMaxTokens,
                        ContextRule.mostNewTokens(prompt.length, model.contextLength())));

        ResumedSession resumed = relay.resume() == null ? null
                : ResumedSession.prepare(model, prompt, params, maxTokens, relay.resume());
        String id = format.idPrefix() + HexFormat.of().formatHex(randomBytes());
        long created = System.currentTimeMillis() / 1000;
        if (resumed != null && resumed.finishedReason() != null) {
            finishOnly(resumed, relay, params, format, id, created, model.id(), res);
            return;
        }
        TokenStream stream = new TokenStream();
        SessionRequest request = resumed != null
                ? new SessionRequest(tenant, resumed.prompt(), resumed.sampler(), resumed.stop(), resumed.decoder(), timeout, stream)
                        .asResumed() // its client is mid-stream: admitted and prefilled first
                : new SessionRequest(tenant, prompt, model.newSampler(params.sampling()),
                        model.stopConditions(maxTokens, params.stop(), params.ignoreEos()), model.newDecoder(), timeout, stream);
        Session session = switch (model.scheduler().submit(request)) {
            case Submission.Accepted a -> a.session();
            case Submission.Rejected r -> throw rejection(r, params.maxTokens() != null
                    && ContextRule.mostNewTokens(prompt.length, model.contextLength()) >= 1 ? "max_tokens" : promptParam);
        };
        RecentRequests.Tracked tracked = resumed == null ? recent.track(requestId, model.id(), tenant, session)
                : recent.trackResumed(requestId, model.id(), tenant, session, resumed.promptLength(), resumed.generated());
        try {
            if (params.stream()) {
                stream(session, stream, params, format, id, created, model.id(), tracked,
                        new Relay(relay, resumed, resumed == null ? prompt.length : resumed.promptLength()), res);
            } else {
                whole(session, stream, format, id, created, model.id(), tracked, res);
            }
        } finally {
            tracked.ended();
            // Whatever ended this request (a gone client, an interrupt, a bug), the session must not
            // outlive it; cancelling an ended session does nothing.
            session.cancel("request ended");
        }
    }

    /**
     * One JSON answer at the end. Nothing is written while the session runs, so a client that leaves
     * is only seen by watching the connection ({@link ConnectionGuard#watch}): it cancels the session
     * within one iteration, as a failed write does for a stream. A watched answer closes the
     * connection after it (the watching read cannot be taken back).
     */
    private void whole(Session session, TokenStream stream, ResponseFormat format, String id, long created, String model,
                       RecentRequests.Tracked tracked, ServerResponse res) throws InterruptedException {
        java.util.concurrent.atomic.AtomicBoolean gone = new java.util.concurrent.atomic.AtomicBoolean();
        ConnectionGuard.Watch watch = guard == null ? () -> {} : guard.watch(() -> {
            gone.set(true);
            session.cancel(CLIENT_GONE);
        });
        if (guard == null) {
            wholeAnswer(stream, format, id, created, model, tracked, gone, res);
            return;
        }
        res.header(io.helidon.http.HeaderValues.CONNECTION_CLOSE);
        try (watch) {
            try {
                wholeAnswer(stream, format, id, created, model, tracked, gone, res);
            } catch (ApiError e) {
                // Answered here, since the connection closes right after (a gone client just misses it).
                try {
                    JsonReply.send(res, mapper, Status.create(e.status()), ErrorBody.of(e));
                } catch (RuntimeException sendFailed) {
                    if (!RequestFaults.clientGone(sendFailed)) throw sendFailed;
                }
            }
        }
        // Helidon keeps reading a connection after a "Connection: close" answer; the watcher is still
        // reading it, so end the connection here rather than let two readers share it.
        throw new io.helidon.webserver.CloseConnectionException("a watched answer closes its connection");
    }

    private void wholeAnswer(TokenStream stream, ResponseFormat format, String id, long created, String model,
                             RecentRequests.Tracked tracked, java.util.concurrent.atomic.AtomicBoolean gone,
                             ServerResponse res) throws InterruptedException {
        StringBuilder text = new StringBuilder();
        while (true) {
            switch (stream.take()) {
                case SessionEvent.TokenEvent t -> text.append(t.text());
                case SessionEvent.Finished f -> {
                    boolean answered = f.reason() == FinishReason.STOP || f.reason() == FinishReason.LENGTH;
                    if (answered) tracked.delivered(f.accounting().generatedTokens());
                    tracked.finished(f); // on the disk before the answer leaves (RecentRequests)
                    if (!answered) throw failure(f);
                    JsonReply.send(res, mapper, Status.OK_200,
                            format.complete(id, created, model, text.toString(), f.reason().wireName(), Usage.of(f.accounting())));
                    return;
                }
            }
        }
    }

    private void stream(Session session, TokenStream stream, GenerationParams params, ResponseFormat format,
                        String id, long created, String model, RecentRequests.Tracked tracked, Relay relay,
                        ServerResponse res) throws InterruptedException {
        res.status(Status.OK_200);
        res.header(HeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8");
        res.header(HeaderNames.CACHE_CONTROL, "no-cache");
        try (OutputStream out = res.outputStream()) {
            SseWriter sse = new SseWriter(out, mapper);
            ObjectNode opening = relay.resumed() == null ? format.opening(id, created, model) : null;
            if (opening != null) sse.event(withUsageField(opening, params));
            while (true) {
                switch (stream.take()) {
                    case SessionEvent.TokenEvent t -> {
                        // One chunk per generated token, even when its text is held back (an incomplete
                        // UTF-8 sequence, a possible stop string) and the delta is empty: clients then
                        // time every token and count chunks = completion_tokens, as with llama-server.
                        sse.event(relay.tokenChunk(withUsageField(format.delta(id, created, model, t.text()), params), t.tokenId()));
                        tracked.delivered(1);
                    }
                    case SessionEvent.Finished f -> {
                        tracked.finished(f); // on the disk before the final chunk leaves (RecentRequests)
                        if (f.reason() != FinishReason.STOP && f.reason() != FinishReason.LENGTH) {
                            // Headers are gone: the error travels as an event, as OpenAI streams do.
                            sse.event(ErrorBody.of(failure(f)));
                        } else {
                            sse.event(withUsageField(format.finish(id, created, model, f.reason().wireName()), params));
                            if (params.includeUsage()) {
                                sse.event(relay.usageChunk(format.usageChunk(id, created, model, relay.usage(f.accounting()))));
                            }
                        }
                        sse.done();
                        return;
                    }
                }
            }
        } catch (SseWriter.ClientGone gone) {
            session.cancel(CLIENT_GONE);
        } catch (java.io.IOException | java.io.UncheckedIOException closeFailed) {
            // Closing the stream writes the last chunk; a client gone by then has all it asked for.
            session.cancel(CLIENT_GONE);
        }
    }

    /**
     * A resumed session whose delivered tokens had already ended the generation (the first node died
     * between its last token and its finish chunk): only the finish, usage and end of the stream.
     */
    private void finishOnly(ResumedSession resumed, RelayExtension relay, GenerationParams params, ResponseFormat format,
                            String id, long created, String model, ServerResponse res) {
        res.status(Status.OK_200);
        res.header(HeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8");
        res.header(HeaderNames.CACHE_CONTROL, "no-cache");
        try (OutputStream out = res.outputStream()) {
            SseWriter sse = new SseWriter(out, mapper);
            Relay r = new Relay(relay, resumed, resumed.promptLength());
            sse.event(withUsageField(format.finish(id, created, model, resumed.finishedReason()), params));
            if (params.includeUsage()) {
                sse.event(r.usageChunk(format.usageChunk(id, created, model, resumed.usage(new Usage(0, 0, 0)))));
            }
            sse.done();
        } catch (SseWriter.ClientGone | java.io.IOException | java.io.UncheckedIOException gone) {
            // Nothing ran; nothing to cancel.
        }
    }

    /** The relay extension's part of a stream: token ids on chunks, usage of a resumed session, request id. */
    private record Relay(RelayExtension ext, ResumedSession resumed, int promptTokens) {
        ObjectNode tokenChunk(ObjectNode chunk, int tokenId) {
            if (ext.tokenIds()) chunk.putObject("dgr").put("token_id", tokenId).put("prompt_tokens", promptTokens);
            return chunk;
        }

        Usage usage(dgr.runtime.Accounting a) {
            Usage u = Usage.of(a);
            return resumed == null ? u : resumed.usage(u);
        }

        ObjectNode usageChunk(ObjectNode chunk) {
            if (ext.requestId() == null && resumed == null) return chunk;
            ObjectNode d = chunk.putObject("dgr");
            if (ext.requestId() != null) d.put("request_id", ext.requestId());
            if (ext.tenant() != null) d.put("tenant", ext.tenant());
            d.put("recomputed_tokens", resumed == null ? 0 : resumed.recomputedTokens());
            return chunk;
        }
    }

    /** With include_usage, OpenAI puts {@code "usage": null} on every chunk but the last. */
    private static ObjectNode withUsageField(ObjectNode chunk, GenerationParams params) {
        if (params.includeUsage()) chunk.putNull("usage");
        return chunk;
    }

    private static ApiError failure(SessionEvent.Finished f) {
        if (f.reason() == FinishReason.CANCELLED && DEADLINE_MESSAGE.equals(f.message())) {
            return new ApiError(504, "timeout_error", "The request exceeded the server's request timeout after "
                    + f.accounting().generatedTokens() + " generated tokens.", null, "request_timeout");
        }
        if (f.reason() == FinishReason.CANCELLED) {
            return new ApiError(503, "server_error", "The request was cancelled: " + f.message() + ".", null,
                    "cancelled");
        }
        if (f.reason() == FinishReason.UNAVAILABLE) {
            return new ApiError(503, "server_error", "A stage of the model's route is unavailable: " + f.message() + ".",
                    null, "route_unavailable");
        }
        return new ApiError(500, "server_error", "The model failed while generating; the request was ended.",
                null, "generation_failed");
    }

    private static ApiError rejection(Submission.Rejected r, String promptParam) {
        return switch (r.reason()) {
            case OVER_CAPACITY -> new ApiError(429, "rate_limit_error",
                    "The server's queue is full; retry after a moment.", null, "queue_full");
            case EXCEEDS_CONTEXT -> ApiError.invalid(r.message(), promptParam, "context_length_exceeded");
            case EXCEEDS_STATE_BUDGET -> ApiError.invalid(r.message(), promptParam, "state_budget_exceeded");
            case INVALID_REQUEST -> ApiError.invalid(r.message(), promptParam);
            case CLOSED -> new ApiError(503, "server_error", "The model is shutting down.", null, "unavailable");
        };
    }

    private static byte[] randomBytes() {
        byte[] b = new byte[12];
        ThreadLocalRandom.current().nextBytes(b);
        return b;
    }

}
