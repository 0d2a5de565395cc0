package dgr.engine.llama;

import java.util.ArrayDeque;

/**
 * Recycles K/V pages between the slots of one engine, so steady-state serving (sessions opening
 * and closing) reuses memory instead of allocating. Only the scheduler thread touches it.
 */
final class KvPagePool {
    private final int pageFloats;
    private final ArrayDeque<float[]> free = new ArrayDeque<>();

    KvPagePool(int pageFloats) {
        this.pageFloats = pageFloats;
    }

    float[] take() {
        float[] p = free.pollFirst();
        return p != null ? p : new float[pageFloats];
    }

    void give(float[] page) {
        free.addFirst(page);
    }

    int freePages() {
        return free.size();
    }
}
