package dgr.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import dgr.engine.sampler.GreedySampler;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.StringJoiner;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Issue 28, item 3: {@code dgr run} decodes through the scheduler and gives the engine's own greedy tokens. */
class RunCommandTest {

    @Test
    void greedyRunThroughTheSchedulerPrintsTheTokensOfAPlainGreedyLoop() {
        int[] prompt = {1, 45, 496, 173};
        int n = 12;
        String expected = plainGreedy(prompt, n);

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StringWriter err = new StringWriter();
        PrintStream saved = System.out;
        int exit;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            CommandLine cl = Main.commandLine();
            cl.setErr(new PrintWriter(err, true));
            exit = cl.execute("run", "--tokens", "1,45,496,173", "-n", Integer.toString(n), "--temp", "0", "--ids",
                    "--ignore-eos", "--threads", "2");
        } finally {
            System.setOut(saved);
        }
        assertThat(exit).as(err.toString()).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8).strip()).isEqualTo(expected);
    }

    /** The oracle: the engine stepped by hand, argmax each time, as {@code dgr run} did before it used the scheduler. */
    private static String plainGreedy(int[] prompt, int n) {
        try (Engine e = Engines.load(DefaultModel.path(), EngineOptions.defaults().withThreads(2)); StateSlot slot = e.openSlot()) {
            Batch b = new Batch(Math.max(prompt.length, 1), e.boundarySchema().rowWidth());
            for (int i = 0; i < prompt.length; i++) b.addToken(slot, i, prompt[i], i == prompt.length - 1);
            ForwardResult r = e.forward(b);
            int last = prompt.length - 1;
            StringJoiner ids = new StringJoiner(" ");
            for (int g = 0, pos = prompt.length; g < n; g++) {
                int next = GreedySampler.argmax(r.outputArray(), r.outputOffset(last), r.outputWidth());
                ids.add(Integer.toString(next));
                b.clear();
                last = b.addToken(slot, pos++, next, true);
                if (g < n - 1) r = e.forward(b);
            }
            return ids.toString();
        }
    }
}
