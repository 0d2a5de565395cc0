package dgr.cli;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code dgr logits -m FILE --tokens 1,2,3 [--top K]}: for every position the top-K ids with their
 * logits (highest first, lower id on ties) and the L2 norm of the full logit vector, as JSON.
 */
@Command(name = "logits", description = "Print top-K logits and the logit L2 norm at every position, as JSON.")
final class LogitsCommand implements Callable<Integer> {
    @Mixin
    ModelOptions model;

    @Option(names = "--tokens", required = true, description = "token ids, e.g. 1,2,3 (fed as-is, no BOS added)")
    String tokens;

    @Option(names = "--top", defaultValue = "10", description = "ids per position (default ${DEFAULT-VALUE})")
    int top;

    @Override
    public Integer call() {
        int[] ids = ModelOptions.parseTokens(tokens);
        if (top < 1) throw new IllegalArgumentException("--top must be at least 1");
        StringBuilder out = new StringBuilder("{\"positions\":[");
        try (Engine engine = model.load(); StateSlot slot = engine.openSlot()) {
            int maxRows = engine.features().maxRows();
            Batch batch = new Batch(maxRows, engine.boundarySchema().rowWidth());
            for (int start = 0; start < ids.length; start += maxRows) {
                batch.clear();
                int n = Math.min(maxRows, ids.length - start);
                for (int i = 0; i < n; i++) batch.addToken(slot, start + i, ids[start + i], true);
                ForwardResult r = engine.forward(batch);
                for (int i = 0; i < n; i++) {
                    if (start + i > 0) out.append(',');
                    appendPosition(out, start + i, r.outputArray(), r.outputOffset(i), r.outputWidth());
                }
            }
        }
        System.out.println(out.append("]}"));
        return 0;
    }

    private void appendPosition(StringBuilder out, int pos, float[] a, int off, int n) {
        int k = Math.min(top, n);
        int[] best = TopK.indices(a, off, n, k);
        double l2 = 0;
        for (int i = 0; i < n; i++) l2 += (double) a[off + i] * a[off + i];
        out.append("{\"pos\":").append(pos).append(",\"top\":[");
        for (int j = 0; j < k; j++) {
            if (j > 0) out.append(',');
            out.append('[').append(best[j]).append(',').append(a[off + best[j]]).append(']');
        }
        out.append("],\"l2\":").append((float) Math.sqrt(l2)).append('}');
    }
}
