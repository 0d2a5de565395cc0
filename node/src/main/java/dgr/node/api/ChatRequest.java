package dgr.node.api;

import java.util.List;

/** A checked {@code POST /v1/chat/completions} body. */
public record ChatRequest(GenerationParams params, List<ChatMessage> messages) {
    public ChatRequest {
        messages = List.copyOf(messages);
    }
}
