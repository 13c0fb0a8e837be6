package io.tally.ingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.ingest.sink.CosmosStatusClassifier.Decision;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CosmosStatusClassifierTest {

    @ParameterizedTest(name = "{0}/{1} on {2} -> {3}")
    @CsvSource({
            // written
            "200, 0,    PATCH_IF_NEWER, SUCCESS",
            "201, 0,    CREATE,         SUCCESS",
            "204, 0,    PATCH_IF_NEWER, SUCCESS",
            // the stored ver is already newer or equal: a rightly refused stale write
            "412, 0,    PATCH_IF_NEWER, IGNORE",
            "412, 0,    CREATE,         IGNORE",
            // protocol switches
            "404, 0,    PATCH_IF_NEWER, CREATE_INSTEAD",
            "409, 0,    CREATE,         PATCH_INSTEAD",
            "404, 1002, PATCH_IF_NEWER, RETRY",
            "404, 0,    CREATE,         RETRY",
            "409, 0,    PATCH_IF_NEWER, RETRY",
            // congestion: retry and cut concurrency
            "429, 3200, PATCH_IF_NEWER, RETRY_CONGESTED",
            "429, 10003, CREATE,        RETRY_CONGESTED",
            "408, 0,    PATCH_IF_NEWER, RETRY_CONGESTED",
            "503, 0,    PATCH_IF_NEWER, RETRY_CONGESTED",
            "503, 10001, CREATE,        RETRY_CONGESTED",
            // transient
            "410, 0,    PATCH_IF_NEWER, RETRY",
            "410, 1002, PATCH_IF_NEWER, RETRY",
            "410, 1000, CREATE,         RETRY",
            "449, 0,    PATCH_IF_NEWER, RETRY",
            "500, 0,    PATCH_IF_NEWER, RETRY",
            "0,   0,    PATCH_IF_NEWER, RETRY",
            // credentials: stall and alert rather than dead-letter everything
            "401, 0,    PATCH_IF_NEWER, RETRY",
            "403, 3,    PATCH_IF_NEWER, RETRY",
            // the document itself is wrong
            "400, 0,    PATCH_IF_NEWER, FAIL",
            "400, 0,    CREATE,         FAIL",
            "413, 0,    CREATE,         FAIL",
            "422, 0,    PATCH_IF_NEWER, FAIL",
            "405, 0,    PATCH_IF_NEWER, FAIL",
    })
    void table(int status, int subStatus, WriteKind kind, Decision expected) {
        assertThat(CosmosStatusClassifier.classify(status, subStatus, kind)).isEqualTo(expected);
    }
}
