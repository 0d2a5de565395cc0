package dgr.cli;

import dgr.tracker.ledger.ApiKeyStore;
import dgr.tracker.ledger.LedgerDatabase;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code dgr tracker keys add|list|revoke}: the API keys clients present to the tracker. */
@Command(name = "keys", mixinStandardHelpOptions = true,
        description = "Manage the tracker's API keys. Once any key exists, the tracker refuses requests without a"
                + " valid one (401). Keys are stored hashed; a revoked key is refused at once, by every tracker on the database.",
        subcommands = {TrackerKeysCommand.Add.class, TrackerKeysCommand.ListKeys.class, TrackerKeysCommand.Revoke.class})
final class TrackerKeysCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() { spec.commandLine().usage(System.out); }

    @Command(name = "add", mixinStandardHelpOptions = true,
            description = "Create a key for a tenant; prints the key alone on the last line of stdout (it is shown only once).")
    static final class Add implements Callable<Integer> {
        @Option(names = "--tenant", required = true, description = "tenant the key's requests are charged to")
        String tenant;

        @Option(names = "--budget-tokens", description = "tokens (prompt + completion) the key may spend in all (default: unlimited)")
        Long budgetTokens;

        @Mixin
        LedgerOptions ledger;

        @Override
        public Integer call() {
            try (LedgerDatabase db = ledger.open(System.err, "dgr tracker keys")) {
                ApiKeyStore.NewKey k = new ApiKeyStore(db, Clock.systemUTC()).add(tenant, budgetTokens);
                System.out.println("key id " + k.keyId() + ", tenant " + k.tenant() + ", budget "
                        + (k.budgetTokens() == null ? "unlimited" : k.budgetTokens() + " tokens"));
                System.out.println(k.key());
            }
            return 0;
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List keys: id, tenant, budget, spent, held, state (never the key).")
    static final class ListKeys implements Callable<Integer> {
        @Mixin
        LedgerOptions ledger;

        @Override
        public Integer call() {
            try (LedgerDatabase db = ledger.open(System.err, "dgr tracker keys")) {
                List<ApiKeyStore.KeyInfo> keys = new ApiKeyStore(db, Clock.systemUTC()).list();
                System.out.printf("%-14s %-20s %14s %14s %10s %-8s %s%n", "KEY ID", "TENANT", "BUDGET", "SPENT", "HELD",
                        "STATE", "CREATED");
                for (ApiKeyStore.KeyInfo k : keys) {
                    System.out.printf("%-14s %-20s %14s %14d %10d %-8s %s%n", k.keyId(), k.tenant(),
                            k.budgetTokens() == null ? "unlimited" : k.budgetTokens().toString(), k.spentTokens(),
                            k.reservedTokens(), k.isRevoked() ? "revoked" : "live", k.created());
                }
            }
            return 0;
        }
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true, description = "Revoke a key (by its id or the key itself); refused from now on.")
    static final class Revoke implements Callable<Integer> {
        @Parameters(paramLabel = "KEY_ID", description = "the key's id (from 'keys list') or the key")
        String key;

        @Mixin
        LedgerOptions ledger;

        @Override
        public Integer call() {
            try (LedgerDatabase db = ledger.open(System.err, "dgr tracker keys")) {
                boolean now = new ApiKeyStore(db, Clock.systemUTC()).revoke(key);
                System.out.println(now ? "revoked" : "already revoked");
            }
            return 0;
        }
    }
}
