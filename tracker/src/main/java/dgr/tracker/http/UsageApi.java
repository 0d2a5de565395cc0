package dgr.tracker.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import dgr.tracker.Tracker;
import dgr.tracker.ledger.LedgerReports;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.time.Instant;

/**
 * {@code GET /v1/usage?tenant=T[&from=&to=]} (admin token): one tenant's settled usage from the ledger,
 * {@code {"tenant", "requests", "prompt_tokens", "completion_tokens", "models": {model: {...}}}}. Bounds
 * select by arrival, {@code [from, to)}: ISO-8601 instants, dates (midnight UTC) or epoch seconds.
 */
final class UsageApi {
    private final Tracker tracker;
    private final ObjectMapper mapper;

    UsageApi(Tracker tracker, ObjectMapper mapper) {
        this.tracker = tracker;
        this.mapper = mapper;
    }

    void usage(ServerRequest req, ServerResponse res) {
        if (!HttpIo.tokenMatches(HttpIo.bearer(req).orElse(null), tracker.config().adminToken())) {
            throw ApiFailure.unauthorized(tracker.config().adminToken() == null
                    ? "This tracker has no admin API: it was started without --admin-token."
                    : "This endpoint needs the admin token (Authorization: Bearer ADMIN_TOKEN).");
        }
        String tenant = req.query().first("tenant").orElse(null);
        if (tenant == null || tenant.isBlank()) {
            throw ApiFailure.invalid("The query parameter 'tenant' is required: GET /v1/usage?tenant=T[&from=&to=].",
                    "tenant");
        }
        Instant from = bound(req, "from");
        Instant to = bound(req, "to");
        LedgerReports.Usage usage = tracker.ledger().usage(tenant, from, to).orElseThrow(() -> ApiFailure.notFound(
                "This tracker keeps no ledger, so it has no usage to report.", null, "no_ledger"));
        HttpIo.sendJson(res, mapper, 200, usage.toJson());
    }

    private static Instant bound(ServerRequest req, String name) {
        try {
            return LedgerReports.parseBound(name, req.query().first(name).orElse(null));
        } catch (IllegalArgumentException e) {
            throw ApiFailure.invalid(e.getMessage() + ".", name);
        }
    }
}
