package dgr.cli;

import io.helidon.logging.common.spi.LoggingProvider;

/**
 * Tells Helidon that logging is already set up: without a provider on the class path Helidon prints
 * "There is no Helidon logging implementation on classpath" to standard error at start. Logback reads
 * {@code logback.xml} itself, so there is nothing left for Helidon to configure.
 */
public final class HelidonLogging implements LoggingProvider {
    @Override
    public void initialization() {
        // Logback configured itself from logback.xml when the first logger was made.
    }

    @Override
    public void runTime() {
        // Nothing changes between build time and run time: this is not a native image.
    }
}
