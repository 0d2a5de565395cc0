package dgr.engine;

import java.util.Arrays;

/**
 * Rows for one forward pass over a stage's layers. Reusable: the scheduler clears and refills one
 * instance per iteration, so forming a batch allocates nothing.
 *
 * <p>A row is one token position of one session: its state slot, its position, and either a token
 * id (first stage) or a boundary activation of {@code boundaryWidth} floats (later stages). Rows
 * of one session in one batch (a prefill chunk) must be consecutive and in position order, and the
 * first of them must sit at the slot's current length.
 */
public final class Batch {
    private final int maxRows;
    private final int boundaryWidth;
    private final StateSlot[] slots;
    private final int[] positions;
    private final int[] tokens;
    private final boolean[] wantOutput;
    private final float[] boundary;
    private int size;

    public Batch(int maxRows, int boundaryWidth) {
        this.maxRows = maxRows;
        this.boundaryWidth = boundaryWidth;
        this.slots = new StateSlot[maxRows];
        this.positions = new int[maxRows];
        this.tokens = new int[maxRows];
        this.wantOutput = new boolean[maxRows];
        this.boundary = new float[Math.multiplyExact(maxRows, boundaryWidth)];
    }

    public void clear() {
        Arrays.fill(slots, 0, size, null);
        size = 0;
    }

    /** Adds a token row (first stage). Returns the row index. */
    public int addToken(StateSlot slot, int position, int token, boolean wantOutput) {
        int r = next();
        slots[r] = slot;
        positions[r] = position;
        tokens[r] = token;
        this.wantOutput[r] = wantOutput;
        return r;
    }

    /** Adds a boundary row (later stage): copies {@code width} floats from {@code src[off..]}. */
    public int addBoundary(StateSlot slot, int position, float[] src, int off, boolean wantOutput) {
        int r = next();
        slots[r] = slot;
        positions[r] = position;
        tokens[r] = -1;
        this.wantOutput[r] = wantOutput;
        System.arraycopy(src, off, boundary, r * boundaryWidth, boundaryWidth);
        return r;
    }

    private int next() {
        if (size == maxRows) throw new IllegalStateException("batch is full (" + maxRows + " rows)");
        return size++;
    }

    public int size() { return size; }
    public int maxRows() { return maxRows; }
    public int boundaryWidth() { return boundaryWidth; }
    public StateSlot slot(int row) { return slots[row]; }
    public int position(int row) { return positions[row]; }
    /** Token id of a first-stage row, or -1 for a boundary row. */
    public int token(int row) { return tokens[row]; }
    public boolean wantsOutput(int row) { return wantOutput[row]; }
    /** Boundary input rows, {@code boundaryWidth} floats per row, row-major. */
    public float[] boundary() { return boundary; }
}
