package dgr.engine.chat;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Renders a model's {@code tokenizer.chat_template} (Jinja, as Hugging Face writes it) into the
 * prompt text, with Jinjava configured like transformers' sandbox: {@code trim_blocks} and
 * {@code lstrip_blocks} on, {@code raise_exception(msg)} available. Variables: {@code messages}
 * (list of {role, content}), {@code add_generation_prompt}, {@code bos_token}, {@code eos_token}.
 *
 * <p>Jinjava is not Python: string methods that Java's String lacks ({@code startswith},
 * {@code split} returning a list, ...) and some tags are missing. A template that needs them
 * fails with a {@link ChatTemplateException} naming the feature instead of rendering a wrong
 * prompt: unknown filters and tests are caught when the template is created, everything else
 * when it is rendered.
 *
 * <p>A model without a template gets {@link #CHATML}, and {@link #isFallback()} says so.
 */
public final class ChatTemplate {
    /**
     * The fallback when a model has no template: ChatML, the most widely trained format
     * ({@code <|im_start|>role\ncontent<|im_end|>\n} per message, then {@code <|im_start|>assistant\n}).
     */
    public static final String CHATML = "{% for message in messages %}"
            + "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
            + "{% endfor %}"
            + "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

    private static final Pattern STRING_LITERAL = Pattern.compile("'(?:[^'\\\\]|\\\\.)*'|\"(?:[^\"\\\\]|\\\\.)*\"");
    private static final Pattern BLOCK = Pattern.compile("\\{\\{(.*?)}}|\\{%(.*?)%}", Pattern.DOTALL);
    private static final Pattern FILTER = Pattern.compile("\\|\\s*([A-Za-z_][A-Za-z0-9_]*)");
    private static final Pattern TEST = Pattern.compile("\\bis\\s+(?:not\\s+)?([A-Za-z_][A-Za-z0-9_]*)");

    private final String source;
    private final boolean fallback;
    private final Jinjava jinjava;

    private ChatTemplate(String source, boolean fallback) {
        this.source = source;
        this.fallback = fallback;
        this.jinjava = new Jinjava(JinjavaConfig.newBuilder().withTrimBlocks(true).withLstripBlocks(true).build());
        jinjava.getGlobalContext().registerFunction(new ELFunctionDefinition(
                "", "raise_exception", TemplateFunctions.class, "raiseException", String.class));
        List<String> unsupported = unsupportedNames();
        if (!unsupported.isEmpty()) {
            throw new ChatTemplateException("chat template uses what Jinjava does not provide: " + String.join(", ", unsupported));
        }
    }

    /** A template from its Jinja source. */
    public static ChatTemplate of(String source) {
        if (source == null || source.isBlank()) throw new ChatTemplateException("chat template is empty");
        return new ChatTemplate(source, false);
    }

    /** The model's template, or the ChatML fallback when it has none. */
    public static ChatTemplate forModel(Optional<String> tokenizerChatTemplate) {
        return tokenizerChatTemplate.filter(s -> !s.isBlank())
                .map(ChatTemplate::of)
                .orElseGet(() -> new ChatTemplate(CHATML, true));
    }

    /** True when the model had no template and {@link #CHATML} is used instead. */
    public boolean isFallback() { return fallback; }

    public String source() { return source; }

    /**
     * The prompt text for {@code messages}. Special tokens appear spelled out (e.g. "&lt;|im_start|&gt;"),
     * so tokenize the result with special-token parsing on.
     */
    public String render(List<ChatMessage> messages, boolean addGenerationPrompt, String bosToken, String eosToken) {
        List<Map<String, Object>> msgs = new ArrayList<>(messages.size());
        for (ChatMessage m : messages) {
            Map<String, Object> map = new HashMap<>();
            map.put("role", m.role());
            map.put("content", m.content());
            msgs.add(map);
        }
        Map<String, Object> context = new HashMap<>();
        context.put("messages", msgs);
        context.put("add_generation_prompt", addGenerationPrompt);
        context.put("bos_token", bosToken);
        context.put("eos_token", eosToken);
        RenderResult result = jinjava.renderForResult(source, context);
        if (!result.getErrors().isEmpty()) throw new ChatTemplateException(describe(result.getErrors()));
        return result.getOutput();
    }

    /** Filters and tests the template names that Jinjava does not know (Jinjava would silently print nothing). */
    private List<String> unsupportedNames() {
        Set<String> missing = new LinkedHashSet<>();
        Matcher block = BLOCK.matcher(source);
        while (block.find()) {
            String code = STRING_LITERAL.matcher(block.group(block.group(1) != null ? 1 : 2)).replaceAll("''");
            for (Matcher f = FILTER.matcher(code); f.find(); ) {
                if (jinjava.getGlobalContext().getFilter(f.group(1)) == null) missing.add("filter '" + f.group(1) + "'");
            }
            for (Matcher t = TEST.matcher(code); t.find(); ) {
                if (jinjava.getGlobalContext().getExpTest(t.group(1)) == null) missing.add("test '" + t.group(1) + "'");
            }
        }
        return new ArrayList<>(missing);
    }

    private static String describe(List<TemplateError> errors) {
        for (TemplateError e : errors) {
            String raised = raisedMessage(e.getException());
            if (raised != null) return "chat template raised an error: " + raised;
        }
        List<String> parts = new ArrayList<>();
        for (TemplateError e : errors) {
            String where = e.getLineno() > 0 ? " (line " + e.getLineno() + ")" : "";
            parts.add(e.getMessage() + where);
        }
        return "chat template cannot be rendered by Jinjava: " + String.join("; ", parts);
    }

    private static String raisedMessage(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof TemplateFunctions.Raised r) return r.getMessage();
        }
        return null;
    }
}
