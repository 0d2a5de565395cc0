package dgr.bench.metrics;

import dgr.bench.target.RequestRecord;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Service per tenant over time, seen from the client side so it works for every target: a request's
 * prompt counts {@code promptWeight} units per token when its first token arrives, each generated
 * token {@code generatedWeight} units when it arrives (the scheduler's fairness units).
 */
public final class TenantService {
    /** Total service and share of one tenant. */
    public record Share(String tenant, int clients, long service, double share, Double fairShare) {}

    private final Map<String, long[]> times = new LinkedHashMap<>();
    private final Map<String, double[]> cumulative = new LinkedHashMap<>();
    private final Map<String, List<long[]>> backlog = new LinkedHashMap<>();
    private final double maxRequestService;

    public TenantService(List<RequestRecord> records, int promptWeight, int generatedWeight) {
        Map<String, List<double[]>> events = new TreeMap<>();
        double maxReq = 0;
        for (RequestRecord r : records) {
            List<double[]> ev = events.computeIfAbsent(r.tenant(), k -> new ArrayList<>());
            long[] tok = r.tokenNanos();
            int prompt = Math.max(0, r.promptTokens());
            ev.add(new double[] {tok.length > 0 ? tok[0] : r.endNanos(), (double) promptWeight * prompt});
            // HTTP chunks may carry several tokens: spread the request's tokens over its chunks.
            double perChunk = tok.length == 0 ? 0 : (double) generatedWeight * r.outputTokens() / tok.length;
            for (long t : tok) ev.add(new double[] {t, perChunk});
            maxReq = Math.max(maxReq, (double) promptWeight * prompt + (double) generatedWeight * r.outputTokens());
            backlog.computeIfAbsent(r.tenant(), k -> new ArrayList<>())
                    .add(new long[] {r.startNanos(), Math.max(r.startNanos(), r.servedFromNanos())});
        }
        this.maxRequestService = maxReq;
        events.forEach((tenant, ev) -> {
            ev.sort((a, b) -> Double.compare(a[0], b[0]));
            long[] t = new long[ev.size()];
            double[] c = new double[ev.size()];
            double sum = 0;
            for (int i = 0; i < t.length; i++) {
                t[i] = (long) ev.get(i)[0];
                sum += ev.get(i)[1];
                c[i] = sum;
            }
            times.put(tenant, t);
            cumulative.put(tenant, c);
        });
        backlog.replaceAll((k, v) -> merge(v));
    }

    public List<String> tenants() { return List.copyOf(times.keySet()); }

    /** Largest service of one request in the level (prompt and generated tokens, weighted). */
    public double maxRequestService() { return maxRequestService; }

    public double total(String tenant) {
        double[] c = cumulative.get(tenant);
        return c == null || c.length == 0 ? 0 : c[c.length - 1];
    }

    /** Service received by {@code tenant} up to and including time {@code t}. */
    double serviceAt(String tenant, long t) {
        long[] ts = times.get(tenant);
        int i = Arrays.binarySearch(ts, t);
        if (i < 0) i = -i - 2;
        else while (i + 1 < ts.length && ts[i + 1] == t) i++;
        return i < 0 ? 0 : cumulative.get(tenant)[i];
    }

    /**
     * Shares of total service, with the max-min fair share of a row limit when given: each tenant
     * can use at most as many rows as it has clients, and a fair scheduler splits {@code rowLimit}
     * rows by water-filling over those demands.
     */
    public List<Share> shares(Map<String, Integer> clientsByTenant, int rowLimit) {
        double all = times.keySet().stream().mapToDouble(this::total).sum();
        Map<String, Double> fair = rowLimit > 0 ? waterFill(clientsByTenant, rowLimit) : Map.of();
        List<Share> out = new ArrayList<>();
        for (String t : times.keySet()) {
            out.add(new Share(t, clientsByTenant.getOrDefault(t, 0), Math.round(total(t)), all == 0 ? 0 : total(t) / all,
                    fair.get(t)));
        }
        return out;
    }

    static Map<String, Double> waterFill(Map<String, Integer> demand, int capacity) {
        Map<String, Double> alloc = new LinkedHashMap<>();
        demand.keySet().forEach(k -> alloc.put(k, 0.0));
        double left = capacity;
        List<String> open = new ArrayList<>(demand.keySet());
        while (left > 1e-9 && !open.isEmpty()) {
            double each = left / open.size();
            List<String> still = new ArrayList<>();
            double used = 0;
            for (String k : open) {
                double want = demand.get(k) - alloc.get(k);
                double give = Math.min(want, each);
                alloc.put(k, alloc.get(k) + give);
                used += give;
                if (want > each) still.add(k);
            }
            left -= used;
            if (still.size() == open.size() && used == 0) break;
            open = still;
        }
        double sum = alloc.values().stream().mapToDouble(Double::doubleValue).sum();
        alloc.replaceAll((k, v) -> sum == 0 ? 0 : v / sum);
        return alloc;
    }

    /**
     * The largest difference in service two tenants received over an interval in which both were
     * backlogged (each had a request sent and not yet admitted), over all tenant pairs.
     */
    public double largestBackloggedGap() {
        List<String> ts = tenants();
        double gap = 0;
        for (int i = 0; i < ts.size(); i++) {
            for (int j = i + 1; j < ts.size(); j++) {
                for (long[] iv : intersect(backlog.getOrDefault(ts.get(i), List.of()), backlog.getOrDefault(ts.get(j), List.of()))) {
                    double a = serviceAt(ts.get(i), iv[1]) - serviceAt(ts.get(i), iv[0]);
                    double b = serviceAt(ts.get(j), iv[1]) - serviceAt(ts.get(j), iv[0]);
                    gap = Math.max(gap, Math.abs(a - b));
                }
            }
        }
        return gap;
    }

    private static List<long[]> merge(List<long[]> ivs) {
        List<long[]> sorted = new ArrayList<>(ivs.stream().filter(iv -> iv[1] > iv[0]).toList());
        sorted.sort((a, b) -> Long.compare(a[0], b[0]));
        List<long[]> out = new ArrayList<>();
        for (long[] iv : sorted) {
            if (!out.isEmpty() && iv[0] <= out.getLast()[1]) out.getLast()[1] = Math.max(out.getLast()[1], iv[1]);
            else out.add(new long[] {iv[0], iv[1]});
        }
        return out;
    }

    private static List<long[]> intersect(List<long[]> a, List<long[]> b) {
        List<long[]> out = new ArrayList<>();
        int i = 0, j = 0;
        while (i < a.size() && j < b.size()) {
            long lo = Math.max(a.get(i)[0], b.get(j)[0]);
            long hi = Math.min(a.get(i)[1], b.get(j)[1]);
            if (lo < hi) out.add(new long[] {lo, hi});
            if (a.get(i)[1] < b.get(j)[1]) i++;
            else j++;
        }
        return out;
    }
}
