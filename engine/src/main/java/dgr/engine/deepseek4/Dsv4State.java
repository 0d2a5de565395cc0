package dgr.engine.deepseek4;

import dgr.engine.StateSlot;
import java.util.ArrayList;
import java.util.List;

/**
 * One session's V4 state on one stage (layout: {@link Dsv4StateLayout}). Window rows and
 * compressed entries are allocated as they are written, so {@link #bytes()} counts what is really
 * held.
 *
 * <p>Truncation: the window keeps only n_swa tokens and the compressor rings cannot be rebuilt
 * from the compressed lists (DSV4-SPEC 3.3), so a V4 slot can only be truncated to its own length
 * (no-op) or to 0 (reset).
 */
final class Dsv4State implements StateSlot {
    /** State of one layer. */
    static final class LayerState {
        final int ratio;
        final float[][] window;     // ring of n_swa rows, row p mod n_swa
        final List<float[]> entries = new ArrayList<>();   // compressed entries (CSA or HCA)
        final List<float[]> idxKeys = new ArrayList<>();   // indexer keys (CSA)
        final float[][] ringV, ringS;       // compressor value/score rows
        final float[][] idxRingV, idxRingS; // indexer compressor rows

        LayerState(int ratio, int nSwa, int d, int dI) {
            this.ratio = ratio;
            this.window = new float[nSwa][];
            int rows = ratio == 4 ? Dsv4StateLayout.CSA_RING : ratio == 128 ? Dsv4StateLayout.HCA_RING : 0;
            int w = ratio == 4 ? 2 * d : d;
            ringV = new float[rows][w];
            ringS = new float[rows][w];
            int irows = ratio == 4 ? Dsv4StateLayout.CSA_RING : 0;
            idxRingV = new float[irows][2 * dI];
            idxRingS = new float[irows][2 * dI];
        }

        long floats() {
            long n = 0;
            for (float[] r : window) if (r != null) n += r.length;
            for (float[] e : entries) n += e.length;
            for (float[] e : idxKeys) n += e.length;
            for (float[] r : ringV) n += r.length;
            for (float[] r : ringS) n += r.length;
            for (float[] r : idxRingV) n += r.length;
            for (float[] r : idxRingS) n += r.length;
            return n;
        }

        void clear() {
            java.util.Arrays.fill(window, null);
            entries.clear();
            idxKeys.clear();
            for (float[] r : ringV) java.util.Arrays.fill(r, 0f);
            for (float[] r : ringS) java.util.Arrays.fill(r, 0f);
            for (float[] r : idxRingV) java.util.Arrays.fill(r, 0f);
            for (float[] r : idxRingS) java.util.Arrays.fill(r, 0f);
        }
    }

    final Object owner;
    final LayerState[] layers;
    private final int capacity;
    private int length;
    private boolean closed;

    Dsv4State(Object owner, Dsv4StateLayout layout, int capacity) {
        this.owner = owner;
        this.capacity = capacity;
        layers = new LayerState[layout.ratios().length];
        for (int i = 0; i < layers.length; i++) {
            layers[i] = new LayerState(layout.ratios()[i], layout.nSwa(), layout.headDim(), layout.idxDim());
        }
    }

    @Override
    public int length() { return length; }

    void advance(int newLength) { length = newLength; }

    @Override
    public int capacity() { return capacity; }

    @Override
    public long bytes() {
        if (closed) return 0;
        long n = 0;
        for (LayerState l : layers) n += l.floats();
        return n * Dsv4StateLayout.BYTES;
    }

    @Override
    public void truncate(int newLength) {
        if (newLength < 0) throw new IllegalArgumentException("negative length " + newLength);
        if (newLength >= length) return;
        if (newLength != 0) {
            throw new UnsupportedOperationException("a deepseek4 slot cannot roll back from " + length + " to " + newLength
                    + " positions: its window and compressor rings only hold the latest tokens; truncate to 0 to reset");
        }
        for (LayerState l : layers) l.clear();
        length = 0;
    }

    @Override
    public boolean isClosed() { return closed; }

    @Override
    public void close() {
        closed = true;
    }
}
