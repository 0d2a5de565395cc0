package dgr.engine.fuzz;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.ModelCheck;
import dgr.engine.StateSlot;
import dgr.gguf.GgufArtifact;
import dgr.gguf.GgufFile;
import dgr.gguf.GgufFormatException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The GGUF fuzzer: case {@code i} of seed {@code s} mutates one of the seed files in memory
 * ({@link GgufMutator}), parses it with every check {@code dgr run} and {@code serve} apply
 * ({@link GgufFile#parse}, then {@link ModelCheck}), and every {@code loadEvery}-th accepted case is
 * also written out, loaded by its engine and run for two tokens. Outcomes: a clean refusal (a
 * {@link GgufFormatException} or {@link IllegalArgumentException} with its own message), accepted,
 * a crash (any other throwable, OutOfMemoryError included), or a hang (over {@code caseTimeout}).
 */
final class GgufFuzz {
    enum Outcome { REFUSED, ACCEPTED, CRASHED, HUNG }

    /** A crash or hang, with what reproduces it. */
    record Finding(Outcome outcome, long seed, long caseIndex, String seedFile, String mutations, String error) {}

    record Report(long cases, Map<Outcome, Long> outcomes, long loaded, List<Finding> findings, long millis) {
        long count(Outcome o) { return outcomes.getOrDefault(o, 0L); }

        @Override
        public String toString() {
            return cases + " cases in " + millis + " ms: " + count(Outcome.REFUSED) + " refused cleanly, "
                    + count(Outcome.ACCEPTED) + " accepted (" + loaded + " of them loaded and run), "
                    + count(Outcome.CRASHED) + " crashed, " + count(Outcome.HUNG) + " hung";
        }
    }

    private record Seed(String name, byte[] bytes, byte[] scratch, GgufMutator mutator) {}

    private final List<Seed> seeds = new ArrayList<>();
    private final Path workDir;
    private final long caseTimeoutMillis;

    GgufFuzz(List<Path> seedFiles, Path workDir, long caseTimeoutMillis) {
        this.workDir = workDir;
        this.caseTimeoutMillis = caseTimeoutMillis;
        try {
            for (Path p : seedFiles) {
                byte[] b = Files.readAllBytes(p);
                seeds.add(new Seed(p.getFileName().toString(), b, b.clone(), new GgufMutator(b)));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Report run(long seed, long cases, int loadEvery, int maxFindings) {
        long t0 = System.nanoTime();
        Map<Outcome, Long> counts = new EnumMap<>(Outcome.class);
        List<Finding> findings = new ArrayList<>();
        long accepted = 0, loaded = 0;
        ExecutorService worker = Executors.newSingleThreadExecutor();
        try {
            for (long i = 0; i < cases; i++) {
                long caseIndex = i;
                SplittableRandom rng = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + i);
                Seed s = seeds.get(rng.nextInt(seeds.size()));
                StringBuilder log = new StringBuilder();
                int length = s.mutator().mutate(s.scratch(), rng, log);
                boolean load = false;
                Outcome o;
                String error = null;
                try {
                    Boolean parsed = within(worker, () -> parse(s, length));
                    o = Outcome.ACCEPTED;
                    if (parsed && loadEvery > 0 && accepted++ % loadEvery == 0) {
                        load = true;
                        within(worker, () -> loadAndRun(s, length, seed, caseIndex));
                    }
                } catch (TimeoutException e) {
                    o = Outcome.HUNG;
                    worker.shutdownNow();
                    worker = Executors.newSingleThreadExecutor();
                } catch (Throwable e) {
                    o = clean(e) ? Outcome.REFUSED : Outcome.CRASHED;
                    if (o == Outcome.CRASHED) error = e.toString();
                }
                if (load && o != Outcome.HUNG) loaded++;
                counts.merge(o, 1L, Long::sum);
                if ((o == Outcome.CRASHED || o == Outcome.HUNG) && findings.size() < maxFindings) {
                    findings.add(new Finding(o, seed, i, s.name(), log.toString(), error));
                }
                // Restore what a mutation may have touched: the header (truncations write nothing).
                System.arraycopy(s.bytes(), 0, s.scratch(), 0, s.mutator().headerEnd());
            }
        } finally {
            worker.shutdownNow();
        }
        return new Report(cases, counts, loaded, findings, (System.nanoTime() - t0) / 1_000_000);
    }

    /** True when every check passes. */
    private static boolean parse(Seed s, int length) {
        MemorySegment bytes = MemorySegment.ofArray(s.scratch()).asSlice(0, length);
        try (GgufArtifact a = GgufArtifact.of(GgufFile.parse(Path.of(s.name()), bytes))) {
            ModelCheck.require(a);
        }
        return true;
    }

    private boolean loadAndRun(Seed s, int length, long seed, long i) throws IOException {
        Path p = workDir.resolve("case-" + seed + "-" + i + ".gguf");
        try {
            Files.write(p, java.util.Arrays.copyOf(s.scratch(), length));
            EngineOptions opts = EngineOptions.defaults().withThreads(1).withMaxRows(4).withContextLength(64);
            try (Engine e = Engines.load(p, opts)) {
                StateSlot slot = e.openSlot();
                try {
                    Batch b = new Batch(2, e.boundarySchema().rowWidth());
                    b.addToken(slot, 0, 1, false);
                    b.addToken(slot, 1, 2, true);
                    e.forward(b);
                } finally {
                    slot.close();
                }
            }
            return true;
        } finally {
            Files.deleteIfExists(p);
        }
    }

    /** A refusal the user can act on: the checks' own exceptions, not a JDK one passing through. */
    private static boolean clean(Throwable e) {
        if (e instanceof NumberFormatException) return false;
        return e instanceof GgufFormatException || e instanceof IllegalArgumentException;
    }

    private <T> T within(ExecutorService worker, java.util.concurrent.Callable<T> task) throws Throwable {
        Future<T> f = worker.submit(task);
        try {
            return f.get(caseTimeoutMillis, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause();
        }
    }
}
