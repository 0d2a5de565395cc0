package dgr.node.stage;

import dgr.node.stage.wire.Down;
import dgr.node.stage.wire.Rows;
import dgr.node.stage.wire.RowsBatch;
import dgr.node.stage.wire.StageGrpc;
import dgr.node.stage.wire.Token;
import dgr.node.stage.wire.Tokens;
import dgr.node.stage.wire.Up;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Compiles the stage transport before the first client, as {@link dgr.engine.WarmUp} does for the
 * kernels: rows and token replies of the stage protocol go back and forth, one at a time, between
 * a private echo service and a client stream on a free loopback port of this process (both ends,
 * since a stage is server to its upstream and client to its downstream), then both are closed.
 *
 * <p>Why: the JIT compiles gRPC's, Netty's and protobuf's per-message code only after some
 * thousands of messages. Until then a hop of one decode row costs milliseconds: llama-110m on a
 * 2-stage route at c=1, the reply overhead p50 fell from 4.9 ms over the first 170 tokens to
 * 0.9 ms after 700 (machine load about 25); issue 23's measurement (150 tokens at c=1) saw only the
 * cold part. The echo service only echoes, holds the cluster token like a stage port, and lives
 * for the warm-up only. Best effort: a failure is logged, never fatal.
 */
final class WireWarmUp {
    private static final System.Logger LOG = System.getLogger(WireWarmUp.class.getName());
    /** Round trips: about what a 2-stage route needed to reach its steady hop time (above). */
    static final int ROUNDS = 2000;
    /** Every this many rounds a prefill-sized message, so the multi-frame path compiles too. */
    private static final int PREFILL_EVERY = 50, PREFILL_ROWS = 16;
    private static final long TIMEOUT_SECONDS = 30;

    private WireWarmUp() {}

    /**
     * Runs {@code rounds} round trips of rows {@code width} floats wide; returns the nanoseconds it
     * took, or -1 when it failed (logged).
     */
    static long run(ClusterToken token, int width, int rounds) {
        if (rounds <= 0) return 0;
        long t0 = System.nanoTime();
        Server server = null;
        ManagedChannel channel = null;
        try {
            server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).directExecutor()
                    .maxInboundMessageSize(StageServer.MAX_MESSAGE_BYTES)
                    .addService(ServerInterceptors.intercept(new Echo(), token.interceptor())).build().start();
            channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().directExecutor()
                    .maxInboundMessageSize(StageServer.MAX_MESSAGE_BYTES).build();
            Semaphore replies = new Semaphore(0);
            Throwable[] failure = {null};
            StreamObserver<Down> out = StageGrpc.newStub(channel).withCallCredentials(token.credentials()).link(new StreamObserver<>() {
                @Override
                public void onNext(Up up) { replies.release(); }

                @Override
                public void onError(Throwable t) {
                    failure[0] = t;
                    replies.release(rounds);
                }

                @Override
                public void onCompleted() {}
            });
            float[] rows = new float[PREFILL_ROWS * width];
            long deadline = t0 + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
            for (int i = 0; i < rounds; i++) {
                int count = i % PREFILL_EVERY == 0 ? PREFILL_ROWS : 1;
                out.onNext(Down.newBuilder().setRows(RowsBatch.newBuilder().addRows(Rows.newBuilder().setSession("wire-warm-up")
                        .setFirstPosition(i).setCount(count).setOutputRow(count - 1).setData(RowCodec.encode(rows, 0, count * width)))).build());
                if (!replies.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    throw new IllegalStateException("no echo within " + TIMEOUT_SECONDS + " s after " + i + " round trips");
                }
                if (failure[0] != null) throw new IllegalStateException("the echo stream broke", failure[0]);
            }
            out.onCompleted();
            return System.nanoTime() - t0;
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "stage transport warm-up failed (the first rows will be slower): " + e);
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        } finally {
            if (channel != null) channel.shutdownNow();
            if (server != null) server.shutdownNow();
            try {
                if (channel != null) channel.awaitTermination(5, TimeUnit.SECONDS);
                if (server != null) server.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Answers every rows entry that wants output with a token, as a last stage does. */
    private static final class Echo extends StageGrpc.StageImplBase {
        @Override
        public StreamObserver<Down> link(StreamObserver<Up> responses) {
            return new StreamObserver<>() {
                @Override
                public void onNext(Down d) {
                    Tokens.Builder t = Tokens.newBuilder().setComputeNanos(1);
                    for (Rows r : d.getRows().getRowsList()) {
                        if (r.getOutputRow() >= 0) t.addTokens(Token.newBuilder().setSession(r.getSession()).setPosition(r.getFirstPosition() + r.getOutputRow()));
                    }
                    responses.onNext(Up.newBuilder().setTokens(t).build());
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() { responses.onCompleted(); }
            };
        }
    }
}
