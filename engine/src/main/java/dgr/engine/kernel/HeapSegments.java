package dgr.engine.kernel;

import java.lang.foreign.MemorySegment;

/**
 * Heap segments over the float arrays a worker lately passed to native code, each made once while its
 * array stays among the last {@link #SIZE}: a critical downcall takes a segment, and one made per call
 * escapes into it, so C2 cannot remove it (two objects a call, megabytes a decode step). One per
 * worker thread; not thread-safe.
 */
public final class HeapSegments {
    /** A forward pass hands native code about ten arrays a worker. */
    private static final int SIZE = 16;
    private final float[][] arrays = new float[SIZE][];
    private final MemorySegment[] segments = new MemorySegment[SIZE];
    private int next;

    /** The segment over all of {@code a}. */
    public MemorySegment of(float[] a) {
        for (int i = 0; i < SIZE; i++) {
            if (arrays[i] == a) return segments[i];
        }
        int i = next;
        next = (i + 1) % SIZE;
        arrays[i] = a;
        segments[i] = MemorySegment.ofArray(a);
        return segments[i];
    }
}
