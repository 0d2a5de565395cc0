package dgr.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one grammar of every duration flag ({@code --duration}, {@code --request-timeout},
 * {@code --queue-wait}, …): a non-negative number with a unit, {@code ms}, {@code s}, {@code m} or
 * {@code h} ({@code 500ms}, {@code 1.5s}, {@code 2m}, {@code 1h}); a bare number is seconds; or
 * ISO-8601 ({@code PT30S}). Fractions round to the millisecond.
 */
final class DurationFlag {
    private static final Pattern VALUE = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)?");

    private DurationFlag() {}

    /** {@code value} of {@code flag} as a duration; the error names the flag, the value and the grammar. */
    static Duration parse(String flag, String value) {
        String t = value.strip();
        Matcher m = VALUE.matcher(t);
        if (m.matches()) {
            String unit = m.group(2) == null ? "s" : m.group(2);
            long perUnit = switch (unit) {
                case "ms" -> 1L;
                case "s" -> 1_000L;
                case "m" -> 60_000L;
                default -> 3_600_000L;
            };
            return Duration.ofMillis(Math.round(Double.parseDouble(m.group(1)) * perUnit));
        }
        try {
            return Duration.parse(t);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(flag + ": '" + value + "' is not a duration (e.g. 500ms, 30s, 1.5m, 1h, PT30S)");
        }
    }
}
