package dgr.node.accounting;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node's accounting journal: what was appended is what a restarted node reloads (the last record of an id
 * winning), a line torn by a crash mid-append is dropped without losing the ones before it, and the file stays
 * bounded by compaction to the latest records.
 */
class AccountingJournalTest {
    @TempDir
    Path dir;

    private static RequestRecord record(String id, int generated, String finish) {
        return new RequestRecord(id, "llama-tiny", "acme", 10, 0, generated, generated, 0, finish,
                "cancelled".equals(finish) ? "client gone" : null, 1_000, 2_000 + generated);
    }

    @Test
    void aReopenedJournalHoldsEveryAppendedRecordTheLastOfAnIdWinning() throws Exception {
        Path file = dir.resolve("sub/accounting.jsonl");
        List<RequestRecord> live = new ArrayList<>();
        try (AccountingJournal j = AccountingJournal.open(file, 100).journal()) {
            for (RequestRecord r : List.of(record("a", 3, "stop"), record("b", 7, "cancelled"), record("a", 5, "length"))) {
                live.add(r);
                j.append(r, () -> live);
            }
        }
        AccountingJournal.Loaded again = AccountingJournal.open(file, 100);
        again.journal().close();
        assertThat(again.records()).containsExactly(record("b", 7, "cancelled"), record("a", 5, "length"));
    }

    @Test
    void aLineTornByACrashIsDroppedAndAppendsAfterItAreKept() throws Exception {
        Path file = dir.resolve("accounting.jsonl");
        try (AccountingJournal j = AccountingJournal.open(file, 100).journal()) {
            j.append(record("a", 3, "stop"), List::of);
        }
        // kill -9 in the middle of the next append: half a line, no newline.
        String whole = Files.readString(file);
        Files.writeString(file, whole.substring(0, whole.length() / 2), StandardCharsets.UTF_8, StandardOpenOption.APPEND);
        try (AccountingJournal j = AccountingJournal.open(file, 100).journal()) {
            j.append(record("b", 4, "length"), List::of);
        }
        AccountingJournal.Loaded again = AccountingJournal.open(file, 100);
        again.journal().close();
        assertThat(again.records()).containsExactly(record("a", 3, "stop"), record("b", 4, "length"));
    }

    @Test
    void theFileIsCompactedToTheLatestRecordsAndNeverHoldsMoreThanTwiceTheCapacity() throws Exception {
        Path file = dir.resolve("accounting.jsonl");
        int capacity = 10;
        List<RequestRecord> live = new ArrayList<>();
        try (AccountingJournal j = AccountingJournal.open(file, capacity).journal()) {
            for (int i = 0; i < 95; i++) {
                RequestRecord r = record("r" + i, i, "stop");
                live.add(r);
                while (live.size() > capacity) live.removeFirst();
                j.append(r, () -> live);
                assertThat(Files.readAllLines(file)).hasSizeLessThanOrEqualTo(2 * capacity + 1);
            }
        }
        AccountingJournal.Loaded again = AccountingJournal.open(file, capacity);
        again.journal().close();
        assertThat(again.records()).extracting(RequestRecord::requestId)
                .containsExactly("r85", "r86", "r87", "r88", "r89", "r90", "r91", "r92", "r93", "r94");
    }
}
