package dgr.tracker.routing;

import java.util.Locale;

/**
 * How the router picks among eligible nodes (the {@code --routing} flag), so the benchmark can
 * compare policies on the same cluster.
 */
public enum RoutingPolicy {
    /** Most headroom: recommended_max_concurrency − running; ties by power of two choices. */
    CAPACITY,
    /** Fewest running sessions, blind to what each node can sustain (what most routers do). */
    LEAST_LOAD,
    /** Each eligible node in turn, blind to load. */
    ROUND_ROBIN;

    public static final String FLAG_VALUES = "capacity, least-load, round-robin";

    public static RoutingPolicy ofFlag(String value) {
        return switch (value) {
            case "capacity" -> CAPACITY;
            case "least-load" -> LEAST_LOAD;
            case "round-robin" -> ROUND_ROBIN;
            default -> throw new IllegalArgumentException("--routing: '" + value + "' is not one of " + FLAG_VALUES);
        };
    }

    public String flag() { return name().toLowerCase(Locale.ROOT).replace('_', '-'); }
}
