package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The page pool reuses pages under steady load and gives a storm's pages back once it is over. */
class KvPagePoolTest {
    private static final int PAGE_FLOATS = 1024;

    @Test
    void aStormsPagesGoBackToTheHeapDownToTheFloorOnceItEnds() {
        KvPagePool pool = new KvPagePool(PAGE_FLOATS, 4L * 4 * PAGE_FLOATS); // floor: 4 pages
        List<float[]> taken = new ArrayList<>();
        for (int i = 0; i < 200; i++) taken.add(pool.take());
        taken.forEach(pool::give);
        assertThat(pool.freePages()).isEqualTo(4);
        assertThat(pool.freeBytes()).isEqualTo(4L * 4 * PAGE_FLOATS);
    }

    @Test
    void steadyLoadReusesPagesWithoutAllocating() {
        KvPagePool pool = new KvPagePool(PAGE_FLOATS, 4L * 4 * PAGE_FLOATS);
        List<float[]> running = new ArrayList<>();
        for (int i = 0; i < 100; i++) running.add(pool.take());
        // Half the sessions close and reopen: the pool keeps what the load in use may ask back.
        List<float[]> closed = new ArrayList<>(running.subList(0, 50));
        running.subList(0, 50).clear();
        closed.forEach(pool::give);
        assertThat(pool.freePages()).isEqualTo(50);
        for (int i = 0; i < 50; i++) assertThat(pool.take()).isSameAs(closed.get(49 - i));
    }
}
