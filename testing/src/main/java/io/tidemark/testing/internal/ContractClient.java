package io.tidemark.testing.internal;

import io.tidemark.sync.Change;
import io.tidemark.sync.Operation;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.contract.ChangeReader;
import io.tidemark.sync.internal.contract.ResponseScanner;
import io.tidemark.sync.internal.contract.ResponseSummary;
import io.tidemark.sync.spi.ResponsePayload;

import java.util.List;

/**
 * Reads a {@link ContractTarget} (a change function, or a provider's object) the way the engine does and checks
 * the answer with the engine's own checking pass, so the verifier judges responses exactly as Tidemark
 * would. A response the engine would refuse is a {@link Violation}.
 */
public final class ContractClient implements AutoCloseable {

    private final ContractTarget target;

    public ContractClient(ContractTarget target) {
        this.target = target;
    }

    /** What one call returned, checked. */
    public record Answer(String request, ResponseSummary summary, List<Change> rows) {

        /** The version the engine stores after this answer: the highest $version, else Metadata.Sync.Version. */
        public long versionToStore() {
            return summary.versionToStore();
        }

        /** A one-line account of the answer for the transcript. */
        public String brief() {
            StringBuilder s = new StringBuilder(request).append(" -> Version ").append(summary.metadataVersion())
                    .append(", ").append(summary.syncType()).append(", ").append(rows.size()).append(" rows");
            if (!rows.isEmpty()) {
                s.append(": ");
                for (int i = 0; i < rows.size() && i < 12; i++) {
                    Change c = rows.get(i);
                    s.append(i == 0 ? "" : ", ").append(c.operation().map(Operation::code).orElse("?"))
                            .append('@').append(c.version().isPresent() ? Long.toString(c.version().getAsLong()) : "-");
                }
                if (rows.size() > 12) {
                    s.append(", ...");
                }
            }
            return s.toString();
        }
    }

    public Answer seed() {
        return call("{\"fromVersion\":0,\"mode\":\"seed\"}", true, 0, null);
    }

    public Answer sync(long fromVersion, Integer maxRows) {
        return call("{\"fromVersion\":" + fromVersion + ",\"mode\":\"sync\""
                + (maxRows == null ? "" : ",\"maxRows\":" + maxRows) + "}", false, fromVersion, maxRows);
    }

    private Answer call(String request, boolean seed, long fromVersion, Integer maxRows) {
        // Checked and read by the engine's own passes, so the rows are exactly what a destination would get.
        try (ResponsePayload payload = target.call(request, seed, fromVersion, maxRows)) {
            ResponseSummary summary = ResponseScanner.scan(target.name(), payload);
            if (summary.rowCount() == 0) {
                return new Answer(request, summary, List.of());
            }
            try (ChangeReader reader = new ChangeReader(target.name(), payload)) {
                return new Answer(request, summary, reader.nextPage(Math.toIntExact(summary.rowCount())));
            }
        } catch (TidemarkException e) {
            throw new Violation("the engine would refuse the answer to " + request + ": " + e.getMessage());
        }
    }

    @Override
    public void close() {
        target.close();
    }

    /** The function broke the contract; the message says how. */
    public static final class Violation extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Violation(String message) {
            super(message);
        }
    }
}
