package dgr.engine.tokenizer;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Splits text into words before byte-level BPE, with llama.cpp's regex list for each
 * {@code tokenizer.ggml.pre} (llama-vocab.cpp). Each regex splits every piece left by the previous
 * one; the text between matches stays a piece of its own (unicode_regex_split).
 *
 * <p>The regexes are llama.cpp's strings, translated for java.util.regex in one place:
 * {@code \s} becomes the Unicode White_Space set that llama.cpp's own code-point tables use
 * (Java's {@code \s} is ASCII only), and {@code $} becomes {@code \z} (Java's {@code $} would also
 * match before a final newline). Matching is bounded by each piece, as std::regex iterators are.
 */
final class PreTokenizer {
    /** Unicode White_Space: the set llama.cpp's unicode tables flag as whitespace. */
    private static final String WHITESPACE =
            "\\t\\n\\x0B\\f\\r\\x20\\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000";

    private static final String GPT2 =
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
    private static final String LLAMA3 =
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
            + "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String QWEN2 =
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
            + "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String[] DEEPSEEK_LLM = {
        "[\r\n]",
        // Cased letters (Lu, Ll, Lt) as listed by llama.cpp, as escapes so no editor can NFC-normalize them.
        "\\s?["
            + "A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293\u0295-\u02AF"
            + "\u0370-\u0373\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-\u03A1"
            + "\u03A3-\u03F5\u03F7-\u0481\u048A-\u052F\u0531-\u0556\u10A0-\u10C5\u13A0-\u13F5"
            + "\u13F8-\u13FD\u1C90-\u1CBA\u1CBD-\u1CBF\u1D00-\u1D2B\u1D6B-\u1D77\u1D79-\u1D9A"
            + "\u1E00-\u1F15\u1F18-\u1F1D\u1F20-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D"
            + "\u1F5F-\u1F7D\u1F80-\u1FB4\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3"
            + "\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2-\u1FF4\u1FF6-\u1FFC\u2102\u2107\u210A-\u2113\u2115"
            + "\u2119-\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-\u2134\u2139\u213C-\u213F\u2145-\u2149"
            + "\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-\u2CEE\u2CF2\u2CF3\uA640-\uA66D"
            + "\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-\uA78E\uAB70-\uABBF\uFB00-\uFB06"
            + "\uFB13-\uFB17\uFF21-\uFF3A\uFF41-\uFF5A\uD801\uDC00-\uD801\uDC4F\uD801\uDCB0-\uD801\uDCD3"
            + "\uD801\uDCD8-\uD801\uDCFB\uD803\uDC80-\uD803\uDCB2\uD803\uDCC0-\uD803\uDCF2"
            + "\uD806\uDCA0-\uD806\uDCDF\uD83A\uDD00-\uD83A\uDD43]+",
        "\\s?[!-/:-~\uFF01-\uFF0F\uFF1A-\uFF5E\u2018-\u201F\u3000-\u3002]+",
        "\\s+$",
        "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+",
        "\\p{N}+",
    };
    private static final String[] DEEPSEEK_V3 = {
        "\\p{N}{1,3}",
        "[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
                + "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
    };
    /** llama.cpp's list for a BPE vocabulary whose pre is "default" (or missing). */
    private static final String[] DEFAULT = {
        "[\\p{P}\\$\\+<=>\\^~\\|]+",
        GPT2,
        "\\p{N}+",
        "[0-9][0-9][0-9]",
    };

    /** Digits one by one, then GPT-2's words (StarCoder, Refact, Command-R, SmolLM, CodeShell, EXAONE, Minerva). */
    private static final String[] DIGITS_THEN_GPT2 = {"\\p{N}", GPT2};
    private static final String[] FALCON = {"[\\p{P}\\$\\+<=>\\^~\\|`]+", GPT2, "[0-9][0-9][0-9]"};
    private static final String[] DEEPSEEK_CODER = {
        "[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+", "\\p{N}",
    };
    /** Words up to a space or one of {@code |.,!?…。，、।۔،()} (Poro, BLOOM, GPT-3 Finnish). */
    private static final String BLOOM = " ?[^(\\s|.,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C)]+";
    /** Mistral's tekken: words split at lower-to-upper case changes; digits one by one. */
    private static final String TEKKEN =
            "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+"
            + "|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*"
            + "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    /** OpenAI's o200k split (GPT-4o, Llama 4): tekken's case-aware words with contractions, digits by three. */
    private static final String GPT4O =
            "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+"
            + "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
            + "|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*"
            + "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
            + "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String SEED_CODER =
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}"
            + "| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String BAILINGMOE =
            "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
            + "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+";

    /** Qwen 3.5: Qwen 2's split with combining marks kept inside words and out of punctuation runs. */
    private static final String QWEN35 =
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}"
            + "| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    /** Jais 2: Llama 3's split, with runs of spaces cut into power-of-two pieces (512 down to 1). */
    private static final String JAIS2 =
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
            + "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)"
            + "|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}";
    /** EXAONE MoE: words may hold single spaces between letters (with their marks); punctuation keeps one line end or slash. */
    private static final String EXAONE_MOE =
            "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+"
            + "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+";
    /** Cohere's Tiny Aya / Command A MoE: digits grouped by three from the right, then o200k-style case-aware words. */
    private static final String[] TINY_AYA = {
        "\\d{1,3}(?=(?:\\d{3})*\\b)",
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
            + "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
            + "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
            + "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
            + "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    };
    /** Laguna: lines first, then Qwen 2's split inside each. */
    private static final String[] LAGUNA = {"[^\\n]+|[\\n]+", QWEN2};

    /**
     * Names llama.cpp knows whose splitting dgr does not implement, with why: refused by name at load
     * rather than tokenized differently from llama.cpp.
     */
    static final java.util.Map<String, String> REFUSED = java.util.Map.ofEntries(
            java.util.Map.entry("kimi-k2", "llama.cpp splits it in custom code (Han runs handled apart)"),
            java.util.Map.entry("afmoe", "llama.cpp groups its digits in custom code"),
            java.util.Map.entry("superbpe", "its digit split is a zero-width lookahead llama.cpp handles in custom code"),
            java.util.Map.entry("chameleon", "its image and sentinel tokens need Chameleon's image tokenizer"),
            java.util.Map.entry("gemma4", "SentencePiece-style BPE over raw UTF-8 (no byte-level alphabet)"),
            java.util.Map.entry("granite-embed-multi-311m", "SentencePiece-style BPE over raw UTF-8, an embedding model"),
            java.util.Map.entry("sarvam-moe", "SentencePiece-style BPE over raw UTF-8 (no byte-level alphabet)"),
            java.util.Map.entry("whitespace", "an embedding model's whitespace split over raw UTF-8"),
            java.util.Map.entry("jina-v1-en", "an encoder (embedding) vocabulary that appends SEP"),
            java.util.Map.entry("jina-v2-code", "an encoder (embedding) vocabulary that appends SEP"),
            java.util.Map.entry("roberta-bpe", "an encoder (embedding) vocabulary that appends SEP"),
            java.util.Map.entry("granite-embed-multi-97m", "an embedding model's vocabulary"),
            java.util.Map.entry("jina-v5-nano", "an embedding model's vocabulary"),
            java.util.Map.entry("minicpm5", "llama.cpp ignores merges for whole-word tokens without adding BOS; not modelled"),
            java.util.Map.entry("youtu", "llama.cpp ignores merges for whole-word tokens without adding BOS; not modelled"),
            java.util.Map.entry("k2-horizon", "not in a released llama.cpp"));

    private final String name;
    private final Pattern[] patterns;

    private PreTokenizer(String name, String... regexes) {
        this.name = name;
        this.patterns = new Pattern[regexes.length];
        for (int i = 0; i < regexes.length; i++) patterns[i] = Pattern.compile(translate(regexes[i]));
    }

    /**
     * The pre-tokenizer llama.cpp picks for {@code tokenizer.ggml.pre} (its name groups in
     * llama-vocab.cpp), or a precise error naming the pre-tokenizer: {@link #REFUSED} says why for the
     * ones llama.cpp splits in custom code or that are not byte-level BPE for text generation.
     */
    static PreTokenizer forName(String pre) {
        return switch (pre) {
            case "", "default" -> new PreTokenizer("default", DEFAULT);
            case "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "dbrx", "smaug-bpe" ->
                    new PreTokenizer(pre, LLAMA3);
            case "qwen2", "deepseek-r1-qwen", "stablelm2", "hunyuan", "megrez", "kormo", "grok-2" -> new PreTokenizer(pre, QWEN2);
            case "deepseek-llm" -> new PreTokenizer(pre, DEEPSEEK_LLM);
            case "deepseek-v3", "hunyuan-dense" -> new PreTokenizer(pre, DEEPSEEK_V3);
            case "deepseek-coder" -> new PreTokenizer(pre, DEEPSEEK_CODER);
            case "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "mpt", "olmo",
                 "jais", "trillion", "a.x-4.0", "mellum", "exaone4", "granite-docling" -> new PreTokenizer(pre, GPT2);
            case "starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b" ->
                    new PreTokenizer(pre, DIGITS_THEN_GPT2);
            case "falcon" -> new PreTokenizer(pre, FALCON);
            case "poro-chat", "bloom", "gpt3-finnish" -> new PreTokenizer(pre, BLOOM);
            case "viking" -> new PreTokenizer(pre, BLOOM, "\\p{N}");
            case "tekken" -> new PreTokenizer(pre, TEKKEN);
            case "gpt-4o", "llama4", "kanana2", "minimax-m2" -> new PreTokenizer(pre, GPT4O);
            case "seed-coder" -> new PreTokenizer(pre, SEED_CODER);
            case "bailingmoe", "bailingmoe2", "llada-moe" -> new PreTokenizer(pre, BAILINGMOE);
            // Current families (llama.cpp's list after its first releases):
            case "glm4", "chatglm-bpe" -> new PreTokenizer(pre, LLAMA3); // same regex; no merge skipping, no BOS
            case "qwen35" -> new PreTokenizer(pre, QWEN35);
            case "solar-open", "f2llmv2" -> new PreTokenizer(pre, QWEN2);
            case "joyai-llm" -> new PreTokenizer(pre, DEEPSEEK_V3);
            case "modern-bert" -> new PreTokenizer(pre, GPT2);
            case "mellum2" -> new PreTokenizer(pre, DIGITS_THEN_GPT2);
            case "talkie" -> new PreTokenizer(pre, GPT4O);
            case "jais-2" -> new PreTokenizer(pre, JAIS2);
            case "exaone-moe" -> new PreTokenizer(pre, EXAONE_MOE);
            case "tiny_aya", "cohere2moe" -> new PreTokenizer(pre, TINY_AYA);
            case "laguna" -> new PreTokenizer(pre, LAGUNA);
            default -> {
                String why = REFUSED.get(pre);
                throw new TokenizerException(why != null
                        ? "tokenizer.ggml.pre '" + pre + "' is not supported: " + why
                        : "unknown tokenizer.ggml.pre '" + pre + "' (llama.cpp does not know it either, or it is newer"
                        + " than this build; supported: default, llama-bpe/llama3, qwen2, qwen35, deepseek-llm, deepseek-v3,"
                        + " deepseek-coder, gpt-2, smollm/starcoder/refact/command-r, falcon, bloom, tekken, gpt-4o/llama4,"
                        + " seed-coder, bailingmoe, glm4, jais-2, exaone-moe, tiny_aya, laguna and their aliases)");
            }
        };
    }

    /**
     * Whether llama.cpp takes a whole word that is itself a token without merging (Llama 3
     * family, tekken); these are also the vocabularies for which it adds BOS by default.
     */
    static boolean ignoresMerges(String pre) {
        return switch (pre) {
            case "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "tekken" -> true;
            default -> false;
        };
    }

    /** Whether llama.cpp has no BOS token for this vocabulary (GLM-4: {@code special_bos_id = LLAMA_TOKEN_NULL}). */
    static boolean hasNoBos(String pre) {
        return pre.equals("glm4") || pre.equals("chatglm-bpe");
    }

    String name() { return name; }

    /** The words of {@code text}, in order; their concatenation is {@code text}. */
    List<String> split(String text) {
        int[] ends = {text.length()};
        int count = 1;
        for (Pattern p : patterns) {
            Matcher m = p.matcher(text);
            int[] next = new int[Math.max(4, count * 2)];
            int n = 0;
            int start = 0;
            for (int k = 0; k < count; k++) {
                int end = ends[k];
                m.region(start, end);
                int last = start;
                while (m.find()) {
                    if (m.end() == m.start()) continue; // an empty match splits nothing
                    if (n + 2 > next.length) next = java.util.Arrays.copyOf(next, next.length * 2);
                    if (m.start() > last) next[n++] = m.start();
                    next[n++] = m.end();
                    last = m.end();
                }
                if (last < end) {
                    if (n + 1 > next.length) next = java.util.Arrays.copyOf(next, next.length * 2);
                    next[n++] = end;
                }
                start = end;
            }
            ends = next;
            count = n;
        }
        List<String> words = new ArrayList<>(count);
        int start = 0;
        for (int k = 0; k < count; k++) {
            words.add(text.substring(start, ends[k]));
            start = ends[k];
        }
        return words;
    }

    /** llama.cpp regex syntax → java.util.regex with the same meaning (see class comment). */
    static String translate(String regex) {
        StringBuilder out = new StringBuilder(regex.length() + 64);
        boolean inClass = false;
        for (int i = 0; i < regex.length(); i++) {
            char c = regex.charAt(i);
            if (c == '\\' && i + 1 < regex.length()) {
                char e = regex.charAt(i + 1);
                if (e == 's') {
                    out.append(inClass ? WHITESPACE : "[" + WHITESPACE + "]");
                } else if (e == 'S') {
                    if (inClass) throw new IllegalArgumentException("\\S inside a character class: " + regex);
                    out.append("[^").append(WHITESPACE).append(']');
                } else {
                    out.append(c).append(e);
                }
                i++;
            } else if (c == '[' && !inClass) {
                inClass = true;
                out.append(c);
            } else if (c == ']' && inClass) {
                inClass = false;
                out.append(c);
            } else if (c == '$' && !inClass) {
                out.append("\\z");
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
