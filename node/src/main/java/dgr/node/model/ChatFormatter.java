package dgr.node.model;

import dgr.engine.tokenizer.Tokenizer;
import dgr.node.api.ChatMessage;
import java.util.List;

/**
 * Renders a conversation to prompt ids with the model's chat template.
 */
final class ChatFormatter {
    private final Tokenizer tokenizer;

    private ChatFormatter(Tokenizer tokenizer) {
        this.tokenizer = tokenizer;
    }

    static ChatFormatter of(Tokenizer tokenizer) {
        return new ChatFormatter(tokenizer);
    }

    int[] encode(List<ChatMessage> messages) {
        // Models without tokenizer.chat_template get ChatML, llama.cpp's fallback.
        StringBuilder sb = new StringBuilder();
        for (ChatMessage m : messages) {
            sb.append("<|im_start|>").append(m.role()).append('\n').append(m.content()).append("<|im_end|>\n");
        }
        sb.append("<|im_start|>assistant\n");
        return tokenizer.encode(sb.toString(), tokenizer.addBosByDefault(), true);
    }
}
