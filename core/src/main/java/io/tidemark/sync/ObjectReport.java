package io.tidemark.sync;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/** What one cycle did for one tracked object. Immutable. */
public final class ObjectReport {

    private final String objectName;
    private final Outcome outcome;
    private final Long fromVersion;
    private final Long toVersion;
    private final long changeCount;
    private final int pageCount;
    private final int deadLetteredPages;
    private final SyncType syncType;
    private final int reasonCode;
    private final boolean fullBatch;
    private final Instant startedAt;
    private final Duration duration;
    private final TidemarkException error;
    private final List<String> warnings;
    private final List<Diagnostic> diagnostics;
    private final List<DestinationReport> destinations;

    private ObjectReport(Builder b) {
        this.objectName = Objects.requireNonNull(b.objectName, "objectName");
        this.outcome = Objects.requireNonNull(b.outcome, "outcome");
        this.fromVersion = b.fromVersion;
        this.toVersion = b.toVersion;
        this.changeCount = b.changeCount;
        this.pageCount = b.pageCount;
        this.deadLetteredPages = b.deadLetteredPages;
        this.syncType = b.syncType;
        this.reasonCode = b.reasonCode;
        this.fullBatch = b.fullBatch;
        this.startedAt = Objects.requireNonNull(b.startedAt, "startedAt");
        this.duration = Objects.requireNonNull(b.duration, "duration");
        this.error = b.error;
        this.warnings = List.copyOf(b.warnings);
        this.diagnostics = List.copyOf(b.diagnostics);
        this.destinations = List.copyOf(b.destinations);
    }

    public static Builder builder(String objectName, Instant startedAt) {
        return new Builder(objectName, startedAt);
    }

    public String objectName() {
        return objectName;
    }

    public Outcome outcome() {
        return outcome;
    }

    /** The watermark before the cycle; empty on a first cycle. */
    public OptionalLong fromVersion() {
        return fromVersion == null ? OptionalLong.empty() : OptionalLong.of(fromVersion);
    }

    /** The watermark after the cycle; equal to {@link #fromVersion()} when it did not move. */
    public OptionalLong toVersion() {
        return toVersion == null ? OptionalLong.empty() : OptionalLong.of(toVersion);
    }

    /** Changes the procedure returned this cycle (discarded seed rows included). */
    public long changeCount() {
        return changeCount;
    }

    public int pageCount() {
        return pageCount;
    }

    /** Pages set aside in the dead-letter store by a destination whose policy allows it. */
    public int deadLetteredPages() {
        return deadLetteredPages;
    }

    public Optional<SyncType> syncType() {
        return Optional.ofNullable(syncType);
    }

    public int reasonCode() {
        return reasonCode;
    }

    /** True when the object has a {@code maxRows} hint and the call returned at least that many rows. */
    public boolean fullBatch() {
        return fullBatch;
    }

    public Instant startedAt() {
        return startedAt;
    }

    public Duration duration() {
        return duration;
    }

    /** Why the cycle failed or was blocked. */
    public Optional<TidemarkException> error() {
        return Optional.ofNullable(error);
    }

    /** Things that went wrong without failing the cycle, such as discarded seed rows. */
    public List<String> warnings() {
        return warnings;
    }

    public List<Diagnostic> diagnostics() {
        return diagnostics;
    }

    /**
     * What the cycle did for each destination, in the order they were registered: each has its own position, so
     * one can be blocked while the others deliver. Empty for a cycle that ended before delivering (failed,
     * paused object, seeded).
     */
    public List<DestinationReport> destinations() {
        return destinations;
    }

    /** The destinations that are blocked after this cycle. */
    public List<DestinationReport> blockedDestinations() {
        return destinations.stream().filter(d -> d.outcome() == Outcome.BLOCKED).toList();
    }

    public boolean isSuccess() {
        return outcome != Outcome.FAILED && outcome != Outcome.BLOCKED;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("ObjectReport[").append(objectName).append(' ').append(outcome)
                .append(", ").append(fromVersion).append(" -> ").append(toVersion)
                .append(", ").append(changeCount).append(" changes");
        if (syncType != null) {
            sb.append(", ").append(syncType).append(" reason ").append(reasonCode);
        }
        if (deadLetteredPages > 0) {
            sb.append(", ").append(deadLetteredPages).append(" pages dead-lettered");
        }
        List<DestinationReport> blocked = blockedDestinations();
        if (!blocked.isEmpty() && blocked.size() < destinations.size()) {
            sb.append(", blocked: ").append(blocked.stream().map(DestinationReport::destination).toList());
        }
        if (error != null) {
            sb.append(", error=").append(error.getMessage());
        }
        return sb.append(']').toString();
    }

    /** Assembles a report; used by the engine. */
    public static final class Builder {
        private final String objectName;
        private final Instant startedAt;
        private Outcome outcome;
        private Long fromVersion;
        private Long toVersion;
        private long changeCount;
        private int pageCount;
        private int deadLetteredPages;
        private SyncType syncType;
        private int reasonCode;
        private boolean fullBatch;
        private Duration duration = Duration.ZERO;
        private TidemarkException error;
        private final java.util.ArrayList<String> warnings = new java.util.ArrayList<>();
        private final java.util.ArrayList<Diagnostic> diagnostics = new java.util.ArrayList<>();
        private final java.util.ArrayList<DestinationReport> destinations = new java.util.ArrayList<>();

        private Builder(String objectName, Instant startedAt) {
            this.objectName = objectName;
            this.startedAt = startedAt;
        }

        public Builder outcome(Outcome value) {
            this.outcome = value;
            return this;
        }

        public Builder fromVersion(OptionalLong value) {
            this.fromVersion = value.isPresent() ? value.getAsLong() : null;
            return this;
        }

        public Builder toVersion(OptionalLong value) {
            this.toVersion = value.isPresent() ? value.getAsLong() : null;
            return this;
        }

        public Builder changeCount(long value) {
            this.changeCount = value;
            return this;
        }

        public Builder pageCount(int value) {
            this.pageCount = value;
            return this;
        }

        public Builder deadLetteredPages(int value) {
            this.deadLetteredPages = value;
            return this;
        }

        public Builder sync(SyncType type, int reason) {
            this.syncType = type;
            this.reasonCode = reason;
            return this;
        }

        public Builder fullBatch(boolean value) {
            this.fullBatch = value;
            return this;
        }

        public Builder duration(Duration value) {
            this.duration = value;
            return this;
        }

        public Builder error(TidemarkException value) {
            this.error = value;
            return this;
        }

        public Builder warning(String value) {
            this.warnings.add(value);
            return this;
        }

        public Builder diagnostics(java.util.Collection<Diagnostic> values) {
            this.diagnostics.addAll(values);
            return this;
        }

        public Builder destinations(java.util.Collection<DestinationReport> values) {
            this.destinations.clear();
            this.destinations.addAll(values);
            return this;
        }

        public ObjectReport build() {
            return new ObjectReport(this);
        }
    }
}
