package dgr.engine.chat;

import java.util.Objects;

/** One turn of a conversation as a chat template sees it: {@code message['role']}, {@code message['content']}. */
public record ChatMessage(String role, String content) {
    public ChatMessage {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(content, "content");
    }

    public static ChatMessage system(String content) { return new ChatMessage("system", content); }

    public static ChatMessage user(String content) { return new ChatMessage("user", content); }

    public static ChatMessage assistant(String content) { return new ChatMessage("assistant", content); }
}
