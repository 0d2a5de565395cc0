package dgr.cli;

import dgr.engine.ModelCheck;
import dgr.gguf.GgmlType;
import dgr.gguf.GgufArtifact;
import dgr.gguf.MetaValue;
import dgr.gguf.TensorInfo;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code dgr inspect FILE}: metadata, tensor table, totals per type, parameter count. */
@Command(name = "inspect", description = "Show a GGUF file's metadata, tensors, totals per type and parameter count.")
final class InspectCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "FILE", description = "GGUF file (part 1 of a split set opens all parts)")
    Path file;

    @Option(names = "--array-items", defaultValue = "8", description = "array elements to show (default ${DEFAULT-VALUE})")
    int arrayItems;

    @Option(names = "--no-tensors", description = "omit the tensor table")
    boolean noTensors;

    @Override
    public Integer call() {
        PrintStream out = System.out;
        try (GgufArtifact a = GgufArtifact.open(file, false)) {
            out.printf("file: %s%n", a.path());
            out.printf("parts: %d, bytes: %d, GGUF version %d, alignment %d%n", a.parts().size(), a.totalBytes(),
                    a.parts().getFirst().version(), a.parts().getFirst().alignment());
            out.printf("%nmetadata (%d keys):%n", a.metadata().asMap().size());
            a.metadata().asMap().forEach((k, v) -> out.printf("  %-44s %-8s %s%n", k, typeName(v), show(v)));
            Map<GgmlType, long[]> perType = new EnumMap<>(GgmlType.class);
            long params = 0;
            if (!noTensors) {
                out.printf("%ntensors (%d):%n", a.tensors().size());
                out.printf("  %-40s %-6s %-22s %14s%n", "name", "type", "shape (ne)", "bytes");
            }
            for (TensorInfo t : a.tensors()) {
                long[] acc = perType.computeIfAbsent(t.type(), k -> new long[3]);
                acc[0]++;
                acc[1] += t.elementCount();
                acc[2] += t.byteSize();
                params += t.elementCount();
                if (!noTensors) {
                    out.printf("  %-40s %-6s %-22s %14d%n", t.name(), t.type(), t.shapeString(), t.byteSize());
                }
            }
            out.printf("%ntotals per type:%n");
            out.printf("  %-6s %8s %16s %16s %8s%n", "type", "tensors", "elements", "bytes", "bits/w");
            perType.forEach((t, acc) -> out.printf("  %-6s %8d %16d %16d %8.3f%n", t, acc[0], acc[1], acc[2],
                    acc[2] * 8.0 / acc[1]));
            out.printf("%nparameters: %d (%s)%n", params, human(params));
            // The checks that make `run` and `serve` refuse the file, reported here without refusing.
            for (var part : a.parts()) for (String w : part.layoutWarnings()) out.printf("warning: %s: %s%n", part.path(), w);
            for (ModelCheck.Problem problem : ModelCheck.problems(a)) out.printf("warning: %s%n", problem);
            String arch = a.metadata().getString("general.architecture", "?");
            int nextn = a.metadata().getInt(arch + ".nextn_predict_layers", 0);
            if (nextn > 0) {
                out.printf("note: %d multi-token-prediction layer(s) are loaded but not used for normal decoding%n", nextn);
            }
        }
        return 0;
    }

    private static String typeName(MetaValue v) {
        return v.value() instanceof MetaValue.MetaArray arr ? "[" + arr.elementType() + "]" : v.type().toString();
    }

    private String show(MetaValue v) {
        if (v.value() instanceof MetaValue.MetaArray arr) {
            int n = arr.elements().size();
            StringBuilder sb = new StringBuilder("(" + n + ") [");
            for (int i = 0; i < Math.min(n, arrayItems); i++) {
                if (i > 0) sb.append(", ");
                Object e = arr.elements().get(i);
                sb.append(e instanceof String s ? quote(s) : e instanceof MetaValue.MetaArray m ? "[" + m.elements().size() + " items]" : e);
            }
            return sb.append(n > arrayItems ? ", ...]" : "]").toString();
        }
        return v.value() instanceof String s ? quote(s.length() > 120 ? s.substring(0, 117) + "..." : s) : String.valueOf(v.value());
    }

    private static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '\n' -> sb.append("\\n");
                case '\t' -> sb.append("\\t");
                case '"' -> sb.append("\\\"");
                default -> sb.append(c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
            }
        }
        return sb.append('"').toString();
    }

    static String human(long n) {
        if (n >= 1_000_000_000L) return String.format("%.2f B", n / 1e9);
        if (n >= 1_000_000L) return String.format("%.1f M", n / 1e6);
        if (n >= 1_000L) return String.format("%.1f K", n / 1e3);
        return Long.toString(n);
    }
}
