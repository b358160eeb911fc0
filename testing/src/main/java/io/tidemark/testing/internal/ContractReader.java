package io.tidemark.testing.internal;

import io.tidemark.sync.Change;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads a change function the way the engine does: seeds, then asks for the changes after the stored version and
 * stores what the engine would store (the highest $version, else Metadata.Sync.Version), refusing to go back.
 */
final class ContractReader {

    /** A function that still returns changes after this many polls in a row never settles. */
    private static final int MAX_POLLS = 200;

    private final ContractClient client;
    private final List<String> transcript;
    private long watermark;

    ContractReader(ContractClient client, List<String> transcript) {
        this.client = client;
        this.transcript = transcript;
    }

    long watermark() {
        return watermark;
    }

    /** Seeds as an incremental object does: stores Metadata.Sync.Version, rows or not. Returns the answer. */
    ContractClient.Answer seed() {
        ContractClient.Answer answer = client.seed();
        transcript.add("seed: " + answer.brief());
        watermark = answer.summary().metadataVersion();
        return answer;
    }

    /** One poll after the stored version; stores the new version. */
    List<Change> poll(Integer maxRows) {
        ContractClient.Answer answer = client.sync(watermark, maxRows);
        long next = answer.versionToStore();
        transcript.add("poll: " + answer.brief() + "; store " + next);
        if (next < watermark) {
            throw new ContractClient.Violation("the version went down from " + watermark + " to " + next + " (answer to "
                    + answer.request() + "); the engine refuses that, and the object stops moving");
        }
        watermark = next;
        return answer.rows();
    }

    /** Polls until a poll returns no rows, as the engine drains a backlog; returns every row seen. */
    List<Change> pollUntilQuiet(Integer maxRows) {
        List<Change> all = new ArrayList<>();
        for (int i = 0; i < MAX_POLLS; i++) {
            List<Change> rows = poll(maxRows);
            if (rows.isEmpty()) {
                return all;
            }
            all.addAll(rows);
        }
        throw new ContractClient.Violation("still returning changes after " + MAX_POLLS + " polls in a row: the version"
                + " does not move past the changes it returns, so the same changes come back forever");
    }
}
