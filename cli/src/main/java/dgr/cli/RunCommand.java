package dgr.cli;

import dgr.engine.Engine;
import dgr.engine.chat.ChatMessage;
import dgr.engine.chat.ChatTemplate;
import dgr.engine.sampler.Sampler;
import dgr.engine.sampler.SamplerConfig;
import dgr.engine.tokenizer.Detokenizer;
import dgr.engine.tokenizer.Tokenizer;
import dgr.runtime.FinishReason;
import dgr.runtime.Scheduler;
import dgr.runtime.SchedulerConfig;
import dgr.runtime.Session;
import dgr.runtime.SessionEvent;
import dgr.runtime.SessionListener;
import dgr.runtime.SessionRequest;
import dgr.runtime.StopConditions;
import dgr.runtime.Submission;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.StringJoiner;
import java.util.concurrent.Callable;
import java.util.stream.IntStream;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code dgr run}: one session through the scheduler, stepped on this thread. Streams text (or, with {@code --ids}, the
 * generated ids on one line) and ends with exactly one line on standard error:
 * {@code prompt: N tokens, X tok/s; generation: M tokens, Y tok/s}.
 */
@Command(name = "run", description = "Generate text from a prompt and report prompt and generation speed.")
final class RunCommand implements Callable<Integer> {
    @Mixin
    ModelOptions model;

    static final class Input {
        @Option(names = {"-p", "--prompt"}, description = "prompt text")
        String prompt;

        @Option(names = "--tokens", description = "prompt token ids, e.g. 1,2,3 (fed as-is)")
        String tokens;
    }

    @ArgGroup(exclusive = true)
    Input input;

    @Option(names = {"-n", "--n-predict"}, defaultValue = "128", description = "tokens to generate (default ${DEFAULT-VALUE})")
    int nPredict;

    @Mixin
    SamplingOptions sampling;

    @Option(names = "--chat", description = "wrap the prompt as a user message in the model's chat template")
    boolean chat;

    @Option(names = "--ids", description = "print the generated token ids (space separated, one line) instead of text")
    boolean ids;

    @Option(names = "--ignore-eos", description = "keep generating past end-of-generation tokens")
    boolean ignoreEos;

    @Override
    public Integer call() {
        if (nPredict < 0) throw new IllegalArgumentException("-n must be 0 or more");
        PrintStream out = System.out;
        try (Engine engine = model.load()) {
            dgr.engine.WarmUp.run(engine, 2);
            Tokenizer tok = Tokenizer.fromMetadata(engine.info().metadata());
            int[] prompt = promptIds(tok);
            if (prompt.length == 0) throw new IllegalArgumentException("the prompt is empty");
            SamplerConfig config = sampling.config();
            if (config.seed() < 0) config = config.withSeed(System.nanoTime());
            Sampler sampler = new Sampler(config, engine.info().vocabSize());
            for (int id : prompt) sampler.accept(id);
            Detokenizer detok = tok.detokenizer();
            Generation g = new Generation(out, ids);
            // -n 0 measures the prompt alone: the session runs to its first token, which is not shown.
            int maxTokens = Math.max(1, nPredict);
            StopConditions stop = StopConditions.maxTokens(maxTokens);
            if (!ignoreEos) stop = stop.withEndTokens(IntStream.range(0, tok.vocabSize()).filter(tok::isEndOfGeneration).toArray());
            SessionRequest request = SessionRequest.of("run", prompt, maxTokens).withSampler(sampler).withStop(stop)
                    .withDecoder(detok::push).withListener(nPredict == 0 ? g::time : g);
            // One session, driven on this thread by the scheduler every command uses: prompt chunks as
            // wide as the engine takes, and all the state the session needs.
            int rows = engine.features().maxRows();
            SchedulerConfig sc = SchedulerConfig.defaults().withBatch(1, rows).withMaxPrefillChunk(rows)
                    .withStateBudgetBytes(Long.MAX_VALUE);
            try (Scheduler scheduler = new Scheduler(engine, sc)) {
                g.t0 = System.nanoTime();
                Submission sub = scheduler.submit(request);
                if (sub instanceof Submission.Rejected r) throw new IllegalArgumentException(r.message() + " (raise --ctx-size)");
                Session session = ((Submission.Accepted) sub).session();
                while (!session.completion().isDone()) scheduler.runIteration();
                SessionEvent.Finished f = session.completion().join();
                if (f.reason() == FinishReason.ERROR) throw new IllegalStateException("generation failed: " + f.message());
            }
            if (ids) {
                out.println(g.idLine);
            } else {
                out.print(detok.flush());
                out.println();
            }
            out.flush();
            int generated = nPredict == 0 ? 0 : g.generated;
            System.err.println(String.format(Locale.ROOT, "prompt: %d tokens, %.2f tok/s; generation: %d tokens, %.2f tok/s",
                    prompt.length, rate(prompt.length, g.t1 - g.t0), generated, rate(Math.max(0, generated - 1), g.t2 - g.t1)));
        }
        return 0;
    }

    /**
     * The session's tokens as they come: text (an end-of-generation id shows none) or ids, and the
     * times of the submission, the first token (the prompt done) and the last.
     */
    private static final class Generation implements SessionListener {
        private final PrintStream out;
        private final boolean ids;
        final StringJoiner idLine = new StringJoiner(" ");
        long t0, t1, t2;
        int generated;

        Generation(PrintStream out, boolean ids) {
            this.out = out;
            this.ids = ids;
        }

        @Override
        public void onEvent(SessionEvent e) {
            time(e);
            if (!(e instanceof SessionEvent.TokenEvent t)) return;
            generated++;
            if (ids) {
                idLine.add(Integer.toString(t.tokenId()));
            } else if (!t.text().isEmpty()) {
                out.print(t.text());
                out.flush();
            }
        }

        void time(SessionEvent e) {
            long now = System.nanoTime();
            if (e instanceof SessionEvent.TokenEvent t && t.index() == 0) t1 = now;
            t2 = now;
        }
    }

    /** Tokens per second; generation counts the forwards after the first sampled token. */
    private static double rate(int tokens, long nanos) {
        return nanos <= 0 ? 0 : tokens * 1e9 / nanos;
    }

    private int[] promptIds(Tokenizer tok) {
        if (input != null && input.tokens != null) return ModelOptions.parseTokens(input.tokens);
        String text = input != null && input.prompt != null ? input.prompt : "Once upon a time";
        if (chat) {
            ChatTemplate t = ChatTemplate.forModel(tok.chatTemplate());
            String bos = tok.hasBos() ? tok.piece(tok.bos()) : "";
            String eos = tok.eos().isPresent() ? tok.piece(tok.eos().getAsInt()) : "";
            String rendered = t.render(List.of(ChatMessage.user(text)), true, bos, eos);
            // The template writes BOS itself when it wants one; parse it as a special token.
            return tok.encode(rendered, false, true);
        }
        return tok.encode(text, tok.addBosByDefault(), false);
    }
}
