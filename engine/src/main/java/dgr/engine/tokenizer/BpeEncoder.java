package dgr.engine.tokenizer;

import java.util.List;

/**
 * Byte-level BPE as llama.cpp does it (llm_tokenizer_bpe): split the text into words with the
 * pre-tokenizer's regexes, spell each word's UTF-8 bytes in GPT-2's byte alphabet, then inside
 * each word repeatedly merge the adjacent pair with the lowest merge rank (leftmost on ties).
 */
final class BpeEncoder implements PieceEncoder {
    private final Vocabulary vocab;
    private final PreTokenizer preTokenizer;
    /** "left right" (the merge list's own spelling) → rank = position in tokenizer.ggml.merges. */
    private final StringIntMap ranks;
    private final boolean ignoreMerges;

    BpeEncoder(Vocabulary vocab, PreTokenizer preTokenizer, StringIntMap ranks, boolean ignoreMerges) {
        this.vocab = vocab;
        this.preTokenizer = preTokenizer;
        this.ranks = ranks;
        this.ignoreMerges = ignoreMerges;
    }

    @Override
    public void encode(String text, boolean atStart, IntList out) {
        List<String> words = preTokenizer.split(text);
        for (String w : words) encodeWord(ByteLevel.encode(w), out);
    }

    private void encodeWord(String word, IntList out) {
        if (ignoreMerges) {
            // Llama 3: a word that is a token is taken whole, even where merges would spell it otherwise.
            int id = vocab.idOf(word);
            if (id >= 0) {
                out.add(id);
                return;
            }
        }
        int n = word.length(); // one char per byte in the byte-level alphabet
        if (n == 0) return;
        Symbols sym = new Symbols(n);
        for (int i = 0; i < n; i++) {
            sym.start[i] = i;
            sym.len[i] = 1;
            sym.prev[i] = i - 1;
            sym.next[i] = i + 1 < n ? i + 1 : -1;
        }
        // Lowest rank first; on equal ranks the leftmost pair, as llama.cpp's comparator orders them.
        MergeQueue queue = new MergeQueue(n);
        sym.mergeAll(queue, (l, r) -> offer(word, sym, l, r, queue));
        for (int i = 0; i != -1; i = sym.next[i]) {
            String piece = word.substring(sym.start[i], sym.start[i] + sym.len[i]);
            int id = vocab.idOf(piece);
            if (id >= 0) {
                out.add(id);
                continue;
            }
            // llama.cpp's fallback: a piece that is no token is spelled by whichever single-byte
            // (ASCII) tokens exist for its characters; the rest is dropped.
            for (int k = 0; k < piece.length(); k++) {
                char c = piece.charAt(k);
                int single = c < 0x80 ? vocab.idOf(String.valueOf(c)) : -1;
                if (single >= 0) out.add(single);
            }
        }
    }

    private void offer(String word, Symbols sym, int left, int right, MergeQueue queue) {
        if (left < 0 || right < 0) return;
        int ls = sym.start[left], rs = sym.start[right];
        String key = word.substring(ls, ls + sym.len[left]) + ' ' + word.substring(rs, rs + sym.len[right]);
        int rank = ranks.get(key);
        if (rank < 0) return;
        queue.push(MergeQueue.key(rank, left), sym.len[left] + sym.len[right]);
    }
}
