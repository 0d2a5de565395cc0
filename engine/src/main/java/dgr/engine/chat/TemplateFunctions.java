package dgr.engine.chat;

/** Functions chat templates call that Jinja itself does not define (Hugging Face adds them). */
public final class TemplateFunctions {
    private TemplateFunctions() {}

    /** A template's own {@code raise_exception(message)}. */
    static final class Raised extends RuntimeException {
        Raised(String message) { super(message, null, false, false); }
    }

    /** {@code raise_exception(message)}: public only because Jinjava calls it by reflection. */
    public static String raiseException(String message) { throw new Raised(message); }
}
