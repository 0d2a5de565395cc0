package dgr.cli;

import java.io.UncheckedIOException;

/** Turns an exception into the one line a user reads. */
final class Errors {
    private Errors() {}

    static String describe(Throwable ex) {
        Throwable t = ex;
        while ((t instanceof UncheckedIOException || t.getMessage() == null) && t.getCause() != null) t = t.getCause();
        String msg = t.getMessage();
        return msg == null ? t.getClass().getSimpleName() : msg;
    }
}
