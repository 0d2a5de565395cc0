package dgr.node.stage;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dgr.engine.Engine;
import dgr.engine.Engines;
import dgr.node.stage.wire.Down;
import dgr.node.stage.wire.Open;
import dgr.node.stage.wire.Rows;
import dgr.node.stage.wire.RowsBatch;
import dgr.node.stage.wire.StageGrpc;
import dgr.node.stage.wire.Up;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Item 7 of issue 23: only cluster members talk on a stage port, and a malformed message is refused
 * with a gRPC status naming the fault while the stage keeps serving its other streams; a head of
 * another K/V cache type (issue 26) is refused by its recipe, the stage naming its state dtype.
 */
class StageWireGuardTest {
    static Engine last;
    static StageServer stage;
    static ManagedChannel channel;
    static int width;

    @BeforeAll
    static void start() {
        last = Engines.load(StageFixture.llamaTiny4(), StageFixture.options().withSpan(2, -1));
        stage = StageServer.start(last, StageFixture.stageOptions(Duration.ofMillis(200)));
        channel = NettyChannelBuilder.forAddress("127.0.0.1", stage.port()).usePlaintext().build();
        width = last.boundarySchema().rowWidth();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        stage.close();
        last.close();
    }

    /** Sends the messages on one stream and returns the status it ended with (or OK if it stayed open for 2 s). */
    /** A refusal on a machine shared by many builds can take seconds: up to 15 s for one. */
    static Status send(ClusterToken token, List<Down> messages) throws Exception { return send(token, messages, 15); }

    /** The stream's end status, or OK when it is still open after {@code seconds}. */
    static Status send(ClusterToken token, List<Down> messages, int seconds) throws Exception {
        CompletableFuture<Status> end = new CompletableFuture<>();
        var stub = token == null ? StageGrpc.newStub(channel) : StageGrpc.newStub(channel).withCallCredentials(token.credentials());
        StreamObserver<Down> out = stub.link(new StreamObserver<>() {
            @Override public void onNext(Up up) {}
            @Override public void onError(Throwable t) { end.complete(Status.fromThrowable(t)); }
            @Override public void onCompleted() { end.complete(Status.OK); }
        });
        for (Down d : messages) out.onNext(d);
        try {
            return end.get(seconds, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException stillOpen) {
            out.onCompleted();
            return Status.OK;
        }
    }

    static Down open(String session, String recipe, String schema) {
        return Down.newBuilder().setOpen(Open.newBuilder().setSession(session).setProtocol(Wire.PROTOCOL).setModelRecipeId(recipe)
                .setFirstLayer(2).setBoundarySchemaId(schema).setSampling(Wire.sampling(dgr.engine.sampler.SamplerConfig.greedy()))
                .setPendingPosition(-1)).build();
    }

    static Down open(String session) { return open(session, Wire.modelRecipeId(last), last.boundarySchema().id()); }

    static Down rows(String session, int first, int count, int floats) {
        return Down.newBuilder().setRows(RowsBatch.newBuilder().addRows(Rows.newBuilder().setSession(session).setFirstPosition(first)
                .setCount(count).setOutputRow(count - 1).setData(ByteString.copyFrom(new byte[floats * 4])))).build();
    }

    @Test
    void aPeerWithoutTheClusterTokenIsRefusedBeforeAnyRowIsRead() throws Exception {
        long rowsBefore = stage.stats().rows();
        Status none = send(null, List.of(open("s-none"), rows("s-none", 0, 1, width)));
        assertThat(none.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(none.getDescription()).contains("no cluster token");
        Status wrong = send(ClusterToken.of("not-the-token"), List.of(open("s-wrong"), rows("s-wrong", 0, 1, width)));
        assertThat(wrong.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(wrong.getDescription()).isEqualTo("wrong cluster token");
        assertThat(stage.stats().rows()).as("rows computed for refused peers").isEqualTo(rowsBefore);
        assertThat(stage.upstream()).as("refused peers never became upstream neighbours").isEmpty();
    }

    @Test
    void malformedMessagesAreRefusedWithAStatusNamingTheFaultAndTheStageServesOthers() throws Exception {
        ClusterToken token = ClusterToken.of(StageFixture.TOKEN);
        Status unknown = send(token, List.of(rows("nobody", 0, 1, width)));
        assertThat(unknown.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(unknown.getDescription()).isEqualTo("rows for unknown session nobody");

        Status length = send(token, List.of(open("short"), rows("short", 0, 2, width)));
        assertThat(length.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(length.getDescription()).contains("session short: " + width * 4 + " row bytes for 2 rows").contains(last.boundarySchema().id());

        Status order = send(token, List.of(open("gap"), rows("gap", 0, 1, width), rows("gap", 3, 1, width)));
        assertThat(order.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(order.getDescription()).isEqualTo("session gap: rows start at position 3, expected 1 (positions out of order)");

        Status schema = send(token, List.of(open("schema", Wire.modelRecipeId(last), "llama-512xf32-v1")));
        assertThat(schema.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(schema.getDescription()).contains("boundary schema llama-512xf32-v1 (sender) differs from " + last.boundarySchema().id() + " (this stage)");

        Status recipe = send(token, List.of(open("recipe", "0123456789abcdef", last.boundarySchema().id())));
        assertThat(recipe.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(recipe.getDescription()).contains("recipe 0123456789abcdef (sender) differs from " + Wire.modelRecipeId(last));

        // A head whose K/V cache type differs computes other numbers: its model recipe differs and the stage says why.
        var f16 = dgr.engine.KvCacheTypes.of(dgr.engine.KvCacheType.F16);
        try (Engine f16Head = Engines.load(StageFixture.llamaTiny4(), StageFixture.options().withSpan(0, 2).withCacheTypes(f16))) {
            Status cache = send(token, List.of(open("cache", Wire.modelRecipeId(f16Head), last.boundarySchema().id())));
            assertThat(cache.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
            assertThat(cache.getDescription()).contains("recipe " + Wire.modelRecipeId(f16Head) + " (sender) differs")
                    .contains("state dtype f32");
        }

        // The stage still serves a well-formed stream: open, rows, a token back.
        Status fine = send(token, List.of(open("fine"), rows("fine", 0, 3, 3 * width)), 2);
        assertThat(fine.getCode()).isEqualTo(Status.Code.OK);
        Await.until(Duration.ofSeconds(5), "the stage computed the good rows", () -> stage.stats().rows() >= 3);
        // Refused and finished streams' sessions are freed after the orphan grace.
        Await.until(Duration.ofSeconds(5), "every session freed", () -> stage.stats().sessions() == 0);
    }
}
