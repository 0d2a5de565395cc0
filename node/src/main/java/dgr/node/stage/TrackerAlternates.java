package dgr.node.stage;

import dgr.engine.Engine;
import dgr.node.tracker.StageDirectory;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A head's alternates from its tracker ({@code dgr serve --layers 0:A --route ... --tracker URL --node-token T}):
 * every second it asks the tracker which live later stages serve its model ({@link StageDirectory}), keeps
 * those that fit each hop ({@link AlternateMatch}) and hands them to the route ({@link HeadDownstream#supply}),
 * after the {@code |} alternates of {@code --route}. A stage the tracker stops offering (it left, or its
 * heartbeat lapsed) drops out at the next answer; while the tracker does not answer, the last answer stands
 * (the head's own deadlines still tell a dead stage).
 */
public final class TrackerAlternates implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(TrackerAlternates.class.getName());
    static final long EVERY_MILLIS = 1000;

    private final HeadDownstream head;
    private final StageDirectory directory;
    private final AlternateMatch match;
    private final String modelRecipeId;
    private final Set<String> logged = ConcurrentHashMap.newKeySet();
    private volatile String lastProblem;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
            r -> Thread.ofPlatform().daemon(true).name("dgr-tracker-alternates").unstarted(r));

    private TrackerAlternates(HeadDownstream head, Engine headEngine, StageDirectory directory) {
        this.head = head;
        this.directory = directory;
        this.modelRecipeId = Wire.modelRecipeId(headEngine);
        this.match = new AlternateMatch(modelRecipeId, headEngine.recipe().endLayer(), headEngine.recipe().nLayers(),
                headEngine.boundarySchema().id(), headEngine.id().toString());
    }

    /** Starts asking at once, then every second, until {@link #close}. */
    public static TrackerAlternates start(HeadDownstream head, Engine headEngine, StageDirectory directory) {
        TrackerAlternates t = new TrackerAlternates(head, headEngine, directory);
        t.timer.scheduleWithFixedDelay(t::refresh, 0, EVERY_MILLIS, TimeUnit.MILLISECONDS);
        return t;
    }

    /** One question to the tracker and its answer applied to every hop. */
    void refresh() {
        try {
            List<StageDirectory.OfferedStage> offered = directory.stages(modelRecipeId);
            List<List<String>> byHop = match.alternates(head.route(), offered, why -> {
                if (logged.add(why)) LOG.log(System.Logger.Level.WARNING, "tracker alternates: " + why);
            });
            for (int h = 0; h < byHop.size(); h++) head.supply(h, byHop.get(h));
            if (lastProblem != null) LOG.log(System.Logger.Level.INFO, "tracker " + directory.tracker() + " answers for stages again");
            lastProblem = null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException e) {
            String p = "could not ask tracker " + directory.tracker() + " for alternate stages: " + e.getMessage();
            if (!p.equals(lastProblem)) LOG.log(System.Logger.Level.WARNING, p + "; the last answer stands");
            lastProblem = p;
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        directory.close();
    }
}
