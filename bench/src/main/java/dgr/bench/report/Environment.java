package dgr.bench.report;

import dgr.bench.saturation.Recommendation;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/**
 * Where and how a run happened: CPU model (/proc/cpuinfo), cores, memory, OS, JVM, what the kernels'
 * memory access had (aligned activations, weights on huge pages, software prefetch: each moves speed
 * by up to a third on some machines), dgr version and the exact command line.
 */
public record Environment(String startedAt, String hostname, String cpuModel, int cores, Long memoryBytes, String os,
                          String jvm, String jvmArgs, String kernelMemory, String dgrVersion, String commandLine) {

    public static Environment capture(String dgrVersion, String commandLine) {
        var rt = ManagementFactory.getRuntimeMXBean();
        return new Environment(Instant.now().toString(), readHostname(), readCpuModel(), Runtime.getRuntime().availableProcessors(),
                memTotal(), System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                        + System.getProperty("os.arch"),
                System.getProperty("java.vm.vendor") + " " + System.getProperty("java.vm.name") + " " + Runtime.version(),
                String.join(" ", rt.getInputArguments()), dgr.engine.Engines.kernelMemoryReport(), dgrVersion, commandLine);
    }

    public Recommendation.Machine machine() {
        return new Recommendation.Machine(hostname, cpuModel, cores, memoryBytes, os, jvm);
    }

    static String readHostname() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "unknown";
        }
    }

    static String readCpuModel() {
        for (String line : lines("/proc/cpuinfo")) {
            if (line.startsWith("model name")) return line.substring(line.indexOf(':') + 1).strip();
        }
        return System.getProperty("os.arch");
    }

    static Long memTotal() {
        Long kb = statusKb("/proc/meminfo", "MemTotal:");
        return kb == null ? null : kb * 1024;
    }

    /** This process's resident set size (VmRSS in /proc/self/status), or null off Linux. */
    public static Long processRssBytes() {
        Long kb = statusKb("/proc/self/status", "VmRSS:");
        return kb == null ? null : kb * 1024;
    }

    /** Used heap right after a full collection (the live set), in bytes. */
    public static long heapAfterGc() {
        System.gc();
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        return mem.getHeapMemoryUsage().getUsed();
    }

    private static Long statusKb(String file, String key) {
        for (String line : lines(file)) {
            if (line.startsWith(key)) {
                String[] parts = line.substring(key.length()).strip().split("\\s+");
                try {
                    return Long.parseLong(parts[0]);
                } catch (NumberFormatException e) {
                    return null;
                }
            }
        }
        return null;
    }

    private static List<String> lines(String file) {
        try {
            return Files.readAllLines(Path.of(file));
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }
}
