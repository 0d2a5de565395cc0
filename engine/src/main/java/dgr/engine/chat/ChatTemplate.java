package dgr.engine.chat;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
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
import jinjava.javax.el.CompositeELResolver;

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
    /** {@link #BLOCK} and comments. */
    private static final Pattern TAG = Pattern.compile("\\{\\{(.*?)}}|\\{%(.*?)%}|\\{#(.*?)#}", Pattern.DOTALL);
    private static final Pattern FILTER = Pattern.compile("\\|\\s*([A-Za-z_][A-Za-z0-9_]*)");
    private static final Pattern TEST = Pattern.compile("\\bis\\s+(?:not\\s+)?([A-Za-z_][A-Za-z0-9_]*)");

    private final String source;
    /** {@link #source} with the Python syntax Jinjava's parser lacks rewritten ({@link #jinjavaSyntax}). */
    private final String rendered;
    private final boolean fallback;
    private final Jinjava jinjava;
    /** What {@code strftime_now} reads: the system clock, or a fixed one ({@link #withClock}). */
    private java.time.Clock clock = java.time.Clock.systemUTC();

    private ChatTemplate(String source, boolean fallback) {
        this.source = source;
        this.rendered = jinjavaSyntax(source);
        this.fallback = fallback;
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PythonStrings());
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_WRITE);
        this.jinjava = new Jinjava(JinjavaConfig.newBuilder().withTrimBlocks(true).withLstripBlocks(true)
                .withElResolver(resolver).build());
        jinjava.getGlobalContext().registerFunction(new ELFunctionDefinition(
                "", "raise_exception", TemplateFunctions.class, "raiseException", String.class));
        jinjava.getGlobalContext().registerFunction(new ELFunctionDefinition(
                "", "strftime_now", TemplateFunctions.class, "strftimeNow", String.class));
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

    /**
     * This template with {@code strftime_now} reading {@code clock} (the system clock in UTC by
     * default, as transformers and llama.cpp's server use the current time): Llama 3.1's header
     * dates the prompt, Mistral Small's system prompt too, so a fixed clock makes prompts repeatable.
     */
    public ChatTemplate withClock(java.time.Clock clock) {
        this.clock = java.util.Objects.requireNonNull(clock, "clock");
        return this;
    }

    /** True when the model had no template and {@link #CHATML} is used instead. */
    public boolean isFallback() { return fallback; }

    public String source() { return source; }

    /**
     * The prompt text for {@code messages}. Special tokens appear spelled out (e.g. "&lt;|im_start|&gt;"),
     * so tokenize the result with special-token parsing on.
     */
    public String render(List<ChatMessage> messages, boolean addGenerationPrompt, String bosToken, String eosToken) {
        return render(messages, addGenerationPrompt, bosToken, eosToken, Map.of());
    }

    /** The variables {@link #render} sets itself; a caller's extra variables may not replace them. */
    public static final Set<String> RESERVED = Set.of("messages", "add_generation_prompt", "bos_token", "eos_token");

    /**
     * {@link #render(List, boolean, String, String)} with extra template variables, as
     * {@code chat_template_kwargs} in vLLM's and llama.cpp's servers (Qwen3's
     * {@code enable_thinking: false}, for one). They may not name a {@link #RESERVED} variable.
     */
    public String render(List<ChatMessage> messages, boolean addGenerationPrompt, String bosToken, String eosToken,
                         Map<String, Object> extra) {
        for (String k : extra.keySet()) {
            if (RESERVED.contains(k)) throw new IllegalArgumentException("template variable '" + k + "' is set by dgr, not by the caller");
        }
        List<Map<String, Object>> msgs = new ArrayList<>(messages.size());
        for (ChatMessage m : messages) {
            Map<String, Object> map = new HashMap<>();
            map.put("role", m.role());
            map.put("content", m.content());
            msgs.add(map);
        }
        Map<String, Object> context = new HashMap<>(extra);
        context.put("messages", msgs);
        context.put("add_generation_prompt", addGenerationPrompt);
        context.put("bos_token", bosToken);
        context.put("eos_token", eosToken);
        // Defined, as in transformers, so "strftime_now is defined" holds; the call itself is the function.
        context.put("strftime_now", "strftime_now");
        RenderResult result;
        TemplateFunctions.NOW.set(java.time.ZonedDateTime.now(clock));
        try {
            result = jinjava.renderForResult(rendered, context);
        } finally {
            TemplateFunctions.NOW.remove();
        }
        if (!result.getErrors().isEmpty()) throw new ChatTemplateException(describe(result.getErrors()));
        return result.getOutput();
    }

    private static final Pattern REVERSED = Pattern.compile("\\[\\s*:\\s*:\\s*-1\\s*]");
    private static final Pattern NAMESPACE_CALL = Pattern.compile("\\bnamespace\\s*\\(");

    /**
     * Jinja that Jinjava's expression parser reads differently or not at all, spelled the way it
     * reads as Jinja means it (Qwen3's template needs both), only inside tags and outside string
     * literals:
     * <ul>
     *   <li>the reversing slice {@code seq[::-1]} becomes {@code (seq|reverse)};</li>
     *   <li>a {@code namespace(...)} argument's value is parenthesised:
     *       {@code namespace(n=messages|length - 1)} would otherwise subtract from the named
     *       argument instead of the length;</li>
     *   <li>whitespace control on expression tags and comments, which Jinjava ignores: the text's
     *       whitespace before <code>{{-</code> or <code>{#-</code> and after <code>-}}</code> or
     *       <code>-#}</code> is removed here (Llama 3.1, Qwen2.5 and Qwen3 indent their templates
     *       and rely on it).</li>
     * </ul>
     */
    static String jinjavaSyntax(String source) {
        Matcher block = TAG.matcher(source);
        StringBuilder out = new StringBuilder(source.length());
        int textStart = 0;
        boolean stripNext = false, trimNewline = false;
        while (block.find()) {
            String text = source.substring(textStart, block.start());
            if (stripNext) text = text.stripLeading();
            else if (trimNewline) text = dropFirstNewline(text);
            textStart = block.end();
            String tag = block.group();
            if (block.group(3) != null) {
                // A comment prints nothing: dropped here with Jinja's whitespace rules for it,
                // '-' on either side, else lstrip_blocks before and trim_blocks after.
                if (tag.startsWith("{#-")) {
                    text = text.stripTrailing();
                } else {
                    int nl = text.lastIndexOf('\n');
                    String lead = text.substring(nl + 1);
                    if (lead.isBlank() && (nl >= 0 || out.isEmpty() && block.start() == lead.length())) text = text.substring(0, nl + 1);
                }
                stripNext = tag.endsWith("-#}");
                trimNewline = !stripNext;
                out.append(text);
                continue;
            }
            tag = rewriteTag(tag);
            boolean ownsControl = tag.startsWith("{{"); // Jinjava honours '-' on statement tags only
            if (ownsControl && tag.charAt(2) == '-') {
                text = text.stripTrailing();
                tag = tag.substring(0, 2) + tag.substring(3);
            }
            stripNext = ownsControl && tag.charAt(tag.length() - 3) == '-';
            trimNewline = false;
            if (stripNext) tag = tag.substring(0, tag.length() - 3) + tag.substring(tag.length() - 2);
            out.append(text).append(tag);
        }
        String tail = source.substring(textStart);
        if (stripNext) tail = tail.stripLeading();
        else if (trimNewline) tail = dropFirstNewline(tail);
        return out.append(tail).toString();
    }

    /** trim_blocks after a dropped comment: one leading newline goes. */
    private static String dropFirstNewline(String text) {
        return text.startsWith("\r\n") ? text.substring(2) : text.startsWith("\n") ? text.substring(1) : text;
    }

    private static String rewriteTag(String code) {
        // The same text with every string literal blanked out, so brackets, commas and '=' inside
        // literals are not mistaken for syntax; edits are found here and made in the original.
        char[] mask = code.toCharArray();
        for (Matcher lit = STRING_LITERAL.matcher(code); lit.find(); ) {
            for (int i = lit.start(); i < lit.end(); i++) mask[i] = '_';
        }
        String masked = new String(mask);
        java.util.TreeMap<Integer, String> inserts = new java.util.TreeMap<>();
        java.util.TreeMap<Integer, Integer> cuts = new java.util.TreeMap<>();
        for (Matcher m = REVERSED.matcher(masked); m.find(); ) {
            inserts.merge(receiverStart(mask, m.start()), "(", (a, b) -> b + a);
            cuts.put(m.start(), m.end());
            inserts.merge(m.start(), "|reverse)", String::concat);
        }
        for (Matcher m = NAMESPACE_CALL.matcher(masked); m.find(); ) {
            int close = matching(mask, m.end() - 1);
            if (close < 0) continue;
            int argStart = m.end(), depth = 0;
            for (int i = m.end(); i <= close; i++) {
                char c = mask[i];
                if (i < close && (c == '(' || c == '[' || c == '{')) depth++;
                else if (i < close && (c == ')' || c == ']' || c == '}')) depth--;
                else if (i == close || (c == ',' && depth == 0)) {
                    int eq = namedArgument(mask, argStart, i);
                    if (eq >= 0) {
                        inserts.merge(eq + 1, "(", String::concat);
                        inserts.merge(i, ")", (a, b) -> b + a);
                    }
                    argStart = i + 1;
                }
            }
        }
        StringBuilder b = new StringBuilder(code.length() + 16);
        for (int i = 0; i <= code.length(); i++) {
            String ins = inserts.get(i);
            if (ins != null) b.append(ins);
            Integer end = cuts.get(i);
            if (end != null) {
                i = end - 1;
                continue;
            }
            if (i < code.length()) b.append(code.charAt(i));
        }
        return b.toString();
    }

    /** Where the postfix chain ending just before {@code end} starts: names, dots and bracketed groups. */
    private static int receiverStart(char[] mask, int end) {
        int j = end;
        while (j > 0) {
            char c = mask[j - 1];
            if (c == ']' || c == ')') {
                int depth = 0;
                do {
                    char d = mask[--j];
                    if (d == ']' || d == ')') depth++;
                    else if (d == '[' || d == '(') depth--;
                } while (depth > 0 && j > 0);
            } else if (Character.isLetterOrDigit(c) || c == '_' || c == '.') {
                j--;
            } else {
                break;
            }
        }
        return j;
    }

    /** The index of the bracket closing the one at {@code open}, or -1. */
    private static int matching(char[] mask, int open) {
        int depth = 0;
        for (int i = open; i < mask.length; i++) {
            if (mask[i] == '(' || mask[i] == '[' || mask[i] == '{') depth++;
            else if ((mask[i] == ')' || mask[i] == ']' || mask[i] == '}') && --depth == 0) return i;
        }
        return -1;
    }

    /** The '=' of {@code name=value} in {@code [from, to)}, or -1 when the argument is positional. */
    private static int namedArgument(char[] mask, int from, int to) {
        int i = from;
        while (i < to && Character.isWhitespace(mask[i])) i++;
        int name = i;
        while (i < to && (Character.isLetterOrDigit(mask[i]) || mask[i] == '_')) i++;
        if (i == name) return -1;
        while (i < to && Character.isWhitespace(mask[i])) i++;
        return i < to && mask[i] == '=' && (i + 1 >= to || mask[i + 1] != '=') ? i : -1;
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
