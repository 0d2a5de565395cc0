import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;

/**
 * Two builds of the engine in one JVM, one class loader each, decoding token by token in a random
 * order per step: whole-model A/B comparisons that the machine's changing speed cannot skew (both
 * builds see the same moments). See README.md. Args: MODEL THREADS BATCH STEPS DIR_A DIR_B HELPERS.
 */
public class TwoBuilds {
    public static void main(String[] a) throws Exception {
        String model = a[0]; int threads = Integer.parseInt(a[1]), b = Integer.parseInt(a[2]), steps = Integer.parseInt(a[3]);
        String[] dirs = {a[4], a[5]};
        Path helpers = Path.of(a[6]);
        Object[] st = new Object[2]; java.lang.reflect.Method[] step = new java.lang.reflect.Method[2];
        for (int k = 0; k < 2; k++) {
            URL[] urls = {helpers.resolve("b" + k).toUri().toURL(), Path.of(dirs[k], "engine/target/classes").toUri().toURL(),
                    Path.of(dirs[k], "gguf/target/classes").toUri().toURL()};
            URLClassLoader cl = new URLClassLoader("build" + k, urls, ClassLoader.getPlatformClassLoader());
            Class<?> c = cl.loadClass("dgr.engine.llama.TokStep");
            st[k] = c.getConstructor(String.class, int.class, int.class).newInstance(model, threads, b);
            step[k] = c.getMethod("step");
        }
        long[][] t = new long[2][steps];
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(1);
        for (int i = 0; i < steps; i++) {
            int first = rnd.nextInt(2);
            for (int j = 0; j < 2; j++) { int k = first ^ j; t[k][i] = (Long) step[k].invoke(st[k]); }
        }
        for (int k = 0; k < 2; k++) {
            long[] x = t[k].clone(); java.util.Arrays.sort(x);
            double mean = java.util.Arrays.stream(x).average().orElse(0);
            System.out.printf("%s: median %.2f tok/s, fast quartile %.2f, mean %.2f%n", dirs[k], b * 1e9 / x[steps / 2], b * 1e9 / x[steps / 4], b * 1e9 / mean);
        }
        int wins = 0; for (int i = 0; i < steps; i++) if (t[1][i] < t[0][i]) wins++;
        System.out.printf("%s faster in %d of %d token pairs%n", dirs[1], wins, steps);
    }
}
