package dgr.cli;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import dgr.engine.chat.ChatMessage;
import dgr.engine.chat.ChatTemplate;
import dgr.engine.sampler.Sampler;
import dgr.engine.sampler.SamplerConfig;
import dgr.engine.tokenizer.Detokenizer;
import dgr.engine.tokenizer.Tokenizer;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.StringJoiner;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code dgr run}: one session straight on the engine. Streams text (or, with {@code --ids}, the
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
        try (Engine engine = model.load(); StateSlot slot = engine.openSlot()) {
            dgr.engine.WarmUp.run(engine, 2);
            Tokenizer tok = Tokenizer.fromMetadata(engine.info().metadata());
            int[] prompt = promptIds(tok);
            if (prompt.length == 0) throw new IllegalArgumentException("the prompt is empty");
            if (prompt.length + nPredict > slot.capacity()) {
                throw new IllegalArgumentException("prompt (" + prompt.length + " tokens) + -n " + nPredict
                        + " exceeds the context length " + slot.capacity() + " (raise --ctx-size)");
            }
            SamplerConfig config = sampling.config();
            if (config.seed() < 0) config = config.withSeed(System.nanoTime());
            Sampler sampler = new Sampler(config, engine.info().vocabSize());
            for (int id : prompt) sampler.accept(id);
            Detokenizer detok = tok.detokenizer();
            int maxRows = engine.features().maxRows();
            Batch batch = new Batch(maxRows, engine.boundarySchema().rowWidth());

            long t0 = System.nanoTime();
            ForwardResult r = null;
            for (int start = 0; start < prompt.length; start += maxRows) {
                batch.clear();
                int n = Math.min(maxRows, prompt.length - start);
                for (int i = 0; i < n; i++) {
                    batch.addToken(slot, start + i, prompt[start + i], start + i == prompt.length - 1);
                }
                r = engine.forward(batch);
            }
            int last = batch.size() - 1;
            long t1 = System.nanoTime();
            StringJoiner idLine = new StringJoiner(" ");
            int generated = 0;
            int pos = prompt.length;
            while (generated < nPredict) {
                int next = sampler.sample(r.outputArray(), r.outputOffset(last), r.outputWidth());
                generated++;
                boolean end = !ignoreEos && tok.isEndOfGeneration(next);
                if (ids) {
                    idLine.add(Integer.toString(next));
                } else if (!end) {
                    out.print(detok.push(next));
                    out.flush();
                }
                if (end || generated == nPredict) break;
                batch.clear();
                last = batch.addToken(slot, pos++, next, true);
                r = engine.forward(batch);
            }
            long t2 = System.nanoTime();
            if (ids) {
                out.println(idLine);
            } else {
                out.print(detok.flush());
                out.println();
            }
            out.flush();
            System.err.println(String.format(Locale.ROOT, "prompt: %d tokens, %.2f tok/s; generation: %d tokens, %.2f tok/s",
                    prompt.length, rate(prompt.length, t1 - t0), generated, rate(Math.max(0, generated - 1), t2 - t1)));
        }
        return 0;
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
