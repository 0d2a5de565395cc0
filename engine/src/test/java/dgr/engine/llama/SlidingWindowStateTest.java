package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.StateSlot;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Sliding-window layers keep only the pages a next position can attend to: memory, accounting,
 * page reuse between sessions, and roll-back limits. (That the pages given back are never read is
 * held by {@code LlamaCppCrossCheckTest}'s long-prompt cases.)
 */
class SlidingWindowStateTest {
    /** gemma3-tiny's state: 6 layers, 2 KV heads of 128, window 8, layer 5 global. */
    private static final KvLayout GEMMA3 = new KvLayout(6, 2, 128, 8, 6, 0);
    private static final long PER_POSITION = 2L * 2 * 128 * Float.BYTES;

    @Test
    void localLayersAccountOnlyForTheirWindowsPages() {
        assertThat(GEMMA3.localLayers()).isEqualTo(5);
        assertThat(GEMMA3.isLocal(5)).isFalse();
        // Below one page past the window everything is kept.
        assertThat(GEMMA3.bytesForTokens(70)).isEqualTo(6 * 70 * PER_POSITION);
        // 300 positions: the next attends from 293, so local layers keep the page from 256.
        assertThat(GEMMA3.keptFrom(300)).isEqualTo(256);
        assertThat(GEMMA3.bytesForTokens(300)).isEqualTo((300 + 5 * 44) * PER_POSITION);
        assertThat(new KvLayout(6, 2, 128).bytesForTokens(300)).isEqualTo(6 * 300 * PER_POSITION);
        // A stage from layer 3 of the model: its span layer 2 is the model's global layer 5.
        KvLayout stage = new KvLayout(3, 2, 128, 8, 6, 3);
        assertThat(stage.isLocal(2)).isFalse();
        assertThat(stage.isLocal(0)).isTrue();
        assertThat(stage.id()).isEqualTo("llama-kv-f32/3x2x2x128/window8-localLLG");
        assertThat(new KvLayout(6, 2, 128).id()).isEqualTo("llama-kv-f32/6x2x2x128");
    }

    @Test
    void aLongSessionHoldsAboutAWindowOfPagesInLocalLayersAndGivesThemBackForReuse() {
        KvPagePool pool = new KvPagePool(KvCodec.of(dgr.engine.KvCacheType.F32, GEMMA3.kvDim(), GEMMA3.headDim()));
        KvSlot slot = new KvSlot(null, GEMMA3, pool, 4096);
        for (int n = 1; n <= 1000; n++) {
            slot.ensure(n);
            slot.setLength(n);
            assertThat(slot.bytes()).isEqualTo(GEMMA3.bytesForTokens(n));
        }
        slot.close();
        // Every page ever made is back in the pool: the global layer's 16 K and 16 V pages, and
        // the local layers' few, reused as their windows moved (without reuse: 5 × 32 more).
        assertThat(pool.freePages()).isBetween(32 + 5 * 2 * 2, 32 + 5 * 2 * 3);
    }

    @Test
    void rollingBackPastWhatLocalLayersGaveBackIsRefusedWithNothingChanged() {
        KvPagePool pool = new KvPagePool(KvCodec.of(dgr.engine.KvCacheType.F32, GEMMA3.kvDim(), GEMMA3.headDim()));
        KvSlot slot = new KvSlot(null, GEMMA3, pool, 4096);
        slot.ensure(300);
        slot.setLength(300);
        assertThatThrownBy(() -> slot.truncate(250))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessage("cannot roll back to 250 positions: the sliding-window layers keep positions from 256 only (window 8)");
        assertThat(slot.length()).isEqualTo(300);
        slot.truncate(290); // attends from 283: still held
        assertThat(slot.length()).isEqualTo(290);
        assertThat(slot.bytes()).isEqualTo(GEMMA3.bytesForTokens(290));
        slot.truncate(0); // nothing attended to: always allowed
        assertThat(slot.bytes()).isZero();
    }

    /**
     * Two long sessions batched in one engine, prefill chunked at 64 so local pages are given back
     * between chunks and taken up again by the other session, give the same bits as each alone.
     */
    @Test
    void sessionsSharingRecycledPagesGiveTheirSoloBits() {
        SplittableRandom rnd = new SplittableRandom(3);
        int[][] prompts = {new int[150], new int[210]};
        for (int[] p : prompts) for (int i = 0; i < p.length; i++) p[i] = rnd.nextInt(1025);
        BatchInvarianceTest.Trace[] alone = new BatchInvarianceTest.Trace[2];
        for (int s = 0; s < 2; s++) {
            try (Engine e = TinyModels.load("gemma3-Q8_0", EngineOptions.Kind.SIMD, 2, 256)) {
                alone[s] = BatchInvarianceTest.run(e, new int[][] {prompts[s]}, Integer.MAX_VALUE)[0];
            }
        }
        try (Engine e = TinyModels.load("gemma3-Q8_0", EngineOptions.Kind.SIMD, 2, 256)) {
            BatchInvarianceTest.Trace[] together = BatchInvarianceTest.run(e, prompts, 64);
            for (int s = 0; s < 2; s++) {
                assertThat(together[s].tokens()).isEqualTo(alone[s].tokens());
                for (int i = 0; i < alone[s].logits().size(); i++) {
                    assertThat(BatchInvarianceTest.bits(together[s].logits().get(i)))
                            .isEqualTo(BatchInvarianceTest.bits(alone[s].logits().get(i)));
                }
            }
            try (StateSlot probe = e.openSlot()) {
                assertThat(e.stateLayout().id()).isEqualTo("llama-kv-f32/6x2x2x128/window8-localLLLLLG");
                assertThat(probe.bytes()).isZero();
            }
        }
    }
}
