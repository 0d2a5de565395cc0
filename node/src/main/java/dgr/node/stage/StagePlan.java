package dgr.node.stage;

import java.time.Duration;

/**
 * A node's place in a route, from {@code serve}'s flags: a head ({@code --layers 0:A --route ...})
 * or a later stage ({@code --layers A:B --stage-port P}); both with the cluster token.
 *
 * @param firstLayer  first layer of this node's span
 * @param endLayer    end of the span (exclusive)
 * @param route       the hops after the head, or null on a later stage
 * @param stagePort   the gRPC port of a later stage (0 picks a free one); unused by a head
 * @param token       the cluster's shared token
 * @param clock       reply deadlines downstream
 * @param orphanGrace how long a later stage keeps a session whose upstream stream broke
 * @param routeDepth  a head's micro-batches on the route at once; 0: one per stage
 * @param advertise   a later stage's address as heads dial it ({@code --stage-advertise HOST[:PORT]}), or null:
 *                    the bound host and port
 */
public record StagePlan(int firstLayer, int endLayer, RouteSpec route, int stagePort, ClusterToken token, StepClock clock,
                        Duration orphanGrace, int routeDepth, String advertise) {

    public boolean isHead() { return route != null; }

    /**
     * From the flags; every wrong combination is named. {@code layers} is {@code A:B}.
     *
     * @param stagePort null when {@code --stage-port} was not given
     */
    public static StagePlan of(String layers, String route, Integer stagePort, String clusterToken, Duration orphanGrace,
                               Duration replyFloor) {
        return of(layers, route, stagePort, clusterToken, orphanGrace, replyFloor, null);
    }

    /** As above, with {@code --route-depth} (null when not given). */
    public static StagePlan of(String layers, String route, Integer stagePort, String clusterToken, Duration orphanGrace,
                               Duration replyFloor, Integer routeDepth) {
        int colon = layers.indexOf(':');
        int a, b;
        try {
            if (colon < 0) throw new NumberFormatException();
            a = Integer.parseInt(layers.substring(0, colon).trim());
            b = Integer.parseInt(layers.substring(colon + 1).trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--layers '" + layers + "' is not A:B (first layer : end layer, e.g. 0:8)");
        }
        if (a < 0 || b <= a) throw new IllegalArgumentException("--layers " + layers + ": need 0 <= A < B");
        ClusterToken token = ClusterToken.of(clusterToken);
        StepClock d = StepClock.defaults();
        if (replyFloor.isNegative() || replyFloor.isZero()) throw new IllegalArgumentException("--stage-reply-floor must be positive");
        StepClock clock = new StepClock(replyFloor.toNanos(), d.factor(), d.initialNanosPerRow(), d.firstReplyNanos());
        if (a == 0) {
            if (route == null) throw new IllegalArgumentException("--layers 0:" + b + " makes this node a head: give --route HOST:PORT,... for the stages after layer " + b);
            if (stagePort != null) throw new IllegalArgumentException("--stage-port is for stages after the head; a head (--layers 0:" + b + ") sends with --route");
            if (routeDepth != null && routeDepth < 1) throw new IllegalArgumentException("--route-depth must be at least 1, got " + routeDepth);
            return new StagePlan(a, b, RouteSpec.parse(route), 0, token, clock, orphanGrace, routeDepth == null ? 0 : routeDepth, null);
        }
        if (route != null) throw new IllegalArgumentException("--route belongs to the head (--layers 0:A); this stage (--layers " + layers + ") learns its route from the head");
        if (routeDepth != null) throw new IllegalArgumentException("--route-depth belongs to the head (--layers 0:A), which keeps the micro-batches on the route");
        if (stagePort == null) throw new IllegalArgumentException("--layers " + layers + " is a later stage: give --stage-port P to listen for boundary rows");
        if (stagePort < 0 || stagePort > 65535) throw new IllegalArgumentException("--stage-port must be in [0, 65535], got " + stagePort);
        return new StagePlan(a, b, null, stagePort, token, clock, orphanGrace, 0, null);
    }

    /**
     * This plan with a later stage's advertised address ({@code --stage-advertise}): {@code HOST:PORT}, or
     * {@code HOST} to keep the bound port. What a tracker offers heads as this stage's address.
     */
    public StagePlan withAdvertise(String address) {
        if (isHead()) throw new IllegalArgumentException("--stage-advertise is a later stage's address; a head (--layers 0:" + endLayer + ") is dialled by no stage");
        String a = address == null ? "" : address.trim();
        if (a.isEmpty() || a.length() > 255 || a.contains("/") || a.contains(" ")) {
            throw new IllegalArgumentException("--stage-advertise '" + address + "' is not HOST or HOST:PORT");
        }
        int colon = a.lastIndexOf(':');
        if (colon >= 0 && !(a.startsWith("[") && a.endsWith("]"))) {
            String port = a.substring(colon + 1);
            int p;
            try {
                p = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--stage-advertise '" + address + "': port '" + port + "' is not a number");
            }
            if (colon == 0 || p < 1 || p > 65535) throw new IllegalArgumentException("--stage-advertise '" + address + "' is not HOST or HOST:PORT (port in 1..65535)");
        }
        return new StagePlan(firstLayer, endLayer, route, stagePort, token, clock, orphanGrace, routeDepth, a);
    }

    /**
     * Where heads dial this later stage: the advertised address (its port added when only a host was given),
     * else the bound host and port; null when that host is a wildcard (0.0.0.0, ::), which names no machine.
     */
    /** A bind address that names every interface, so no machine another process could dial. */
    public static boolean isWildcard(String host) {
        return host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
    }

    public String dialAddress(String bindHost, int boundPort) {
        if (advertise != null) {
            boolean hasPort = advertise.startsWith("[") ? advertise.contains("]:") : advertise.contains(":");
            return hasPort ? advertise : advertise + ":" + boundPort;
        }
        if (isWildcard(bindHost)) return null;
        return (bindHost.contains(":") && !bindHost.startsWith("[") ? "[" + bindHost + "]" : bindHost) + ":" + boundPort;
    }
}
