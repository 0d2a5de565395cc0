package dgr.runtime;

/**
 * A head's route lost a stage that no alternate replaces: the sessions on it end with
 * {@link FinishReason#UNAVAILABLE} and this message, which names the stage and what happened to it.
 */
public final class RouteUnavailableException extends RuntimeException {
    public RouteUnavailableException(String message) {
        super(message);
    }
}
