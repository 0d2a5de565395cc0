package dgr.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code dgr} command: construction of every part happens here and in the subcommands. */
@Command(name = "dgr", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "dgr: a distributed GGUF inference runtime for the JVM.",
        subcommands = {SynthCommand.class, InspectCommand.class, TokenizeCommand.class, LogitsCommand.class, RunCommand.class, ServeCommand.class, TrackerCommand.class, BenchCommand.class, CommandLine.HelpCommand.class})
public final class Main implements Runnable {
    public static final String VERSION = "0.1.0";

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Inherited by every command, so {@code dgr serve --log-level debug} works as well as {@code dgr --log-level debug serve}. */
    @CommandLine.Option(names = "--log-level", paramLabel = "LEVEL", scope = CommandLine.ScopeType.INHERIT,
            description = "log level: " + Logging.LEVELS + " (default: info; Helidon's own lines from warn)")
    void logLevel(String level) {
        Logging.level(level);
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The configured picocli command line; errors print a one-line message, not a stack trace. */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        standardOptions(cl);
        cl.setExecutionExceptionHandler((ex, cmd, parseResult) -> {
            cmd.getErr().println("dgr " + cmd.getCommandName() + ": " + Errors.describe(ex));
            if (System.getenv("DGR_DEBUG") != null) ex.printStackTrace(cmd.getErr());
            return 1;
        });
        return cl;
    }

    /** Every command answers -h/--help and -V/--version, whatever its required options. */
    private static void standardOptions(CommandLine cl) {
        for (CommandLine sub : cl.getSubcommands().values()) {
            CommandLine.Model.CommandSpec s = sub.getCommandSpec();
            if (s.userObject() instanceof CommandLine.HelpCommand) {
                // picocli's help command has its own -h/--help; it only lacks -V/--version.
                s.addOption(CommandLine.Model.OptionSpec.builder("-V", "--version").versionHelp(true)
                        .description("Print version information and exit.").build());
            } else if (!s.mixinStandardHelpOptions()) {
                s.mixinStandardHelpOptions(true);
            }
            s.versionProvider(new Version());
            standardOptions(sub);
        }
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"dgr " + VERSION + " (Java " + Runtime.version() + ")"};
        }
    }
}
