package dgr.node;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A strict parser of the Prometheus text exposition format 0.0.4: every line must be a HELP, a
 * TYPE or a well-formed sample of a declared family; histograms must have cumulative buckets ending
 * in {@code le="+Inf"} equal to {@code _count}. Throws on anything else.
 */
final class PromText {
    record Sample(String name, Map<String, String> labels, double value) {}

    private static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})? (\\S+)( -?\\d+)?");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\[\\\\\"n])*)\"");

    final Map<String, String> types = new LinkedHashMap<>();
    final List<Sample> samples = new ArrayList<>();

    static PromText parse(String text) {
        PromText p = new PromText();
        if (!text.endsWith("\n")) throw new IllegalArgumentException("exposition must end with a newline");
        int lineNo = 0;
        for (String line : text.split("\n", -1)) {
            lineNo++;
            if (line.isEmpty()) continue;
            if (line.startsWith("# HELP ")) {
                String name = line.substring(7).split(" ", 2)[0];
                if (!NAME.matcher(name).matches()) throw bad(lineNo, line);
            } else if (line.startsWith("# TYPE ")) {
                String[] parts = line.substring(7).split(" ");
                if (parts.length != 2 || !NAME.matcher(parts[0]).matches()
                        || !List.of("counter", "gauge", "histogram", "summary", "untyped").contains(parts[1])) {
                    throw bad(lineNo, line);
                }
                if (p.types.put(parts[0], parts[1]) != null) throw bad(lineNo, "duplicate TYPE: " + line);
            } else if (line.startsWith("#")) {
                // other comments are allowed by the format
            } else {
                Matcher m = SAMPLE.matcher(line);
                if (!m.matches()) throw bad(lineNo, line);
                String name = m.group(1);
                if (p.family(name) == null) throw bad(lineNo, "sample of an undeclared family: " + line);
                Map<String, String> labels = new LinkedHashMap<>();
                if (m.group(3) != null && !m.group(3).isEmpty()) {
                    String rest = m.group(3);
                    Matcher lm = LABEL.matcher(rest);
                    int pos = 0;
                    while (pos < rest.length()) {
                        if (!lm.find(pos) || lm.start() != pos) throw bad(lineNo, line);
                        labels.put(lm.group(1), lm.group(2));
                        pos = lm.end();
                        if (pos < rest.length()) {
                            if (rest.charAt(pos) != ',') throw bad(lineNo, line);
                            pos++;
                        }
                    }
                }
                p.samples.add(new Sample(name, labels, value(m.group(4), lineNo)));
            }
        }
        p.checkHistograms();
        return p;
    }

    /** The declared family a sample name belongs to (histograms and counters add suffixes). */
    String family(String sample) {
        if (types.containsKey(sample)) return sample;
        for (String suffix : List.of("_bucket", "_count", "_sum", "_total", "_created")) {
            if (sample.endsWith(suffix)) {
                String base = sample.substring(0, sample.length() - suffix.length());
                if (types.containsKey(base)) return base;
            }
        }
        return null;
    }

    private void checkHistograms() {
        Map<String, List<Sample>> buckets = new HashMap<>();
        for (Sample s : samples) {
            String fam = family(s.name);
            if ("histogram".equals(types.get(fam)) && s.name.endsWith("_bucket")) {
                Map<String, String> key = new LinkedHashMap<>(s.labels);
                key.remove("le");
                buckets.computeIfAbsent(fam + key, k -> new ArrayList<>()).add(s);
            }
        }
        for (var e : buckets.entrySet()) {
            double prev = -1;
            double prevLe = Double.NEGATIVE_INFINITY;
            for (Sample b : e.getValue()) {
                double le = value(b.labels.get("le"), -1);
                if (le <= prevLe || b.value < prev) throw new IllegalArgumentException("non-cumulative buckets " + e.getKey());
                prev = b.value;
                prevLe = le;
            }
            if (prevLe != Double.POSITIVE_INFINITY) throw new IllegalArgumentException("no +Inf bucket " + e.getKey());
        }
    }

    /** The value of the one sample with this name and these labels (a subset match). */
    double value(String name, Map<String, String> labels) {
        List<Sample> found = samples.stream().filter(s -> s.name.equals(name)
                && s.labels.entrySet().containsAll(labels.entrySet())).toList();
        if (found.size() != 1) throw new IllegalArgumentException(found.size() + " samples match " + name + labels);
        return found.getFirst().value;
    }

    private static double value(String v, int lineNo) {
        return switch (v) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> {
                try {
                    yield Double.parseDouble(v);
                } catch (NumberFormatException e) {
                    throw bad(lineNo, "bad value " + v);
                }
            }
        };
    }

    private static IllegalArgumentException bad(int lineNo, String line) {
        return new IllegalArgumentException("line " + lineNo + ": " + line);
    }
}
