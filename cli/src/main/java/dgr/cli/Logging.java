package dgr.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import java.util.Locale;
import org.slf4j.LoggerFactory;

/**
 * The CLI's log level. dgr and Helidon log through {@link System.Logger}, which
 * slf4j-jdk-platform-logging sends to SLF4J and Logback (configured by {@code logback.xml}: one line
 * per event on standard error, INFO for dgr, WARN for Helidon).
 */
final class Logging {
    static final String LEVELS = "error, warn, info, debug, trace or off";

    private Logging() {}

    /** Sets the root level; Helidon stays one step quieter at the default INFO and follows every other level. */
    static void level(String name) {
        Level level = parse(name);
        root().setLevel(level);
        ((Logger) LoggerFactory.getLogger("io.helidon")).setLevel(level == Level.INFO ? Level.WARN : level);
    }

    static Level parse(String name) {
        return switch (name.strip().toLowerCase(Locale.ROOT)) {
            case "error" -> Level.ERROR;
            case "warn", "warning" -> Level.WARN;
            case "info" -> Level.INFO;
            case "debug" -> Level.DEBUG;
            case "trace" -> Level.TRACE;
            case "off" -> Level.OFF;
            default -> throw new picocli.CommandLine.TypeConversionException(
                    "--log-level: '" + name + "' is not a level (" + LEVELS + ")");
        };
    }

    private static Logger root() {
        return (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    }
}
