package dgr.node.model;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The models a node serves, by id. Empty until loading finished: {@code /health} answers 200 only
 * once {@link #ready()}.
 */
public final class ModelRegistry implements AutoCloseable {
    private volatile Map<String, ServedModel> models = Map.of();
    /** Set by {@link #publish}: a later stage of a route publishes no model and is ready all the same. */
    private volatile boolean published;

    /** Publishes the loaded models at once, so no request sees half of them. */
    public void publish(List<ServedModel> loaded) {
        Map<String, ServedModel> m = new LinkedHashMap<>();
        for (ServedModel s : loaded) {
            if (m.putIfAbsent(s.id(), s) != null) {
                throw new IllegalArgumentException("two models share the id '" + s.id() + "'; give one an alias");
            }
        }
        models = java.util.Collections.unmodifiableMap(m);
        published = true;
    }

    /** Loaded, and every head's route has answered (a head whose later stages are not up yet is not ready). */
    public boolean ready() { return published && waitingFor() == null; }

    /** Whether loading finished (published), ready or not. */
    public boolean loaded() { return published; }

    /** Null when every model is ready (or none is loaded yet); else what a head still waits for. */
    public String waitingFor() {
        for (ServedModel m : models.values()) {
            String w = m.waitingFor();
            if (w != null) return "model " + m.id() + " waits for " + w;
        }
        return null;
    }

    public Optional<ServedModel> find(String id) { return Optional.ofNullable(models.get(id)); }

    public Collection<ServedModel> all() { return models.values(); }

    @Override
    public void close() {
        List<ServedModel> all = new ArrayList<>(models.values());
        models = Map.of();
        for (ServedModel m : all) m.close();
    }
}
