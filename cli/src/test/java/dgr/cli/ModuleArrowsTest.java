package dgr.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The module arrows of docs/architecture.md, enforced on every build: it reads the arrows from that
 * page (one fact, one place), each module's POM and every Java source of the repository, and fails
 * on a broken one. Rules: a module's main code uses only the modules its arrows reach and declares
 * in its POM each one it uses (no leaning on a transitive dependency); a POM declares no module its
 * arrows do not reach; test code may use what the main arrows and the page's test-only arrows reach.
 * Uses are the {@code dgr.<module>} names in code (imports and qualified names); comments and
 * string literals are not code.
 *
 * <p>It lives in {@code cli}, the module at the top of the arrows; it reads sources, not classes.
 */
class ModuleArrowsTest {
    private static final Path ROOT = Path.of(System.getProperty("dgr.repo.root", ".."));
    private static final Pattern ARROW = Pattern.compile("^- `(\\w+)` (→|⇢) (.*)$");
    private static final Pattern NAME = Pattern.compile("`(\\w+)`");
    private static final Pattern MODULE = Pattern.compile("<module>(\\w+)</module>");
    private static final Pattern DEPENDENCY = Pattern.compile("<dependency>(.*?)</dependency>", Pattern.DOTALL);
    private static final Pattern DGR_ARTIFACT = Pattern.compile("<groupId>dev\\.dgr</groupId>\\s*<artifactId>dgr-(\\w+)</artifactId>");
    private static final Pattern USE = Pattern.compile("\\bdgr\\.([a-z0-9]+)\\b");

    /** Arrows as the page states them: module → the modules it points at (main code), and test-only ones. */
    record Arrows(Map<String, Set<String>> main, Map<String, Set<String>> testOnly) {
        /** Every module reachable from {@code from} along main arrows, after its own {@code first} step. */
        Set<String> reach(String from, boolean tests) {
            Set<String> seen = new TreeSet<>();
            ArrayDeque<String> todo = new ArrayDeque<>(main.getOrDefault(from, Set.of()));
            if (tests) todo.addAll(testOnly.getOrDefault(from, Set.of()));
            while (!todo.isEmpty()) {
                String m = todo.pop();
                if (seen.add(m)) todo.addAll(main.getOrDefault(m, Set.of()));
            }
            return seen;
        }
    }

    /** What one module is: its POM's dgr dependencies (compile and test scope) and the modules its code uses. */
    record Module(String name, Set<String> declared, Set<String> declaredForTests, Set<String> mainUses, Set<String> testUses) {}

    @Test
    void everyModuleUsesAndDeclaresOnlyWhatTheArchitecturePagesArrowsAllow() throws IOException {
        Arrows arrows = arrows(Files.readString(ROOT.resolve("docs/architecture.md")));
        List<String> names = modules(Files.readString(ROOT.resolve("pom.xml")));
        assertThat(names).as("modules of the root POM").contains("gguf", "engine", "runtime", "node", "tracker", "bench", "cli");
        assertThat(arrows.main().keySet()).as("every module has its arrows on docs/architecture.md").containsAll(names);
        List<String> broken = new ArrayList<>();
        for (String name : names) broken.addAll(check(arrows, read(name, names)));
        assertThat(broken).as("broken arrows").isEmpty();
    }

    @Test
    void aTrackerThatImportsTheNodeOrAnUndeclaredModuleIsCaught() {
        Arrows arrows = arrows("""
                - `cli` → `tracker`, `node`
                - `node` → `runtime`
                - `runtime` → nothing
                - `tracker` → nothing: over the wire only
                - `tracker` ⇢ `node` in its tests only
                """);
        Module tracker = new Module("tracker", Set.of(), Set.of("node"),
                uses("import dgr.node.NodeServer; // dgr.runtime in a comment\nString s = \"dgr.runtime.X\";"),
                uses("import dgr.node.NodeServer; import dgr.runtime.Scheduler;"));
        Module cli = new Module("cli", Set.of("tracker"), Set.of(), uses("var n = new dgr.node.NodeServer(); dgr.runtime.Scheduler s;"), Set.of());
        assertThat(check(arrows, tracker)).containsExactly("tracker: main code uses node, which its arrows do not reach");
        assertThat(check(arrows, cli)).containsExactly("cli: main code uses node without declaring dgr-node in cli/pom.xml",
                "cli: main code uses runtime without declaring dgr-runtime in cli/pom.xml");
    }

