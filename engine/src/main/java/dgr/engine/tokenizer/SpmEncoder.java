package dgr.engine.tokenizer;

import java.nio.charset.StandardCharsets;

/**
 * SentencePiece-style tokenization as llama.cpp does it (llm_tokenizer_spm): start from single
 * characters, repeatedly merge the adjacent pair whose merged text is the highest-scoring token
 * (leftmost on ties), and spell whatever is not a token as byte tokens {@code <0xXX>}.
 * Spaces become U+2581 '▁', and a dummy space is put in front when add_space_prefix is set.
 */
final class SpmEncoder implements PieceEncoder {
    private static final char SPACE_MARK = '\u2581';

    private final Vocabulary vocab;
    private final boolean addSpacePrefix;
    private final int[] byteTokens;

    SpmEncoder(Vocabulary vocab, boolean addSpacePrefix, int unknownId) {
        this.vocab = vocab;
        this.addSpacePrefix = addSpacePrefix;
        this.byteTokens = new int[256];
        for (int b = 0; b < 256; b++) {
            int id = vocab.idOf(String.format("<0x%02X>", b));
            byteTokens[b] = id >= 0 ? id : unknownId;
        }
    }

    @Override
    public void encode(String fragment, boolean atStart, IntList out) {
        String text = ((addSpacePrefix && atStart) ? " " + fragment : fragment).replace(' ', SPACE_MARK);
        int n = text.codePointCount(0, text.length());
        if (n == 0) return;
        Symbols sym = new Symbols(n);
        for (int i = 0, pos = 0; i < n; i++) {
            int len = Character.charCount(text.codePointAt(pos));
            sym.start[i] = pos;
            sym.len[i] = len;
            sym.prev[i] = i - 1;
            sym.next[i] = i + 1 < n ? i + 1 : -1;
            pos += len;
        }
        // Highest score first; on equal scores the leftmost pair, as llama.cpp's comparator orders them.
        MergeQueue queue = new MergeQueue(n);
        sym.mergeAll(queue, (l, r) -> offer(text, sym, l, r, queue));
        for (int i = 0; i != -1; i = sym.next[i]) {
            String piece = text.substring(sym.start[i], sym.start[i] + sym.len[i]);
            int id = vocab.idOf(piece);
            if (id >= 0) {
                out.add(id);
                continue;
            }
            for (byte b : piece.getBytes(StandardCharsets.UTF_8)) {
                int bt = byteTokens[b & 0xFF];
                if (bt < 0) throw new TokenizerException("vocabulary has neither <0x" + String.format("%02X", b & 0xFF)
                        + "> nor an unknown token to spell text it cannot tokenize");
                out.add(bt);
            }
        }
    }

    private void offer(String text, Symbols sym, int left, int right, MergeQueue queue) {
        if (left < 0 || right < 0) return;
        int length = sym.len[left] + sym.len[right];
        int id = vocab.idOf(text.substring(sym.start[left], sym.start[left] + length));
        if (id < 0) return;
        queue.push(MergeQueue.key(MergeQueue.descending(vocab.score(id)), left), length);
    }
}
