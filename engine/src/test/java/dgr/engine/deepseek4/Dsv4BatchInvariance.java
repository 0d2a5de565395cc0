package dgr.engine.deepseek4;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Batch;
import dgr.engine.EngineOptions;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The cases of DESIGN contract 1 for V4, run by {@link Dsv4BatchInvarianceTest} and the java-q8
 * classes beside it: a session's logits are bit-identical alone, in a batch of 8 with
 * strangers (prefill together, then decode together: the strangers choose other experts, and the
 * experts run once per batch over every row that chose them), and with its prompt cut into chunks
 * of any size, on one thread or two. Prompts cross the window (16), CSA blocks (4) and the HCA
 * block (128). Run on the float32 engine over the F16 conformance model, and on java-q8 over
 * quantised dsv4-tiny files (Q8_0; MXFP4 experts with Q8_0 elsewhere, as the V4 converter writes),
 * whose 8-bit kernels take batches of 16 rows and more on AMX.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class Dsv4BatchInvariance {
    Dsv4Engine solo, shared;
    int[] text;
    Path synthDir, model;

    /** The model file under test (made once per class). */
    abstract Path makeModel();

    abstract EngineOptions.Kind kind();

    /** dsv4-tiny synthesized with {@code quant} into a directory removed after the class. */
    Path synth(String quant) {
        try {
            synthDir = Files.createTempDirectory("dsv4-invariance");
            Path f = synthDir.resolve("dsv4-tiny-" + quant + ".gguf");
            Synth.write(SynthPreset.byName("dsv4-tiny"), QuantMix.parse(quant), 42, f);
            return f;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @BeforeAll
    void load() {
        Path m = model = makeModel();
        solo = Dsv4Engine.load(m, Dsv4Fixture.options(256).withKind(kind()));
        // Two threads for the shared engine: work split differently must not change a bit either.
        shared = Dsv4Engine.load(m, Dsv4Fixture.options(640).withThreads(2).withKind(kind()));
        text = Dsv4Fixture.intArray(Dsv4Fixture.refJson(), "prompt", "tokens");
    }

    @AfterAll
    void close() throws IOException {
        solo.close();
        shared.close();
        if (synthDir != null) {
            try (var files = Files.list(synthDir)) {
                for (Path f : files.toList()) Files.delete(f);
            }
            Files.delete(synthDir);
        }
    }

    int[] prompt(int session) {
        int len = 9 + 19 * session;  // 9 .. 142 tokens
        int start = (session * 11) % (text.length - len);
        return Arrays.copyOfRange(text, start, start + len);
    }

    @Test
    void eightSessionsAloneAndTogetherGiveBitIdenticalLogits() {
        int sessions = 8, steps = 4;
        float[][][] alone = new float[sessions][][];
        for (int s = 0; s < sessions; s++) {
            int[] p = prompt(s);
            StateSlot slot = solo.openSlot();
            float[][] pre = Dsv4Fixture.prefill(solo, slot, p, p.length);
            alone[s] = new float[steps + 1][];
            alone[s][0] = pre[p.length - 1];
            Batch b = new Batch(1, solo.boundarySchema().rowWidth());
            for (int t = 1; t <= steps; t++) {
                b.clear();
                b.addToken(slot, slot.length(), Dsv4Fixture.argmax(alone[s][t - 1]), true);
                alone[s][t] = solo.forward(b).copyOutput(0);
            }
        }

        StateSlot[] slots = new StateSlot[sessions];
        Batch b = new Batch(640, shared.boundarySchema().rowWidth());
        int[] lastRow = new int[sessions];
        for (int s = 0; s < sessions; s++) {
            slots[s] = shared.openSlot();
            int[] p = prompt(s);
            for (int i = 0; i < p.length; i++) lastRow[s] = b.addToken(slots[s], i, p[i], i == p.length - 1);
        }
        ForwardResult r = shared.forward(b);
        float[][] cur = new float[sessions][];
        for (int s = 0; s < sessions; s++) {
            cur[s] = r.copyOutput(lastRow[s]);
            assertThat(cur[s]).as("session %d prefill", s).containsExactly(alone[s][0]);
        }
        for (int t = 1; t <= steps; t++) {
            b.clear();
            // Reverse order each other step: a row's position in the batch must not matter either.
            for (int i = 0; i < sessions; i++) {
                int s = t % 2 == 0 ? i : sessions - 1 - i;
                lastRow[s] = b.addToken(slots[s], slots[s].length(), Dsv4Fixture.argmax(cur[s]), true);
            }
            r = shared.forward(b);
            for (int s = 0; s < sessions; s++) {
                cur[s] = r.copyOutput(lastRow[s]);
                assertThat(cur[s]).as("session %d step %d", s, t).containsExactly(alone[s][t]);
            }
        }
    }

    @Test
    void chunkedPrefillAtSeveralSizesGivesBitIdenticalLogits() {
        int[] p = Arrays.copyOf(text, 150);
        float[][] whole = Dsv4Fixture.prefill(solo, solo.openSlot(), p, p.length);
        for (int chunk : new int[] {1, 3, 16, 37, 128}) {
            float[][] got = Dsv4Fixture.prefill(shared, shared.openSlot(), p, chunk);
            for (int i = 0; i < p.length; i++) {
                assertThat(got[i]).as("chunk %d position %d", chunk, i).containsExactly(whole[i]);
            }
        }
    }

    @Test
    void aModelSplitIntoTwoStagesGivesBitIdenticalLogits() {
        int[] p = Arrays.copyOf(text, 40);
        float[][] whole = Dsv4Fixture.prefill(solo, solo.openSlot(), p, p.length);
        try (Dsv4Engine a = Dsv4Engine.load(model, Dsv4Fixture.options(64).withSpan(0, 2).withKind(kind()));
             Dsv4Engine z = Dsv4Engine.load(model, Dsv4Fixture.options(64).withSpan(2, 4).withKind(kind()))) {
            assertThat(a.boundarySchema()).isEqualTo(z.boundarySchema());
            int width = a.boundarySchema().rowWidth();
            StateSlot sa = a.openSlot(), sz = z.openSlot();
            Batch ba = new Batch(64, width), bz = new Batch(64, width);
            for (int i = 0; i < p.length; i++) ba.addToken(sa, i, p[i], false);
            ForwardResult ra = a.forward(ba);
            assertThat(ra.outputWidth()).isEqualTo(width);
            for (int i = 0; i < p.length; i++) bz.addBoundary(sz, i, ra.outputArray(), ra.outputOffset(i), true);
            ForwardResult rz = z.forward(bz);
            for (int i = 0; i < p.length; i++) assertThat(rz.copyOutput(i)).as("position %d", i).containsExactly(whole[i]);
        }
    }
}
