package dgr.runtime;

import dgr.engine.Batch;
import dgr.engine.BoundarySchema;
import dgr.engine.Engine;
import dgr.engine.EngineFeatures;
import dgr.engine.EngineId;
import dgr.engine.ForwardResult;
import dgr.engine.ModelInfo;
import dgr.engine.Recipe;
import dgr.engine.StateLayout;
import dgr.engine.StateSlot;
import dgr.gguf.Metadata;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;
import java.util.function.Predicate;

/**
 * A deterministic engine for scheduler tests. A row's logits are a hash of its slot's whole token
 * history and its position, so any row that lands in the wrong slot, at the wrong position or with
 * the wrong token changes every later logit of that session. It checks the Batch/StateSlot rules
 * like a real engine (before touching any slot) and records every batch it ran.
 */
final class FakeEngine implements Engine {
    record Row(int slotId, int position, int token, boolean wantOutput) {}

    record BatchRecord(List<Row> rows) {}

    static final class Layout implements StateLayout {
        private final String id;
        private final long bytesPerToken;

        Layout(String id, long bytesPerToken) {
            this.id = id;
            this.bytesPerToken = bytesPerToken;
        }

        @Override public String id() { return id; }
        @Override public long bytesForTokens(int tokens) { return tokens * bytesPerToken; }
        @Override public String describe() { return bytesPerToken + " B/token"; }
    }

    final class Slot implements StateSlot {
        final int id;
        int[] tokens = new int[8];
        long[] hashes = new long[8];
        int length;
        boolean closed;

        Slot(int id) { this.id = id; }

        FakeEngine owner() { return FakeEngine.this; }

        @Override public int length() { return length; }
        @Override public int capacity() { return contextLength; }
        @Override public long bytes() { return closed ? 0 : layout.bytesForTokens(length); }

        @Override
        public void truncate(int len) {
            if (len < length) length = Math.max(0, len);
        }

