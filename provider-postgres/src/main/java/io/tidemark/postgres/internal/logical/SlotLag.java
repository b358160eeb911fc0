package io.tidemark.postgres.internal.logical;

import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.internal.jdbc.Jdbc;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The log-based capture's counterpart of the outbox's horizon diagnostic: how much WAL the slot keeps because a
 * reader has not stored a watermark past it, checked at most once per interval (one query) and reported as a
 * {@value #CODE} warning naming the reader that holds it, once it exceeds the threshold. Nothing is queried in
 * between, and nothing is reported while the slot keeps up.
 */
public final class SlotLag {

    public static final String CODE = "SLOT_WAL_RETAINED";

    private final String jdbcUrl;
    private final Properties properties;
    private final String slot;
    private final long thresholdBytes;
    private final Duration interval;
    private final Clock clock;
    private Instant nextCheck = Instant.MIN;

    public SlotLag(String jdbcUrl, Properties properties, String slot, long thresholdBytes, Duration interval,
                   Clock clock) {
        this.jdbcUrl = jdbcUrl;
        this.properties = properties;
        this.slot = slot;
        this.thresholdBytes = thresholdBytes;
        this.interval = interval;
        this.clock = clock;
    }

    /** A warning when the check is due and the slot keeps more than the threshold; otherwise nothing. */
    public synchronized List<Diagnostic> diagnose(SlotReaders readers) {
        Instant now = clock.instant();
        if (now.isBefore(nextCheck)) {
            return List.of();
        }
        nextCheck = now.plus(interval);
        long retained;
        try (Connection c = DriverManager.getConnection(jdbcUrl, properties)) {
            List<Long> found = Jdbc.query(c, "SELECT (pg_catalog.pg_current_wal_lsn() - confirmed_flush_lsn)::bigint"
                    + " FROM pg_catalog.pg_replication_slots WHERE slot_name = ?"
                    + " AND database = pg_catalog.current_database()", rs -> rs.getLong(1), slot);
            if (found.isEmpty()) {
                return List.of();
            }
            retained = found.get(0);
        } catch (SQLException e) {
            return List.of(); // a diagnostic that cannot run says nothing; the cycle itself reports connection loss
        }
        if (retained <= thresholdBytes) {
            return List.of();
        }
        String holder = readers.holder();
        return List.of(new Diagnostic(Diagnostic.Severity.WARNING, CODE, "the replication slot " + slot + " keeps "
                + retained / (1024 * 1024) + " MiB of WAL on the server"
                + (holder == null ? "" : ", held by " + holder + ", whose stored watermark is the lowest of its"
                + " readers") + ": deliver (or reset) it, or the server's disk fills. See docs/operations.md,"
                + " Replication slots", Map.of("slot", slot, "retainedBytes", Long.toString(retained),
                "heldBy", holder == null ? "" : holder)));
    }
}
