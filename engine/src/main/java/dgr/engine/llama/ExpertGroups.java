package dgr.engine.llama;

import java.util.Arrays;

/**
 * How a batch's expert choices group into passes, shared by the llama family's {@code ExpertFfn} and
 * DeepSeek-V4's experts: each chosen expert becomes one active group, largest group first (ties by
 * expert index, a stable insertion), so the order, and with it every sum, depends only on the choices.
 */
public final class ExpertGroups {
    private ExpertGroups() {}

    /**
     * Counts the rows that chose each expert into {@code groupSize} and writes the active experts,
     * largest group first, into {@code expertOf}; returns how many are active.
     */
    public static int order(int[] chosen, int choices, int expertCount, int[] groupSize, int[] expertOf) {
        Arrays.fill(groupSize, 0);
        for (int c = 0; c < choices; c++) groupSize[chosen[c]]++;
        int active = 0;
        for (int ex = 0; ex < expertCount; ex++) {
            if (groupSize[ex] == 0) continue;
            int a = active++;
            while (a > 0 && groupSize[expertOf[a - 1]] < groupSize[ex]) {
                expertOf[a] = expertOf[a - 1];
                a--;
            }
            expertOf[a] = ex;
        }
        return active;
    }

    /** {@code a} when it holds {@code n} floats, else a new array of {@code n}: group buffers only grow. */
    public static float[] grow(float[] a, int n) {
        return a != null && a.length >= n ? a : new float[n];
    }
}
