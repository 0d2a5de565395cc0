package dgr.node.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A refusal closes early only once the client's head has ended and announced no body. */
class RequestHeadScanTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "GET, whole head                | GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n                            | true",
            "head not ended yet             | GET / HTTP/1.1\\r\\nHost: x\\r\\n                                  | false",
            "POST with a body to come       | POST / HTTP/1.1\\r\\nContent-Length: 12\\r\\n\\r\\n                | false",
            "POST with an empty body        | POST / HTTP/1.1\\r\\nContent-Length: 0\\r\\n\\r\\n                 | true",
            "chunked body to come           | POST / HTTP/1.1\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n        | false",
            "bare LF line endings           | GET / HTTP/1.1\\nHost: x\\n\\n                                    | true",
    })
    void closesEarlyOnlyWhenNothingMoreIsComing(String name, String head, boolean early) {
        RequestHeadScan scan = new RequestHeadScan();
        byte[] bytes = head.strip().replace("\\r", "\r").replace("\\n", "\n").getBytes(StandardCharsets.US_ASCII);
        // In two pieces, split mid-way, as reads may deliver it.
        scan.scan(java.util.Arrays.copyOfRange(bytes, 0, bytes.length / 2));
        scan.scan(java.util.Arrays.copyOfRange(bytes, bytes.length / 2, bytes.length));
        assertThat(scan.endedWithoutBody()).as(name).isEqualTo(early);
    }
}
