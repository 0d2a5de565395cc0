package dgr.cli;

import dgr.engine.tokenizer.Tokenizer;
import dgr.gguf.GgufArtifact;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code dgr tokenize -m FILE [--no-bos] [--special] TEXT}: the ids, space separated, one line. */
@Command(name = "tokenize", description = "Print the token ids of TEXT, space separated, on one line.")
final class TokenizeCommand implements Callable<Integer> {
    @Option(names = {"-m", "--model"}, description = "GGUF model or vocabulary file (default: the built-in model)")
    Path model;

    @Option(names = "--no-bos", description = "do not add the BOS token")
    boolean noBos;

    @Option(names = "--special", description = "parse special-token text inside TEXT as special tokens")
    boolean special;

    @Parameters(index = "0", paramLabel = "TEXT")
    String text;

    @Override
    public Integer call() {
        Path p = model != null ? model : DefaultModel.path();
        try (GgufArtifact a = GgufArtifact.open(p)) {
            Tokenizer tok = Tokenizer.fromMetadata(a.metadata());
            int[] ids = tok.encode(text, !noBos && tok.addBosByDefault(), special);
            System.out.println(Arrays.stream(ids).mapToObj(Integer::toString).collect(Collectors.joining(" ")));
        }
        return 0;
    }
}
