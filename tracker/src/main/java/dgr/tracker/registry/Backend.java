package dgr.tracker.registry;

/**
 * What kind of server a registered node is, and so what the tracker can do with it beyond the
 * OpenAI API every backend speaks.
 */
public enum Backend {
    /**
     * A dgr node that joined with the node token: pushes capability reports as heartbeats, reports the
     * token id of every streamed chunk, accepts a resumed session, returns exact accounting.
     */
    DGR(true, true),
    /**
     * Any OpenAI-compatible server (llama.cpp's server, vLLM, a dgr node registered by URL) added by
     * an operator with the saturation.json {@code dgr bench --url} measured against it. The tracker polls
     * its {@code /v1/models}; a stream cut mid-way is not resumed, and usage is whatever the server reports.
     */
    OPENAI(false, false);

    private final boolean resumesMidStream;
    private final boolean exactAccounting;

    Backend(boolean resumesMidStream, boolean exactAccounting) {
        this.resumesMidStream = resumesMidStream;
        this.exactAccounting = exactAccounting;
    }

    public boolean resumesMidStream() { return resumesMidStream; }

    public boolean exactAccounting() { return exactAccounting; }

    public String wireName() { return name().toLowerCase(java.util.Locale.ROOT); }
}
