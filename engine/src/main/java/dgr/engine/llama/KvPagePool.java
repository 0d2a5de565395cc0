package dgr.engine.llama;

import java.util.ArrayDeque;

/**
 * Recycles K/V pages between the slots of one engine, so steady-state serving (sessions opening
 * and closing) reuses memory instead of allocating. Only the scheduler thread touches it.
 *
 * <p>It keeps at most as many free pages as are in use, or {@link #FLOOR_BYTES} worth when fewer
 * are, counted in the bytes of its cache type's pages ({@link KvCodec#pageBytes}): enough for the load of the moment to close and reopen its sessions without allocating, while
 * a storm's pages go back to the heap once the storm is over (it used to keep its peak for good:
 * 616 MB of free pages while no session held any). {@link #freeBytes} is read by reports on other
 * threads.
 */
final class KvPagePool {
    /** Free pages kept regardless of load: a few sessions' worth for small models. */
    static final long FLOOR_BYTES = 32L << 20;

    private final KvCodec codec;
    private final long pageBytes;
    private final int floorPages;
    private final ArrayDeque<Object> free = new ArrayDeque<>();
    private int inUse;
    private volatile long freeBytes;

    KvPagePool(KvCodec codec) {
        this(codec, FLOOR_BYTES);
    }

    KvPagePool(KvCodec codec, long floorBytes) {
        this.codec = codec;
        this.pageBytes = codec.pageBytes();
        this.floorPages = (int) Math.max(1, floorBytes / pageBytes);
    }

    /** How the pages of this pool store their values. */
    KvCodec codec() {
        return codec;
    }

    Object take() {
        inUse++;
        Object p = free.pollFirst();
        if (p == null) return codec.newPage();
        freeBytes = pageBytes * free.size();
        return p;
    }

    void give(Object page) {
        inUse--;
        if (free.size() < Math.max(floorPages, inUse)) free.addFirst(page);
        // Else dropped: the GC takes it back. Keep trimming what an earlier, larger load left.
        while (free.size() > Math.max(floorPages, inUse)) free.pollLast();
        freeBytes = pageBytes * free.size();
    }

    int freePages() {
        return free.size();
    }

    /** Bytes of free pages held for reuse. */
    long freeBytes() {
        return freeBytes;
    }
}
