package dgr.node.api;

import dgr.engine.chat.ChatMessage;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A checked {@code POST /v1/chat/completions} body. {@code templateKwargs} are extra chat-template
 * variables ({@code chat_template_kwargs}, as vLLM and llama.cpp's server take them), empty when
 * none were sent.
 */
public record ChatRequest(GenerationParams params, List<ChatMessage> messages, Map<String, Object> templateKwargs) {
    public ChatRequest {
        messages = List.copyOf(messages);
        templateKwargs = Collections.unmodifiableMap(new LinkedHashMap<>(templateKwargs));
    }
}
