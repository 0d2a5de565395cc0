package dgr.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/** Issue 27, item 2: -h/--help and -V/--version work on every command, required options or not. */
class EveryCommandAnswersHelpAndVersionTest {
    record Outcome(int exit, String out, String err) {}

    static Outcome execute(String... args) {
        CommandLine cl = Main.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        return new Outcome(exit, out.toString(), err.toString());
    }

    /** Every command path: "" for dgr itself, then each subcommand as the command line registers them. */
    static Stream<String> commands() {
        return Stream.concat(Stream.of(""), Main.commandLine().getSubcommands().keySet().stream());
    }

    static String[] args(String command, String flag) {
        return command.isEmpty() ? new String[] {flag} : new String[] {command, flag};
    }

    @ParameterizedTest(name = "dgr {0} -h / --help")
    @MethodSource("commands")
    void helpExitsZeroWithUsageOnStandardOutput(String command) {
        for (String flag : List.of("-h", "--help")) {
            Outcome o = execute(args(command, flag));
            assertThat(o.exit()).as("exit of dgr %s %s; stderr: %s", command, flag, o.err()).isZero();
            // picocli's help command puts its one-line description above its usage.
            assertThat(o.out()).as("dgr %s %s", command, flag).contains(("Usage: dgr " + command).strip() + " [-h");
            assertThat(o.err()).isEmpty();
        }
    }

    @ParameterizedTest(name = "dgr {0} -V / --version")
    @MethodSource("commands")
    void versionExitsZeroAndNamesTheVersion(String command) {
        for (String flag : List.of("-V", "--version")) {
            Outcome o = execute(args(command, flag));
            assertThat(o.exit()).as("exit of dgr %s %s; stderr: %s", command, flag, o.err()).isZero();
            assertThat(o.out()).as("dgr %s %s", command, flag).startsWith("dgr " + Main.VERSION + " ");
        }
    }

    @org.junit.jupiter.api.Test
    void anUnknownLogLevelIsRefusedByName() {
        Outcome o = execute("--log-level", "loud", "--version");
        assertThat(o.exit()).isEqualTo(2);
        assertThat(o.err()).contains("'loud' is not a level");
    }
}
