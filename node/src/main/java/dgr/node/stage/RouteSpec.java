package dgr.node.stage;

import java.util.ArrayList;
import java.util.List;

/**
 * The hops after a head, in order, each with its alternates: {@code --route
 * HOST:P[|ALT_HOST:ALT_P...],HOST:P...}. A hop's first address is tried first; the others serve the
 * same span and take its sessions when it dies or hangs.
 */
public record RouteSpec(List<Hop> hops) {
    /** One hop: addresses ({@code host:port}) of stages serving the same span, preferred first. */
    public record Hop(List<String> addresses) {
        public Hop {
            addresses = List.copyOf(addresses);
            if (addresses.isEmpty()) throw new IllegalArgumentException("a hop needs at least one address");
        }
    }

    public RouteSpec {
        hops = List.copyOf(hops);
        if (hops.isEmpty()) throw new IllegalArgumentException("a route needs at least one hop after the head");
    }

    /** Parses the {@code --route} value; every fault is named with the part that has it. */
    public static RouteSpec parse(String value) {
        if (value == null || value.isBlank()) throw new IllegalArgumentException("--route is empty; expected HOST:PORT[|ALT_HOST:ALT_PORT...],HOST:PORT...");
        List<Hop> hops = new ArrayList<>();
        String[] parts = value.split(",", -1);
        for (int h = 0; h < parts.length; h++) {
            List<String> addresses = new ArrayList<>();
            for (String a : parts[h].split("\\|", -1)) addresses.add(address(a.trim(), h + 1));
            hops.add(new Hop(addresses));
        }
        return new RouteSpec(hops);
    }

    private static String address(String a, int hop) {
        int colon = a.lastIndexOf(':');
        if (colon <= 0 || colon == a.length() - 1) {
            throw new IllegalArgumentException("--route hop " + hop + ": '" + a + "' is not HOST:PORT");
        }
        int port;
        try {
            port = Integer.parseInt(a.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--route hop " + hop + ": port of '" + a + "' is not a number");
        }
        if (port < 1 || port > 65535) throw new IllegalArgumentException("--route hop " + hop + ": port " + port + " of '" + a + "' is outside 1..65535");
        return a;
    }

    /** The route's preferred addresses, one per hop. */
    public List<String> preferred() {
        return hops.stream().map(h -> h.addresses().getFirst()).toList();
    }
}
