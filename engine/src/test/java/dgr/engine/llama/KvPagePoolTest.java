package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The page pool reuses pages under steady load and gives a storm's pages back once it is over. */
class KvPagePoolTest {
    private static final int PAGE_FLOATS = 1024;
    /** Pages of 64 positions x 16 floats: 1024 floats, 4 KiB. */
    private static final KvCodec F32 = KvCodec.of(dgr.engine.KvCacheType.F32, PAGE_FLOATS / KvLayout.PAGE_TOKENS, PAGE_FLOATS / KvLayout.PAGE_TOKENS);

    @Test
    void aStormsPagesGoBackToTheHeapDownToTheFloorOnceItEnds() {
        KvPagePool pool = new KvPagePool(F32, 4L * 4 * PAGE_FLOATS); // floor: 4 pages
        List<Object> taken = new ArrayList<>();
        for (int i = 0; i < 200; i++) taken.add(pool.take());
        taken.forEach(pool::give);
        assertThat(pool.freePages()).isEqualTo(4);
        assertThat(pool.freeBytes()).isEqualTo(4L * 4 * PAGE_FLOATS);
    }

    @Test
    void steadyLoadReusesPagesWithoutAllocating() {
        KvPagePool pool = new KvPagePool(F32, 4L * 4 * PAGE_FLOATS);
        List<Object> running = new ArrayList<>();
        for (int i = 0; i < 100; i++) running.add(pool.take());
        // Half the sessions close and reopen: the pool keeps what the load in use may ask back.
        List<Object> closed = new ArrayList<>(running.subList(0, 50));
        running.subList(0, 50).clear();
        closed.forEach(pool::give);
        assertThat(pool.freePages()).isEqualTo(50);
        for (int i = 0; i < 50; i++) assertThat(pool.take()).isSameAs(closed.get(49 - i));
    }

    @Test
    void freeBytesCountTheCacheTypesRealPageBytes() {
        // 64 positions x 128 values: f32 32 KiB, f16 and bf16 16 KiB, q8_0 8.5 KiB (34 bytes per 32 values).
        long[] expected = {32768, 16384, 16384, 8704};
        dgr.engine.KvCacheType[] types = dgr.engine.KvCacheType.values();
        for (int i = 0; i < types.length; i++) {
            KvPagePool pool = new KvPagePool(KvCodec.of(types[i], 128, 128));
            pool.give(pool.take());
            assertThat(pool.freeBytes()).as(types[i].flag()).isEqualTo(expected[i]);
        }
    }
}
