package dgr.engine.chat;

/** Functions chat templates call that Jinja itself does not define (Hugging Face adds them). */
public final class TemplateFunctions {
    private TemplateFunctions() {}

    /** The instant {@code strftime_now} formats, set by {@link ChatTemplate#render} around one rendering. */
    static final ThreadLocal<java.time.ZonedDateTime> NOW = new ThreadLocal<>();

    /**
     * {@code strftime_now(format)}, as transformers and llama.cpp's server define it: the current time
     * in Python's {@code strftime} notation (Llama 3.1's "Today Date: 26 Jul 2024", Mistral Small's
     * "%Y-%m-%d"). Public only because Jinjava calls it by reflection.
     */
    public static String strftimeNow(String format) {
        java.time.ZonedDateTime now = NOW.get();
        if (now == null) throw new IllegalStateException("strftime_now outside a rendering");
        return strftime(format, now);
    }

    /** Python's {@code strftime} directives that chat templates use, with the C locale's English names. */
    static String strftime(String format, java.time.ZonedDateTime t) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 == format.length()) {
                b.append(c);
                continue;
            }
            char d = format.charAt(++i);
            String pattern = switch (d) {
                case 'd' -> "dd"; case 'm' -> "MM"; case 'Y' -> "yyyy"; case 'y' -> "yy"; case 'b' -> "MMM";
                case 'B' -> "MMMM"; case 'a' -> "EEE"; case 'A' -> "EEEE"; case 'H' -> "HH"; case 'I' -> "hh";
                case 'M' -> "mm"; case 'S' -> "ss"; case 'p' -> "a"; case 'j' -> "DDD";
                default -> null;
            };
            if (d == '%') b.append('%');
            else if (pattern == null) throw new Raised("strftime_now: directive %" + d + " is not supported");
            else b.append(java.time.format.DateTimeFormatter.ofPattern(pattern, java.util.Locale.ENGLISH).format(t));
        }
        return b.toString();
    }

    /** A template's own {@code raise_exception(message)}. */
    static final class Raised extends RuntimeException {
        Raised(String message) { super(message, null, false, false); }
    }

    /** {@code raise_exception(message)}: public only because Jinjava calls it by reflection. */
    public static String raiseException(String message) { throw new Raised(message); }
}
