package dgr.runtime;

import dgr.engine.StateLayout;

/**
 * What a request must satisfy before it may wait for admission, in the order a client hears about it: a
 * prompt, token ids inside the vocabulary, a text decoder where stop strings need one, the context rule
 * ({@link ContextRule}) and a state reservation no larger than the whole budget. The scheduler asks here
 * and nowhere else; a refusal allocates nothing.
 */
record RequestCheck(int vocabSize, int contextLength, StateLayout layout, long stateBudgetBytes) {

    /** The refusal, or null when the request may wait for admission. */
    Submission.Rejected refusal(SessionRequest request) {
        int n = request.promptLength();
        if (n == 0) return new Submission.Rejected(RejectReason.INVALID_REQUEST, "prompt is empty");
        for (int i = 0; i < n; i++) {
            int tok = request.promptToken(i);
            if (tok < 0 || tok >= vocabSize) {
                return new Submission.Rejected(RejectReason.INVALID_REQUEST,
                        "prompt token " + tok + " at index " + i + " is outside the vocabulary [0, " + vocabSize + ")");
            }
        }
        if (!request.stop().stopStrings().isEmpty() && request.decoder() == null) {
            return new Submission.Rejected(RejectReason.INVALID_REQUEST, "stop strings need a text decoder");
        }
        String tooLong = ContextRule.violation(n, request.stop().maxTokens(), contextLength);
        if (tooLong != null) return new Submission.Rejected(RejectReason.EXCEEDS_CONTEXT, tooLong);
        long reservation = reservationBytes(request);
        if (reservation > stateBudgetBytes) {
            return new Submission.Rejected(RejectReason.EXCEEDS_STATE_BUDGET, "the session needs " + reservation
                    + " state bytes, more than the whole budget of " + stateBudgetBytes);
        }
        return null;
    }

    /** State bytes a session reserves on admission: every position its prompt and max_tokens can fill. */
    long reservationBytes(SessionRequest request) {
        return layout.bytesForTokens((int) ContextRule.positions(request.promptLength(), request.stop().maxTokens()));
    }
}
