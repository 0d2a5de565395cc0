package dgr.node.stage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

class KeptRowsTest {
    private static float[] decode(ByteString b, int floats) {
        float[] out = new float[floats];
        RowCodec.decode(b, out, 0);
        return out;
    }

    @Test
    void wireBytesAreTheRowsEncodedAndStayValidWhenTheKeptRowsGrow() {
        int width = 3;
        KeptRows kept = new KeptRows(width);
        float[] src = new float[40 * width];
        for (int i = 0; i < src.length; i++) src[i] = i * 0.5f - 7;
        kept.put(0, src, 0, 2);
        ByteString first = kept.wire(0, 2);
        assertThat(decode(first, 2 * width)).containsExactly(java.util.Arrays.copyOfRange(src, 0, 2 * width));
        assertThat(first).isEqualTo(RowCodec.encode(src, 0, 2 * width));
        // Past the first 16 rows the kept bytes move to a larger array; a view taken before still reads the old rows.
        kept.put(2, src, 2 * width, 38);
        assertThat(kept.size()).isEqualTo(40);
        assertThat(decode(first, 2 * width)).containsExactly(java.util.Arrays.copyOfRange(src, 0, 2 * width));
        assertThat(decode(kept.wire(30, 10), 10 * width)).containsExactly(java.util.Arrays.copyOfRange(src, 30 * width, 40 * width));
        assertThat(kept.bytes()).isGreaterThanOrEqualTo(40L * width * Float.BYTES);
        assertThatThrownBy(() -> kept.wire(39, 2)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> kept.put(41, src, 0, 1)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void rowsPastAPageAreKeptInPagesAndAnEntryAcrossTwoIsOneByteString() {
        int width = Downlinks.MAX_ENTRY_BYTES / Float.BYTES / 4; // four rows a page
        KeptRows kept = new KeptRows(width);
        float[] src = new float[10 * width];
        for (int i = 0; i < src.length; i++) src[i] = (i % 977) * 0.25f - 100;
        kept.put(0, src, 0, 3);
        kept.put(3, src, 3 * width, 7);
        assertThat(kept.size()).isEqualTo(10);
        assertThat(kept.bytes()).isEqualTo(3L * Downlinks.MAX_ENTRY_BYTES); // three full pages, none copied twice
        ByteString across = kept.wire(2, 5); // rows 2-3 of the first page, 4-6 of the second
        assertThat(across).isEqualTo(RowCodec.encode(src, 2 * width, 5 * width));
        assertThat(decode(kept.wire(8, 2), 2 * width)).containsExactly(java.util.Arrays.copyOfRange(src, 8 * width, 10 * width));
        // A position kept again with the same bits leaves every view as it was.
        kept.put(4, src, 4 * width, 2);
        assertThat(across).isEqualTo(RowCodec.encode(src, 2 * width, 5 * width));
    }
}
