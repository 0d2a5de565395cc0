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
        cl.setExecutionExceptionHandler((ex, cmd, parseResult) -> {
            cmd.getErr().println("dgr " + cmd.getCommandName() + ": " + Errors.describe(ex));
            if (System.getenv("DGR_DEBUG") != null) ex.printStackTrace(cmd.getErr());
            return 1;
        });
        return cl;
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"dgr " + VERSION + " (Java " + Runtime.version() + ")"};
        }
    }
}