    static List<String> check(Arrows arrows, Module m) {
        List<String> broken = new ArrayList<>();
        Set<String> reach = arrows.reach(m.name(), false), testReach = arrows.reach(m.name(), true);
        for (String used : m.mainUses()) {
            if (used.equals(m.name())) continue;
            if (!reach.contains(used)) {
                broken.add(m.name() + ": main code uses " + used + ", which its arrows do not reach");
            } else if (!m.declared().contains(used)) {
                broken.add(m.name() + ": main code uses " + used + " without declaring dgr-" + used + " in " + m.name() + "/pom.xml");
            }
        }
        for (String d : m.declared()) {
            if (!reach.contains(d)) broken.add(m.name() + "/pom.xml declares dgr-" + d + ", which its arrows do not reach");
        }
        for (String d : m.declaredForTests()) {
            if (!testReach.contains(d)) broken.add(m.name() + "/pom.xml declares dgr-" + d + " for tests, which no arrow reaches");
        }
        for (String used : m.testUses()) {
            if (!used.equals(m.name()) && !testReach.contains(used)) {
                broken.add(m.name() + ": test code uses " + used + ", which neither its arrows nor its test-only arrows reach");
            }
        }
        return broken;
    }

    static Arrows arrows(String page) {
        Map<String, Set<String>> main = new TreeMap<>(), tests = new TreeMap<>();
        for (String line : page.lines().toList()) {
            Matcher a = ARROW.matcher(line.strip());
            if (!a.matches()) continue;
            Set<String> to = new TreeSet<>();
            // Names after a colon explain; only the named targets before it count.
            String targets = a.group(3).split(":", 2)[0];
            Matcher n = NAME.matcher(targets);
            while (n.find()) to.add(n.group(1));
            (a.group(2).equals("→") ? main : tests).computeIfAbsent(a.group(1), k -> new TreeSet<>()).addAll(to);
        }
        return new Arrows(main, tests);
    }

    static List<String> modules(String rootPom) {
        List<String> out = new ArrayList<>();
        Matcher m = MODULE.matcher(rootPom);
        while (m.find()) out.add(m.group(1));
        return out;
    }

    private static Module read(String name, List<String> modules) throws IOException {
        Set<String> declared = new TreeSet<>(), forTests = new TreeSet<>();
        Matcher d = DEPENDENCY.matcher(Files.readString(ROOT.resolve(name).resolve("pom.xml")));
        while (d.find()) {
            Matcher a = DGR_ARTIFACT.matcher(d.group(1));
            if (!a.find()) continue;
            (d.group(1).contains("<scope>test</scope>") ? forTests : declared).add(a.group(1));
        }
        Set<String> mainUses = sourceUses(ROOT.resolve(name).resolve("src/main/java"));
        Set<String> testUses = sourceUses(ROOT.resolve(name).resolve("src/test/java"));
        mainUses.retainAll(modules);
        testUses.retainAll(modules);
        return new Module(name, declared, forTests, mainUses, testUses);
    }

    private static Set<String> sourceUses(Path dir) throws IOException {
        Set<String> uses = new TreeSet<>();
        if (!Files.isDirectory(dir)) return uses;
        try (Stream<Path> files = Files.walk(dir)) {
            files.filter(p -> p.toString().endsWith(".java")).forEach(p -> {
                try {
                    uses.addAll(uses(Files.readString(p)));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
        return uses;
    }

    /** The {@code dgr.<name>} roots named in Java code, comments and string literals left out. */
    static Set<String> uses(String java) {
        Set<String> out = new TreeSet<>();
        Matcher m = USE.matcher(codeOnly(java));
        while (m.find()) out.add(m.group(1));
        return out;
    }

    /** The source with comments, string literals (text blocks included) and char literals blanked. */
    static String codeOnly(String s) {
        StringBuilder b = new StringBuilder(s.length());
        int i = 0, n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (s.startsWith("//", i)) {
                while (i < n && s.charAt(i) != '\n') i++;
            } else if (s.startsWith("/*", i)) {
                int e = s.indexOf("*/", i + 2);
                i = e < 0 ? n : e + 2;
            } else if (s.startsWith("\"\"\"", i)) {
                int e = s.indexOf("\"\"\"", i + 3);
                i = e < 0 ? n : e + 3;
            } else if (c == '"' || c == '\'') {
                i++;
                while (i < n && s.charAt(i) != c && s.charAt(i) != '\n') i += s.charAt(i) == '\\' ? 2 : 1;
                i++;
            } else {
                b.append(c);
                i++;
                continue;
            }
            b.append(' ');
        }
        return b.toString();
    }
}
