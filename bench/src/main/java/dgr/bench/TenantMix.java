package dgr.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * Which tenant each virtual client sends for. {@code --tenants 1:1,6:1} reads as groups of
 * {@code CLIENTS:TENANTS}: one tenant with 1 client and one tenant with 6 clients. Tenants are named
 * {@code t0, t1, ...} in group order. Without a mix every client is its own tenant (independent users).
 *
 * @param groups (clients per tenant, number of such tenants) pairs, or empty for one tenant per client
 */
public record TenantMix(List<Group> groups) {
    public record Group(int clientsPerTenant, int tenants) {
        public Group {
            if (clientsPerTenant < 1 || tenants < 1) throw new IllegalArgumentException("tenant groups need C:N with C, N >= 1");
        }
    }

    public TenantMix { groups = List.copyOf(groups); }

    public static final TenantMix ONE_PER_CLIENT = new TenantMix(List.of());

    public static TenantMix parse(String s) {
        List<Group> out = new ArrayList<>();
        for (String part : s.split(",")) {
            if (part.isBlank()) continue;
            String[] cn = part.strip().split(":");
            try {
                out.add(new Group(Integer.parseInt(cn[0]), cn.length > 1 ? Integer.parseInt(cn[1]) : 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--tenants expects CLIENTS:TENANTS[,...], got '" + s + "'");
            }
        }
        if (out.isEmpty()) throw new IllegalArgumentException("--tenants is empty");
        return new TenantMix(out);
    }

    public boolean oneTenantPerClient() { return groups.isEmpty(); }

    /** Total clients of the mix (fixes the level's concurrency), or -1 when clients follow the sweep. */
    public int clients() {
        return groups.isEmpty() ? -1 : groups.stream().mapToInt(g -> g.clientsPerTenant() * g.tenants()).sum();
    }

    /** The tenant of each of {@code concurrency} clients. */
    public List<String> assign(int concurrency) {
        List<String> out = new ArrayList<>(concurrency);
        if (groups.isEmpty()) {
            for (int c = 0; c < concurrency; c++) out.add("client-" + c);
            return out;
        }
        int tenant = 0;
        for (Group g : groups) {
            for (int t = 0; t < g.tenants(); t++, tenant++) {
                for (int c = 0; c < g.clientsPerTenant(); c++) out.add("t" + tenant);
            }
        }
        return out;
    }

    @Override
    public String toString() {
        if (groups.isEmpty()) return "one tenant per client";
        return String.join(",", groups.stream().map(g -> g.clientsPerTenant() + ":" + g.tenants()).toList());
    }
}
