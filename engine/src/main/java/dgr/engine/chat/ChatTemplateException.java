package dgr.engine.chat;

/**
 * A chat template that cannot be rendered: it uses a Jinja feature Jinjava lacks, has a syntax
 * error, or raised an error itself (e.g. "Conversation roles must alternate") for these messages.
 */
public final class ChatTemplateException extends RuntimeException {
    public ChatTemplateException(String message) { super(message); }
}
