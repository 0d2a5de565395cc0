package dgr.node;

import dgr.engine.sampler.SamplerConfig;
import java.nio.file.Path;
import java.util.List;

/**
 * What an operator sets about serving, as llama-server's and vLLM's users expect to: the sampling a
 * request gets for every field it leaves out, the most tokens one request may generate, a chat
 * template in place of the models' own, the browser origins allowed to call (CORS), and TLS.
 *
 * @param sampling       defaults for fields a request omits ({@code dgr run} uses the same); a negative
 *                       seed means a fresh seed per request
 * @param maxTokens      the most tokens one request generates; also the default when it names none
 *                       (completions keep OpenAI's 16 then)
 * @param chatTemplate   Jinja source used instead of every model's {@code tokenizer.chat_template}, or null
 * @param allowedOrigins origins whose browsers may call the API ({@code *} = any); empty = no CORS headers
 * @param sslKeyFile     PEM private key for HTTPS, or null for plain HTTP (given with {@code sslCertFile})
 * @param sslCertFile    PEM certificate chain for HTTPS, or null
 */
public record ServingOptions(SamplerConfig sampling, int maxTokens, String chatTemplate, List<String> allowedOrigins,
                             Path sslKeyFile, Path sslCertFile) {
    /** The default max_tokens cap: long answers fit, a runaway generation on a random-weight model does not. */
    public static final int DEFAULT_MAX_TOKENS = 2048;

    public ServingOptions {
        allowedOrigins = List.copyOf(allowedOrigins);
        if (maxTokens < 1) throw new IllegalArgumentException("the max_tokens cap must be at least 1, got " + maxTokens);
        if ((sslKeyFile == null) != (sslCertFile == null)) {
            throw new IllegalArgumentException("TLS needs both --ssl-key-file and --ssl-cert-file");
        }
        if (chatTemplate != null && chatTemplate.isBlank()) throw new IllegalArgumentException("the chat template is empty");
    }

    /** llama.cpp's sampling defaults with a fresh seed per request, a 2048-token cap, no override, no CORS, no TLS. */
    public static ServingOptions defaults() {
        return new ServingOptions(SamplerConfig.llamaCppDefaults(-1), DEFAULT_MAX_TOKENS, null, List.of(), null, null);
    }

    public boolean tls() { return sslKeyFile != null; }
}
