package io.tidemark.sync;

import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.config.Defaults;
import io.tidemark.sync.internal.coordination.MonotonicClock;

import java.net.InetAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.UUID;

/**
 * Running one engine configuration on several instances of an application: each tracked object is processed by
 * at most one instance at a time, the objects are spread over the live instances, and a dead instance's objects
 * are taken over by the others. Given to {@link SyncEngine.Builder#coordination(Coordination)}.
 *
 * <p>Each object has a lease row next to the watermarks (in the {@link JdbcWatermarkStore}'s schema): a holder,
 * an epoch raised at every change of holder, and an expiry on the database's clock. Every write a holder makes
 * (a watermark, a destination position, a dead letter) checks the holder and the epoch in the same transaction,
 * so an instance that lost its lease (paused, partitioned) changes nothing after it. See the README section
 * "Running on several instances".
 *
 * <pre>{@code
 * Coordination coordination = Coordination.builder().leaseDuration(Duration.ofSeconds(15)).build();
 * }</pre>
 */
public final class Coordination {

    /** The longest instance id the lease tables hold. */
    static final int MAX_INSTANCE_ID_LENGTH = 200;

    private final Duration leaseDuration;
    private final String instanceId;
    private final Clock clock;

    private Coordination(Duration leaseDuration, String instanceId, Clock clock) {
        this.leaseDuration = leaseDuration;
        this.instanceId = instanceId;
        this.clock = clock;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Coordination with every default: 15 s leases, an instance id from the host, the process id and a random part. */
    public static Coordination create() {
        return builder().build();
    }

    /** How long a lease lasts without renewal, on the database's clock. */
    public Duration leaseDuration() {
        return leaseDuration;
    }

    /** How often a holder renews its leases and rebalances: a third of the lease duration. */
    public Duration renewInterval() {
        return leaseDuration.dividedBy(3);
    }

    /**
     * How long before its lease could expire a holder stops delivering: a fifth of the lease duration. Covers the
     * time a renewal takes to reach the database and the drift of the local clock against the database's.
     */
    public Duration safetyMargin() {
        return leaseDuration.dividedBy(5);
    }

    /** This instance's name in the lease tables and in the status of each object. */
    public String instanceId() {
        return instanceId;
    }

    /** The clock of the local lease deadlines (elapsed time only; expiry itself is the database's). */
    public Clock clock() {
        return clock;
    }

    @Override
    public String toString() {
        return "Coordination[instance=" + instanceId + ", lease=" + leaseDuration + "]";
    }

    /** Configures {@link Coordination}; setters only store, {@link #build()} checks everything. */
    public static final class Builder {
        private Duration leaseDuration = Defaults.LEASE_DURATION;
        private String instanceId;
        private Clock clock;

        private Builder() {
        }

        /**
         * How long a lease lasts without renewal; default 15 s, at least 1 s. A dead instance's objects are taken
         * over within this plus one renewal interval (a third of it).
         */
        public Builder leaseDuration(Duration duration) {
            this.leaseDuration = duration;
            return this;
        }

        /**
         * This instance's id: unique among the instances sharing the store; default the host name, the process id
         * and a random part. At most 200 characters.
         */
        public Builder instanceId(String instanceId) {
            this.instanceId = instanceId;
            return this;
        }

        /**
         * The clock that measures how long ago a lease was renewed; default a monotonic clock (not moved by
         * changes of the wall clock). For tests.
         */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        public Coordination build() {
            Checks checks = Checks.of("Coordination");
            if (checks.notNull("leaseDuration", leaseDuration)) {
                checks.that(leaseDuration.compareTo(Duration.ofSeconds(1)) >= 0,
                        "leaseDuration must be at least 1 s, got " + leaseDuration);
            }
            if (instanceId != null) {
                checks.notBlank("instanceId", instanceId);
                checks.that(instanceId.length() <= MAX_INSTANCE_ID_LENGTH, "instanceId must be at most "
                        + MAX_INSTANCE_ID_LENGTH + " characters, got " + instanceId.length());
            }
            checks.throwIfAny();
            return new Coordination(leaseDuration, instanceId == null ? defaultInstanceId() : instanceId,
                    clock == null ? new MonotonicClock() : clock);
        }

        private static String defaultInstanceId() {
            String host;
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (Exception e) {
                host = "host";
            }
            String id = host + "-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
            return id.length() <= MAX_INSTANCE_ID_LENGTH ? id : id.substring(id.length() - MAX_INSTANCE_ID_LENGTH);
        }
    }
}
