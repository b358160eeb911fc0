package io.tidemark.sync.internal.engine;

import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.contract.ResponseScanner;
import io.tidemark.sync.internal.contract.ResponseSummary;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;

import java.util.Optional;

/**
 * The first position of an INCREMENTAL object, shared by the engine and the Kafka Connect source connector: the
 * provider's current version when it has one (SQL Server's change tracking), else the version of a
 * {@code "mode":"seed"} call, whose rows are not delivered. The caller stores the version and warns about
 * discarded rows in its own terms ({@link Seeded#discardWarning()}).
 */
public final class IncrementalSeed {

    private IncrementalSeed() {
    }

    public static Seeded seed(TrackedObject object, ChangeProvider provider, CallContext calls) {
        var server = provider.currentVersion(object);
        if (server.isPresent()) {
            return new Seeded(server.getAsLong(), Optional.empty());
        }
        try (ResponsePayload payload = provider.invoke(object, ChangeRequest.seed(), calls)) {
            ResponseSummary summary = ResponseScanner.scan(object.name(), payload);
            return new Seeded(summary.metadataVersion(), Optional.of(summary));
        }
    }

    /**
     * The version an object starts from.
     *
     * @param seedResponse the summary of the seed call, when the provider had no current version
     */
    public record Seeded(long version, Optional<ResponseSummary> seedResponse) {

        /** What to warn about when the seed call returned rows (they are discarded, never delivered). */
        public Optional<String> discardWarning() {
            return seedResponse.filter(s -> s.rowCount() > 0).map(s -> "returned " + s.rowCount()
                    + " rows during an incremental seed; discarding them");
        }
    }
}
