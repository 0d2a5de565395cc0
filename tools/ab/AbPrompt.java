import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.lang.reflect.Method;

/** Two builds in one JVM, alternating: prompts of 128, 1024, 4096 tokens and decode steps at depth. Args: MODEL DIR_A DIR_B HELPERS DEPTH REPS128 REPS1024 REPS4096 STEPS */
public class AbPrompt {
    public static void main(String[] a) throws Exception {
        String model = a[0]; String[] dirs = {a[1], a[2]}; Path helpers = Path.of(a[3]);
        int depth = Integer.parseInt(a[4]);
        int[] lens = {128, 1024, 4096}, reps = {Integer.parseInt(a[5]), Integer.parseInt(a[6]), Integer.parseInt(a[7])};
        int steps = Integer.parseInt(a[8]);
        Object[] st = new Object[2]; Method[] pre = new Method[2], deep = new Method[2];
        for (int k = 0; k < 2; k++) {
            URL[] urls = {helpers.resolve("b" + k).toUri().toURL(), Path.of(dirs[k], "engine/target/classes").toUri().toURL(), Path.of(dirs[k], "gguf/target/classes").toUri().toURL()};
            URLClassLoader cl = new URLClassLoader("build" + k, urls, ClassLoader.getPlatformClassLoader());
            Class<?> c = cl.loadClass("dgr.engine.llama.PromptStep");
            st[k] = c.getConstructor(String.class, int.class, int.class).newInstance(model, 2, depth);
            pre[k] = c.getMethod("prefill", int.class); deep[k] = c.getMethod("deepStep");
            System.out.println(dirs[k] + " loaded; resident now: " + c.getMethod("resident").invoke(st[k]));
        }
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(1);
        for (int L = 0; L < 3; L++) {
            int n = reps[L]; if (n == 0) continue;
            long[][] t = new long[2][n];
            for (int i = 0; i < n; i++) { int f = rnd.nextInt(2); for (int j = 0; j < 2; j++) { int k = f ^ j; t[k][i] = (Long) pre[k].invoke(st[k], lens[L]); } }
            report("prompt " + lens[L], t, lens[L], dirs);
        }
        if (steps > 0) {
            long[][] t = new long[2][steps];
            for (int i = 0; i < steps; i++) { int f = rnd.nextInt(2); for (int j = 0; j < 2; j++) { int k = f ^ j; t[k][i] = (Long) deep[k].invoke(st[k]); } }
            report("decode B=1 at depth " + depth, t, 1, dirs);
        }
        System.out.println("load " + java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
    static void report(String what, long[][] t, int tokens, String[] dirs) {
        int wins = 0; for (int i = 0; i < t[0].length; i++) if (t[1][i] < t[0][i]) wins++;
        StringBuilder b = new StringBuilder(what + ":");
        for (int k = 0; k < 2; k++) { long[] x = t[k].clone(); java.util.Arrays.sort(x); b.append(String.format("  %s median %.1f tok/s (best %.1f)", k == 0 ? "A" : "B", tokens * 1e9 / x[x.length / 2], tokens * 1e9 / x[0])); }
        System.out.println(b + String.format("  B faster in %d of %d", wins, t[0].length));
    }
}
