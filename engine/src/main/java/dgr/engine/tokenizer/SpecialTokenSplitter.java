package dgr.engine.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Cuts text at the spelled-out special tokens before any model-specific tokenization
 * (llama.cpp's tokenizer_st_partition). Tokens are tried longest first, so "&lt;|im_start|&gt;" wins
 * over a shorter special that is a prefix of it. CONTROL and UNKNOWN tokens are matched only when
 * special parsing is on; USER_DEFINED tokens are always matched, as Hugging Face tokenizers do.
 */
final class SpecialTokenSplitter {
    /** A piece of the input: raw text still to tokenize, or one special token. */
    sealed interface Fragment permits Raw, Special {}

    record Raw(int start, int end) implements Fragment {}

    record Special(int id) implements Fragment {}

    private final int[] ids;
    private final String[] texts;
    private final boolean[] alwaysMatched;

    SpecialTokenSplitter(Vocabulary vocab) {
        List<Integer> candidates = new ArrayList<>();
        for (int id = 0; id < vocab.size(); id++) {
            boolean special = switch (vocab.type(id)) {
                case CONTROL, USER_DEFINED, UNKNOWN -> true;
                default -> false;
            };
            if (special && !vocab.text(id).isEmpty()) candidates.add(id);
        }
        candidates.sort(Comparator.<Integer>comparingInt(id -> -vocab.text(id).getBytes(StandardCharsets.UTF_8).length)
                .thenComparingInt(id -> id));
        int[] special = candidates.stream().mapToInt(Integer::intValue).toArray();
        this.ids = special;
        this.texts = new String[special.length];
        this.alwaysMatched = new boolean[special.length];
        for (int i = 0; i < special.length; i++) {
            texts[i] = vocab.text(special[i]);
            alwaysMatched[i] = vocab.type(special[i]) == TokenType.USER_DEFINED;
        }
    }

    List<Fragment> split(String text, boolean parseSpecial) {
        List<Fragment> fragments = new ArrayList<>();
        fragments.add(new Raw(0, text.length()));
        for (int t = 0; t < ids.length; t++) {
            if (!parseSpecial && !alwaysMatched[t]) continue;
            String needle = texts[t];
            if (!text.contains(needle)) continue;
            List<Fragment> next = new ArrayList<>(fragments.size() + 2);
            for (Fragment f : fragments) {
                if (!(f instanceof Raw(int start, int end))) {
                    next.add(f);
                    continue;
                }
                int from = start;
                while (true) {
                    int at = text.indexOf(needle, from);
                    if (at < 0 || at + needle.length() > end) break;
                    if (at > from) next.add(new Raw(from, at));
                    next.add(new Special(ids[t]));
                    from = at + needle.length();
                }
                if (from < end) next.add(new Raw(from, end));
            }
            fragments = next;
        }
        return fragments;
    }
}
