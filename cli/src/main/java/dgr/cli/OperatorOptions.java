package dgr.cli;

import dgr.engine.chat.ChatTemplate;
import dgr.runtime.SchedulerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** How {@code dgr serve}'s operator flags (llama-server's names) turn into node settings, with precise errors. */
final class OperatorOptions {
    private OperatorOptions() {}

    /** {@code -b N}: the prefill token budget, which must leave every running session its decode row. */
    static SchedulerConfig batchTokens(SchedulerConfig sc, int tokens, Integer parallel) {
        int rows = parallel != null ? parallel : sc.maxBatchSessions();
        if (tokens < rows) {
            throw new IllegalArgumentException("--batch-tokens " + tokens + " is below --parallel " + rows
                    + ": every running session needs one token position in each decode batch");
        }
        return sc.withBatch(sc.maxBatchSessions(), tokens);
    }

    /** {@code --chat-template NAME|JINJA} or {@code --chat-template-file FILE}: the Jinja source, or null for the models' own. */
    static String chatTemplate(String template, Path file) {
        if (template != null && file != null) {
            throw new IllegalArgumentException("give --chat-template or --chat-template-file, not both");
        }
        if (file != null) {
            try {
                return Files.readString(file);
            } catch (IOException e) {
                throw new IllegalArgumentException("--chat-template-file: cannot read " + file + ": " + e.getMessage(), e);
            }
        }
        if (template == null) return null;
        if (template.contains("{{") || template.contains("{%")) return template;
        return switch (template.strip().toLowerCase(Locale.ROOT)) {
            case "chatml" -> ChatTemplate.CHATML;
            default -> throw new IllegalArgumentException("--chat-template: '" + template + "' is neither a built-in"
                    + " template (chatml) nor Jinja text; for a file use --chat-template-file");
        };
    }
}
