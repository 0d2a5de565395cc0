package dgr.runtime;

import dgr.engine.sampler.GreedySampler;
import dgr.engine.sampler.TokenSampler;
import java.time.Duration;
import java.util.Objects;

/**
 * What an owner asks the scheduler to run: already-tokenized prompt ids (tokenization is the
 * node's job), the session's own sampler, stop conditions and stream.
 *
 * @param tenant   whose service counter this session's tokens go to (an API key, a user)
 * @param prompt   prompt token ids (at least one)
 * @param sampler  the session's own sampler
 * @param stop     stop conditions
 * @param decoder  streaming detokenizer, or null (then token events carry no text and stop strings
 *                 are refused)
 * @param timeout  deadline measured from submission, or null for none; on expiry the session is
 *                 cancelled with message "deadline exceeded"
 * @param listener the session's stream
 * @param resumed  the session continues a generation whose client is already reading it (a stream resumed
 *                 from another node, prompt = the request's prompt + the tokens delivered): it is admitted
 *                 before waiting sessions, and under decode-first its prefill does not wait for
 *                 {@code maxPrefillWaitIterations} (docs/scheduler.md), so the client's gap stays short
 */
public record SessionRequest(String tenant, int[] prompt, TokenSampler sampler, StopConditions stop,
                             TextDecoder decoder, Duration timeout, SessionListener listener, boolean resumed) {
    public SessionRequest {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(sampler, "sampler");
        Objects.requireNonNull(stop, "stop");
        Objects.requireNonNull(listener, "listener");
        prompt = prompt.clone();
    }

    /** A fresh session (not resumed). */
    public SessionRequest(String tenant, int[] prompt, TokenSampler sampler, StopConditions stop, TextDecoder decoder,
                          Duration timeout, SessionListener listener) {
        this(tenant, prompt, sampler, stop, decoder, timeout, listener, false);
    }

    /** A greedy request with no decoder, no deadline and no stream (tests, benchmark warm-up). */
    public static SessionRequest of(String tenant, int[] prompt, int maxTokens) {
        return new SessionRequest(tenant, prompt, GreedySampler.INSTANCE, StopConditions.maxTokens(maxTokens), null,
                null, SessionListener.NONE);
    }

    public SessionRequest withSampler(TokenSampler s) {
        return new SessionRequest(tenant, prompt, s, stop, decoder, timeout, listener, resumed);
    }

    public SessionRequest withStop(StopConditions s) {
        return new SessionRequest(tenant, prompt, sampler, s, decoder, timeout, listener, resumed);
    }

    public SessionRequest withDecoder(TextDecoder d) {
        return new SessionRequest(tenant, prompt, sampler, stop, d, timeout, listener, resumed);
    }

    public SessionRequest withTimeout(Duration t) {
        return new SessionRequest(tenant, prompt, sampler, stop, decoder, t, listener, resumed);
    }

    public SessionRequest withListener(SessionListener l) {
        return new SessionRequest(tenant, prompt, sampler, stop, decoder, timeout, l, resumed);
    }

    /** This request as a resumed session: admitted first, prefilled without waiting (see {@code resumed}). */
    public SessionRequest asResumed() {
        return new SessionRequest(tenant, prompt, sampler, stop, decoder, timeout, listener, true);
    }

    @Override
    public int[] prompt() { return prompt.clone(); }

    int promptLength() { return prompt.length; }

    int promptToken(int i) { return prompt[i]; }
}
