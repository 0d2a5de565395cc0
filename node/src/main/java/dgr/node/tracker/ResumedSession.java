package dgr.node.tracker;

import dgr.engine.sampler.TokenSampler;
import dgr.node.api.ApiError;
import dgr.node.api.GenerationParams;
import dgr.node.api.Usage;
import dgr.node.model.ServedModel;
import dgr.runtime.StopConditions;
import dgr.runtime.StopMatcher;
import dgr.runtime.TextDecoder;

/**
 * A session continued on this node from the tokens another node generated for the same request: the
 * prompt becomes prompt + generated tokens (recomputed in one prefill), the sampler has seen the
 * generated tokens and continues at the same draw, the detokenizer and stop-string matcher are brought
 * to where the first node's were. By batch invariance the logits after the recomputed prefix equal the
 * first node's, so the continuation is bit-identical to what the first node would have streamed.
 *
 * <p>Text: the first node streamed, per token, what its stop matcher let through; text that could
 * still start a stop string was held back and never delivered. Replaying the generated tokens through a
 * matcher of our own gives that held-back text, which is put in front of the first new piece, so the
 * fresh matcher of the new session starts in the old one's state.
 *
 * @param prompt         the session's prompt: the request's prompt, then the generated tokens
 * @param promptLength   the request's own prompt length (what usage reports as prompt tokens)
 * @param generated      generated tokens already delivered
 * @param sampler        the sampler, at draw {@code samplerStep} with the generated tokens seen
 * @param decoder        the detokenizer, past the generated tokens, with the held-back text in front
 * @param stop           stop conditions for what is left ({@code maxTokens - generated})
 * @param finishedReason non-null when the delivered tokens already ended the generation ({@code stop} or
 *                       {@code length}): nothing runs, the stream just finishes
 */
public record ResumedSession(int[] prompt, int promptLength, int generated, TokenSampler sampler, TextDecoder decoder,
                             StopConditions stop, String finishedReason) {

    public static ResumedSession prepare(ServedModel model, int[] prompt, GenerationParams params, int maxTokens,
                                         RelayExtension.Resume resume) {
        if (!params.stream()) {
            throw ApiError.invalid("A resumed session must be streamed ('stream': true).", "dgr.resume");
        }
        int[] gen = resume.generated();
        model.checkTokenIds(gen);
        int n = gen.length;
        if (n > maxTokens) {
            throw ApiError.invalid("'dgr.resume.token_ids' holds " + n + " tokens, more than max_tokens " + maxTokens + ".",
                    "dgr.resume.token_ids");
        }
        StopConditions full = model.stopConditions(maxTokens, params.stop(), params.ignoreEos());
        TextDecoder dec = model.newDecoder();
        StopMatcher matcher = new StopMatcher(full.stopStrings());
        StringBuilder decoded = new StringBuilder();
        StringBuilder emitted = new StringBuilder();
        String finished = null;
        for (int i = 0; i < n; i++) {
            if (finished != null) {
                throw ApiError.invalid("'dgr.resume.token_ids': generation had already ended (" + finished + ") at token "
                        + (i - 1) + " of " + n + ".", "dgr.resume.token_ids");
            }
            if (full.isEndToken(gen[i])) {
                finished = "stop";
                continue;
            }
            String piece = dec.push(gen[i]);
            decoded.append(piece);
            emitted.append(matcher.push(piece));
            if (matcher.stopped()) finished = "stop";
        }
        if (finished == null && n == maxTokens) finished = "length";
        int[] sessionPrompt = new int[prompt.length + n];
        System.arraycopy(prompt, 0, sessionPrompt, 0, prompt.length);
        System.arraycopy(gen, 0, sessionPrompt, prompt.length, n);
        if (finished != null) return new ResumedSession(sessionPrompt, prompt.length, n, null, null, null, finished);

        String held = decoded.substring(emitted.length());
        TextDecoder decoder = new HeldBackFirst(dec, held);
        TokenSampler sampler = model.resumedSampler(params.sampling(), gen, resume.samplerStep());
        return new ResumedSession(sessionPrompt, prompt.length, n, sampler, decoder,
                model.stopConditions(maxTokens - n, params.stop(), params.ignoreEos()), null);
    }

    /** Usage as the client expects it for the whole request: its own prompt, every token generated for it. */
    public Usage usage(Usage session) {
        return new Usage(promptLength, generated + session.completionTokens(), session.cachedTokens());
    }

    /** Prompt and generated tokens this node computed again. */
    public int recomputedTokens() { return prompt.length; }

    /** The old session's held-back text goes in front of the first new piece. */
    private static final class HeldBackFirst implements TextDecoder {
        private final TextDecoder decoder;
        private String held;

        HeldBackFirst(TextDecoder decoder, String held) {
            this.decoder = decoder;
            this.held = held;
        }

        @Override
        public String push(int tokenId) {
            String piece = decoder.push(tokenId);
            if (held.isEmpty()) return piece;
            String out = held + piece;
            held = "";
            return out;
        }
    }
}
