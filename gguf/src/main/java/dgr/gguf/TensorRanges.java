package dgr.gguf;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The tensor table's data ranges, checked together: each tensor's bytes ({@code type × shape}) must
 * lie in the data section (checked per tensor by {@link GgufFile}) and no two tensors may share a
 * byte. A corrupt type or offset otherwise makes two weights alias one another and the model runs
 * on garbage without a word; llama.cpp's writer and gguf-py lay tensors out back to back, never
 * overlapping. Runs over the parsed table only: nothing is allocated or read from the data.
 */
final class TensorRanges {
    private TensorRanges() {}

    /** One tensor's bytes relative to the data section: {@code [start, end)}. */
    record Range(String name, long start, long end) {}

    /** Every overlap, in offset order, each naming both tensors and their ranges; empty when disjoint. */
    static List<String> overlaps(List<Range> ranges) {
        List<Range> sorted = new ArrayList<>(ranges);
        sorted.sort(Comparator.comparingLong(Range::start).thenComparingLong(Range::end));
        List<String> out = new ArrayList<>();
        Range reach = null; // the range reaching furthest so far: a later start below its end overlaps it
        for (Range cur : sorted) {
            if (reach != null && cur.start() < reach.end()) {
                out.add("tensor '" + cur.name() + "' data [" + cur.start() + ", " + cur.end() + ") overlaps tensor '"
                        + reach.name() + "' data [" + reach.start() + ", " + reach.end()
                        + "): tensors must not share bytes (a corrupt type, shape or offset?)");
            }
            if (reach == null || cur.end() > reach.end()) reach = cur;
        }
        return out;
    }

    /** Throws naming the first two tensors (in offset order) whose data ranges overlap. */
    static void requireDisjoint(Path file, List<Range> ranges) {
        List<String> overlaps = overlaps(ranges);
        if (!overlaps.isEmpty()) throw new GgufFormatException(file + ": " + overlaps.getFirst());
    }
}
