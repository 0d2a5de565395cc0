package dgr.cli;

import dgr.tracker.ledger.LedgerDatabase;
import dgr.tracker.ledger.LedgerReports;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code dgr tracker usage}: settled usage per tenant and model (what {@code GET /v1/usage} answers), or
 * with {@code --export csv|json} every request's ledger row.
 */
@Command(name = "usage", mixinStandardHelpOptions = true,
        description = "Print settled usage per tenant and model from the ledger (requests, prompt and completion tokens),"
                + " or export every request's row with --export csv|json.")
final class TrackerUsageCommand implements Callable<Integer> {
    @Option(names = "--tenant", description = "only this tenant (default: every tenant with settled requests)")
    String tenant;

    @Option(names = "--from", description = "from this arrival time, inclusive: 2026-12-01T10:00:00Z, 2026-12-01 or epoch seconds")
    String from;

    @Option(names = "--to", description = "to this arrival time, exclusive (same forms as --from)")
    String to;

    @Option(names = "--json", description = "print each tenant's usage as the JSON GET /v1/usage answers, one per line")
    boolean json;

    @Option(names = "--export", description = "export every request's row instead: csv (header line first) or json (one object per line)")
    String export;

    @Option(names = {"-o", "--output"}, description = "write the export to this file (default: stdout)")
    Path output;

    @Mixin
    LedgerOptions ledger;

    @Override
    public Integer call() throws Exception {
        Instant f = LedgerReports.parseBound("--from", from);
        Instant t = LedgerReports.parseBound("--to", to);
        LedgerReports.Format format = null;
        if (export != null) {
            format = switch (export.toLowerCase(java.util.Locale.ROOT)) {
                case "csv" -> LedgerReports.Format.CSV;
                case "json" -> LedgerReports.Format.JSON;
                default -> throw new IllegalArgumentException("--export must be csv or json, got '" + export + "'");
            };
        }
        try (LedgerDatabase db = ledger.open(System.err, "dgr tracker usage")) {
            LedgerReports reports = new LedgerReports(db);
            if (format != null) {
                try (Writer w = output == null ? new OutputStreamWriter(System.out, StandardCharsets.UTF_8)
                        : Files.newBufferedWriter(output, StandardCharsets.UTF_8)) {
                    int rows = reports.export(w, format, tenant, f, t);
                    System.err.println("dgr tracker usage: exported " + rows + " rows"
                            + (output == null ? "" : " to " + output));
                }
                return 0;
            }
            List<String> tenants = tenant != null ? List.of(tenant) : reports.tenants(f, t);
            if (!json) System.out.printf("%-20s %-28s %9s %14s %17s%n", "TENANT", "MODEL", "REQUESTS", "PROMPT_TOKENS",
                    "COMPLETION_TOKENS");
            for (String name : tenants) {
                LedgerReports.Usage u = reports.usage(name, f, t);
                if (json) {
                    System.out.println(u.toJson());
                    continue;
                }
                u.models().forEach((model, m) -> System.out.printf("%-20s %-28s %9d %14d %17d%n", name, model,
                        m.requests(), m.promptTokens(), m.completionTokens()));
                System.out.printf("%-20s %-28s %9d %14d %17d%n", name, "(all)", u.total().requests(),
                        u.total().promptTokens(), u.total().completionTokens());
            }
        }
        return 0;
    }
}
