package dgr.tracker;

import dgr.tracker.http.TrackerHttp;
import dgr.tracker.ledger.Ledger;
import io.helidon.webserver.WebServer;

/**
 * A dgr tracker: one OpenAI-compatible endpoint in front of many nodes. It keeps the node registry
 * (fed by the nodes' heartbeats), routes each request by measured headroom, relays the node's stream
 * chunk by chunk and resumes it elsewhere when the node dies (docs/tracker.md).
 */
public final class TrackerServer implements AutoCloseable {
    private final TrackerConfig config;
    private final Tracker tracker;
    private final WebServer web;

    private TrackerServer(TrackerConfig config, Ledger ledger) {
        this.config = config;
        this.tracker = new Tracker(config, ledger);
        TrackerHttp http = new TrackerHttp(tracker);
        this.web = WebServer.builder()
                .host(config.host())
                .port(config.port())
                .maxPayloadSize(config.maxBodyBytes())
                .routing(r -> r.any(http::handle))
                .build();
    }

    /** Binds and serves; the ledger is owned by the tracker from here and closed with it. */
    public static TrackerServer start(TrackerConfig config, Ledger ledger) {
        TrackerServer s = new TrackerServer(config, ledger);
        try {
            s.web.start();
        } catch (RuntimeException e) {
            s.tracker.close();
            throw e;
        }
        return s;
    }

    /** The bound port (the one picked when the config said 0). */
    public int port() { return web.port(); }

    public String host() { return config.host(); }

    /** The parts behind the HTTP API (registry, router, metrics), for tests and the CLI. */
    public Tracker tracker() { return tracker; }

    @Override
    public void close() {
        web.stop();
        tracker.close();
    }
}
