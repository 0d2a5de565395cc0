package dgr.node.stage;

import dgr.engine.Engine;
import dgr.node.stage.wire.Down;
import dgr.node.stage.wire.StageGrpc;
import dgr.node.stage.wire.Up;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A stage that is not first: the gRPC service on {@code --stage-port} over an engine that runs
 * layers {@code [A, B)}. Only holders of the cluster token get a stream; everything they send goes
 * to the {@link StageWorker}.
 */
public final class StageServer implements AutoCloseable {
    /** Largest message a stage accepts; senders keep theirs under 1 MiB (long prefills go in chunks). */
    static final int MAX_MESSAGE_BYTES = 8 << 20;
    private static final Context.Key<String> PEER = Context.key("dgr-stage-peer");

    private final Engine engine;
    private final StageWorker worker;
    private final StageStats stats = new StageStats();
    private final Server server;
    private final AtomicLong linkIds = new AtomicLong();
    private final java.util.Set<String> upstream = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** How a stage runs: where it listens, its cluster token, reply deadlines downstream, and how long an orphan is kept. */
    public record Options(String host, int port, ClusterToken token, StepClock clock, Duration orphanGrace) {}

    private StageServer(Engine engine, Options o) {
        this.engine = engine;
        this.worker = new StageWorker(engine, o.token(), o.clock(), o.orphanGrace().toNanos(), stats);
        ServerInterceptor peer = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata h, ServerCallHandler<Q, R> next) {
                Object addr = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
                return Contexts.interceptCall(Context.current().withValue(PEER, String.valueOf(addr)), call, h, next);
            }
        };
        // Interceptors run last-added first: the token is checked before anything else sees the call.
        var service = ServerInterceptors.intercept(new Service(), peer, o.token().interceptor());
        // directExecutor: a message is handed to the worker's queue straight from the transport's
        // thread, not through a second thread first: one thread hand-off less on every hop of every
        // row. The service only enqueues, except on the last stage, where a message of rows that finds
        // the loop idle and the queue empty is computed right there (StageWorker.submit): that stage
        // relays nothing up, and the one batch it holds its transport thread for is the batch every
        // link's rows would wait behind on the stage's thread anyway.
        this.server = NettyServerBuilder.forAddress(new InetSocketAddress(o.host(), o.port()))
                .maxInboundMessageSize(MAX_MESSAGE_BYTES).directExecutor().addService(service).build();
    }

    public static StageServer start(Engine engine, Options o) {
        if (engine.recipe().isFirstStage()) {
            throw new IllegalArgumentException("a stage port serves a later span; layers [0, " + engine.recipe().endLayer() + ") are the head's (give --route)");
        }
        StageWarmUp.run(engine);
        StageServer s = new StageServer(engine, o);
        try {
            s.server.start();
        } catch (IOException e) {
            s.worker.close();
            throw new UncheckedIOException("stage port " + o.host() + ":" + o.port() + ": " + e.getMessage(), e);
        }
        return s;
    }

    public int port() { return server.getPort(); }

    public Engine engine() { return engine; }

    public StageStats stats() { return stats; }

    /** Peers with an open stream to this stage. */
    public List<String> upstream() { return upstream.stream().sorted().toList(); }

    private final class Service extends StageGrpc.StageImplBase {
        @Override
        public StreamObserver<Down> link(StreamObserver<Up> responses) {
            String peer = PEER.get();
            UpLink link = new UpLink(linkIds.incrementAndGet(), peer == null ? "?" : peer, responses);
            upstream.add(link.peer);
            return new StreamObserver<>() {
                @Override
                public void onNext(Down d) { worker.submit(new StageWorker.Message(link, d)); }

                @Override
                public void onError(Throwable t) {
                    upstream.remove(link.peer);
                    worker.submit(new StageWorker.Gone(link, "broke: " + io.grpc.Status.fromThrowable(t).getCode()));
                }

                @Override
                public void onCompleted() {
                    upstream.remove(link.peer);
                    worker.submit(new StageWorker.Gone(link, "completed"));
                    link.complete();
                }
            };
        }
    }

    @Override
    public void close() {
        server.shutdownNow();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        worker.close();
    }
}
