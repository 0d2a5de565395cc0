package dgr.node.model;

import dgr.engine.chat.ChatMessage;
import dgr.engine.chat.ChatTemplate;
import dgr.engine.chat.ChatTemplateException;
import dgr.engine.tokenizer.Tokenizer;
import dgr.node.api.ApiError;
import java.util.List;

/**
 * Renders a conversation to prompt ids with the model's chat template ({@code tokenizer.chat_template},
 * or the engine's ChatML fallback when the file has none), then tokenizes it with special tokens
 * recognised. BOS is added only when the vocabulary wants one and the template did not write it.
 */
final class ChatFormatter {
    private final Tokenizer tokenizer;
    private final ChatTemplate template;
    /** Why the template cannot be used, when it failed to compile at load; chat requests then fail with it. */
    private final String unusable;
    private final String bosText;
    private final String eosText;

    private ChatFormatter(Tokenizer tokenizer, ChatTemplate template, String unusable) {
        this.tokenizer = tokenizer;
        this.template = template;
        this.unusable = unusable;
        this.bosText = tokenizer.hasBos() ? tokenizer.piece(tokenizer.bos()) : "";
        this.eosText = tokenizer.eos().isPresent() ? tokenizer.piece(tokenizer.eos().getAsInt()) : "";
    }

    static ChatFormatter of(Tokenizer tokenizer) {
        try {
            return new ChatFormatter(tokenizer, ChatTemplate.forModel(tokenizer.chatTemplate()), null);
        } catch (ChatTemplateException e) {
            // Completions still work; chat explains why it cannot.
            return new ChatFormatter(tokenizer, null, e.getMessage());
        }
    }

    /** The operator's template ({@code --chat-template}) in place of the model's: it must compile, or the node does not start. */
    static ChatFormatter of(Tokenizer tokenizer, String operatorTemplate) {
        try {
            return new ChatFormatter(tokenizer, ChatTemplate.of(operatorTemplate), null);
        } catch (ChatTemplateException e) {
            throw new IllegalArgumentException("--chat-template: " + e.getMessage(), e);
        }
    }

    int[] encode(List<ChatMessage> messages, java.util.Map<String, Object> templateKwargs) {
        if (template == null) {
            throw new ApiError(500, "server_error", "This model's chat template is not supported: " + unusable, null,
                    "chat_template_unsupported");
        }
        String text;
        try {
            text = template.render(messages, true, bosText, eosText, templateKwargs);
        } catch (ChatTemplateException e) {
            // Templates raise for conversations they do not accept (roles out of order, ...).
            throw ApiError.invalid("The model's chat template refused these messages: " + e.getMessage(), "messages");
        }
        boolean addBos = tokenizer.addBosByDefault() && !(bosText.length() > 0 && text.startsWith(bosText));
        return tokenizer.encode(text, addBos, true);
    }
}
