package dgr.node.tracker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dgr.node.api.ApiError;
import java.io.IOException;

/**
 * What the tracker asks of a node beyond OpenAI's API (docs/node.md, "Relay extension and resumed sessions"), from a request
 * that presented the node token:
 * <pre>
 * "dgr": {"token_ids": true,                                   each stream chunk carries "dgr": {"token_id": N}
 *         "resume": {"token_ids": [ ... ], "sampler_step": K}, continue a session from these generated tokens
 *         "count_prompt": true}                                  answer {"prompt_tokens": N} and generate nothing
 * </pre>
 * Every token chunk of a stream with token ids also carries {@code "prompt_tokens"}: the request's exact prompt
 * count, which the tracker bills with the delivered tokens when the node dies and its accounting with it.
 * with headers {@code X-Dgr-Request-Id} (echoed in the usage chunk) and {@code X-Dgr-Tenant} (whose
 * fairness counter the session counts against).
 *
 * @param tokenIds  add each generated token's id to its stream chunk (the tracker strips it before relaying)
 * @param resume    the session to continue, or null for a fresh one
 * @param requestId the tracker's request id, or null
 * @param tenant    the tenant the tracker authenticated, or null
 * @param countPrompt only count the prompt's tokens (the tracker's exact reservation against a small budget)
 */
public record RelayExtension(boolean tokenIds, Resume resume, String requestId, String tenant, boolean countPrompt) {
    public static final RelayExtension NONE = new RelayExtension(false, null, null, null, false);

    public RelayExtension(boolean tokenIds, Resume resume, String requestId, String tenant) {
        this(tokenIds, resume, requestId, tenant, false);
    }

    /**
     * A session resumed from the tokens another node generated and the tracker delivered.
     *
     * @param generated   the generated token ids already delivered to the client, in order
     * @param samplerStep the sampler's draw index to continue at (one draw per generated token: normally
     *                    {@code generated.length})
     */
    public record Resume(int[] generated, long samplerStep) {}

    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** Reads the {@code dgr} field of a trusted request's body (the body was already parsed and checked once). */
    public static RelayExtension parse(byte[] body, String requestId, String tenant) {
        JsonNode ext;
        try {
            ext = MAPPER.readTree(body).get("dgr");
        } catch (IOException e) {
            throw ApiError.invalid("We could not parse the JSON body of your request.", null);
        }
        if (ext == null || ext.isNull()) return new RelayExtension(false, null, requestId, tenant);
        if (!ext.isObject()) throw ApiError.invalid("'dgr' must be an object.", "dgr");
        JsonNode ids = ext.get("token_ids");
        if (ids != null && !ids.isBoolean()) throw ApiError.invalid("'dgr.token_ids' must be a boolean.", "dgr.token_ids");
        JsonNode count = ext.get("count_prompt");
        if (count != null && !count.isBoolean()) {
            throw ApiError.invalid("'dgr.count_prompt' must be a boolean.", "dgr.count_prompt");
        }
        return new RelayExtension(ids != null && ids.asBoolean(), resume(ext.get("resume")), requestId, tenant,
                count != null && count.asBoolean());
    }

    private static Resume resume(JsonNode r) {
        if (r == null || r.isNull()) return null;
        if (!r.isObject()) throw ApiError.invalid("'dgr.resume' must be an object.", "dgr.resume");
        JsonNode ids = r.get("token_ids");
        if (ids == null || !ids.isArray()) {
            throw ApiError.invalid("'dgr.resume.token_ids' must be an array of the generated token ids delivered so far.",
                    "dgr.resume.token_ids");
        }
        int[] generated = new int[ids.size()];
        for (int i = 0; i < generated.length; i++) {
            JsonNode t = ids.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToInt() || t.asInt() < 0) {
                throw ApiError.invalid("'dgr.resume.token_ids[" + i + "]' must be a token id (an integer >= 0), got "
                        + t + ".", "dgr.resume.token_ids");
            }
            generated[i] = t.asInt();
        }
        long step = generated.length;
        JsonNode s = r.get("sampler_step");
        if (s != null && !s.isNull()) {
            if (!s.isIntegralNumber() || !s.canConvertToLong() || s.asLong() < 0) {
                throw ApiError.invalid("'dgr.resume.sampler_step' must be an integer >= 0, got " + s + ".",
                        "dgr.resume.sampler_step");
            }
            step = s.asLong();
        }
        return new Resume(generated, step);
    }
}