        @Override public boolean isClosed() { return closed; }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                openSlots--;
                if (failCloseWhen.test(id)) throw new IllegalStateException("injected slot close failure");
            }
        }

        long hashBefore(int position) { return position == 0 ? 0x9E3779B97F4A7C15L : hashes[position - 1]; }

        void append(int token) {
            if (length == tokens.length) {
                tokens = Arrays.copyOf(tokens, length * 2);
                hashes = Arrays.copyOf(hashes, length * 2);
            }
            tokens[length] = token;
            hashes[length] = mix(hashBefore(length) ^ mix(token * 0x100000001B3L + length));
            length++;
        }
    }

    private final EngineId id;
    private final boolean mixed;
    private final int maxRows;
    private final int vocab;
    private final int contextLength;
    private final Layout layout;
    private final Recipe recipe;
    private final float[] out;
    private final List<BatchRecord> batches = Collections.synchronizedList(new ArrayList<>());
    private Predicate<Batch> failWhen = b -> false;
    private IntPredicate failOpenWhen = n -> false;
    private IntPredicate failCloseWhen = id -> false;
    private int nextSlotId;
    private int openSlots;
    private int openCalls;
    private long forwardCalls;

    FakeEngine(String name, boolean mixed, int maxRows, int vocab, int contextLength, long bytesPerToken, String seed) {
        this(name, mixed, maxRows, vocab, contextLength, bytesPerToken, seed, 2);
    }

    /** {@code endLayer} 1: a head's span (layer 0 of 2), whose scheduler needs a route; 2: the whole model. */
    private FakeEngine(String name, boolean mixed, int maxRows, int vocab, int contextLength, long bytesPerToken, String seed, int endLayer) {
        this.id = new EngineId(name, 1);
        this.mixed = mixed;
        this.maxRows = maxRows;
        this.vocab = vocab;
        this.contextLength = contextLength;
        this.layout = new Layout("fake-kv-" + bytesPerToken, bytesPerToken);
        this.recipe = new Recipe("sha-" + seed, "fake", 0, endLayer, 2, contextLength, "f32", "none");
        this.out = new float[maxRows * vocab];
    }

    /** A head's span of the standard engine: its scheduler runs with a {@link Downstream}. */
    static FakeEngine head() {
        return new FakeEngine("fake-head", false, 256, 64, 512, 100, "a", 1);
    }

    static FakeEngine standard(boolean mixed) {
        return new FakeEngine("fake-" + (mixed ? "mixed" : "split"), mixed, 256, 64, 512, 100, "a");
    }

    /** Makes forward throw (before touching slots) for batches matching {@code p}. */
    FakeEngine failWhen(Predicate<Batch> p) {
        this.failWhen = p;
        return this;
    }

    /** Makes the {@code n}-th call to openSlot (0-based) throw, for {@code n} matching {@code p}. */
    FakeEngine failOpenWhen(IntPredicate p) {
        this.failOpenWhen = p;
        return this;
    }

    /** Makes closing the slot with id matching {@code p} throw (after it is closed). */
    FakeEngine failCloseWhen(IntPredicate p) {
        this.failCloseWhen = p;
        return this;
    }

    List<BatchRecord> batches() { return batches; }

    int openSlots() { return openSlots; }

    long forwardCalls() { return forwardCalls; }

    @Override public EngineId id() { return id; }
    @Override public EngineFeatures features() { return new EngineFeatures(mixed, maxRows, 1); }
    @Override public Recipe recipe() { return recipe; }
    @Override public StateLayout stateLayout() { return layout; }
    @Override public BoundarySchema boundarySchema() { return new BoundarySchema("fake", 8, "f32", 1); }

    @Override
    public ModelInfo info() {
        return new ModelInfo("fake", id.name(), vocab, contextLength, 2, 8, 0, new Metadata(Map.of()));
    }

    @Override
    public StateSlot openSlot() {
        if (failOpenWhen.test(openCalls++)) throw new IllegalStateException("injected openSlot failure");
        openSlots++;
        return new Slot(nextSlotId++);
    }

    @Override
    public ForwardResult forward(Batch batch) {
        forwardCalls++;
        validate(batch);
        if (failWhen.test(batch)) throw new IllegalStateException("injected failure");
        List<Row> rec = new ArrayList<>(batch.size());
        for (int r = 0; r < batch.size(); r++) {
            Slot s = (Slot) batch.slot(r);
            s.append(batch.token(r));
            rec.add(new Row(s.id, batch.position(r), batch.token(r), batch.wantsOutput(r)));
            if (batch.wantsOutput(r)) {
                long h = s.hashes[batch.position(r)];
                for (int j = 0; j < vocab; j++) {
                    out[r * vocab + j] = (mix(h + j * 0xD1B54A32D192ED03L) >>> 40) / (float) (1 << 24);
                }
            }
        }
        batches.add(new BatchRecord(List.copyOf(rec)));
        return new ForwardResult() {
            @Override public float[] outputArray() { return out; }
            @Override public int outputOffset(int row) { return row * vocab; }
            @Override public int outputWidth() { return vocab; }
        };
    }

    private void validate(Batch batch) {
        if (batch.size() == 0) throw new IllegalArgumentException("empty batch");
        if (batch.size() > maxRows) throw new IllegalArgumentException("too many rows");
        java.util.IdentityHashMap<StateSlot, Integer> next = new java.util.IdentityHashMap<>();
        StateSlot previous = null;
        for (int r = 0; r < batch.size(); r++) {
            StateSlot slot = batch.slot(r);
            if (!(slot instanceof Slot s) || s.owner() != this) throw new IllegalArgumentException("foreign slot at row " + r);
            if (s.closed) throw new IllegalArgumentException("closed slot at row " + r);
            Integer expected = next.get(s);
            if (expected != null && previous != s) throw new IllegalArgumentException("rows of a slot not consecutive");
            int want = expected == null ? s.length : expected;
            if (batch.position(r) != want) {
                throw new IllegalArgumentException("row " + r + " position " + batch.position(r) + " != " + want);
            }
            if (batch.position(r) >= contextLength) throw new IllegalArgumentException("past context");
            if (batch.token(r) < 0 || batch.token(r) >= vocab) throw new IllegalArgumentException("token out of range");
            next.put(s, want + 1);
            previous = s;
        }
    }

    @Override
    public void close() {}

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
