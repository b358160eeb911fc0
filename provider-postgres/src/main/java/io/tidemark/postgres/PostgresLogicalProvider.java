package io.tidemark.postgres;

import io.tidemark.postgres.internal.logical.FullExport;
import io.tidemark.postgres.internal.logical.LogicalResponse;
import io.tidemark.postgres.internal.logical.LogicalSetup;
import io.tidemark.postgres.internal.logical.SlotLag;
import io.tidemark.postgres.internal.logical.SlotReaders;
import io.tidemark.postgres.internal.logical.SlotStream;
import io.tidemark.postgres.internal.logical.TableLog;
import io.tidemark.sync.CheckReport;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.sync.internal.jdbc.JdbcTarget;
import io.tidemark.sync.internal.jdbc.SqlContext;
import io.tidemark.sync.internal.jdbc.SqlErrors;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.sync.spi.WatermarkStore;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * Answers the engine from a {@link PostgresLogicalCapture}'s slot: one replication connection streams the slot with
 * {@code pgoutput} on a thread of its own, keeps each table's committed changes in memory until every object reading
 * the table has stored a watermark past them, and hands them out as a change function's answer would. No SQL runs
 * per poll: a read is a copy of what the stream already decoded, and the stream wakes the engine at each commit.
 *
 * <p><b>Versions</b> are the end positions of the transactions' commit records (WAL positions as 64-bit integers):
 * they rise in commit order, and a transaction's changes share one. The slot only ever moves to the lowest
 * watermark stored for its objects (read from the {@link WatermarkStore} every {@link Builder#acknowledgeEvery}), so
 * after a crash the server streams again from there: a change is delivered once or again, never lost. The store
 * given here must be the engine's.
 *
 * <p><b>Memory</b> is bounded by {@link Builder#maxBufferedChanges} and {@link Builder#maxBufferedBytes}: when the
 * readers fall that far behind, the stream stops reading and the server keeps the WAL instead, until they catch up
 * (checked between transactions, so the logs can pass them by one transaction). The transaction being decoded is
 * bounded by {@link Builder#maxTransactionChanges} and {@link Builder#maxTransactionBytes}: past either, its changes
 * of the table being written are let go, and that table's readers get it whole after the commit.
 *
 * <p>The stream starts at the first call or subscription and reconnects by itself after a failure (doubling waits up
 * to 30 s); while it is down, calls deliver what it had decoded, then fail with
 * {@link ErrorCode#CONNECTION_FAILED} and the reason.
 */
public final class PostgresLogicalProvider implements ChangeProvider {

    private static final String NAME = "postgres-logical";
    private static final int DEFAULT_MAX_ROWS = 10_000;
    private static final Duration CONNECT_WAIT = Duration.ofSeconds(10);

    private final PostgresLogicalCapture capture;
    private final String jdbcUrl;
    private final Properties properties;
    private final SlotReaders readers;
    private final SlotStream.Settings settings;
    private final Duration readInterval;
    private final SlotLag lag;
    private final Map<String, Optional<PgName>> tables = new ConcurrentHashMap<>();
    private volatile SlotStream stream;

    private PostgresLogicalProvider(Builder b) {
        this.capture = b.capture;
        this.jdbcUrl = b.jdbcUrl;
        this.properties = b.properties;
        this.readers = new SlotReaders(b.watermarks, capture.tableNames());
        this.readInterval = b.readInterval;
        this.lag = new SlotLag(jdbcUrl, properties, capture.slot(), b.slotLagWarning, b.slotLagCheckInterval,
                b.clock);
        this.settings = new SlotStream.Settings(jdbcUrl, properties, capture.slot(), capture.publication(),
                b.statusInterval, b.acknowledgeEvery, b.maxBufferedChanges, b.maxBufferedBytes, b.maxTransactionChanges,
                b.maxTransactionBytes);
    }

    /** A provider for {@code capture}; set how it connects and the engine's watermark store. */
    public static Builder builder(PostgresLogicalCapture capture) {
        return new Builder(capture);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void validate(TrackedObject object) {
        readers.register(object.name(), tableOf(object), sourceIdentity(object));
    }

    /**
     * Waits until this provider has read every transaction committed before the call, so that the next read answers
     * them: a read-your-writes step for tests (the contract verifier runs it before each read, see
     * {@code ProcedureContractVerifier.forProvider}) and for code that must see its own commit in the next cycle. A
     * barrier is written first: an empty transactional logical message, committed with {@code synchronous_commit =
     * on} so that the WAL before it is flushed and can be decoded; the call returns once the stream has passed it.
     * Returns at once when nothing has been read yet (the first read starts the stream at the slot).
     *
     * @throws TidemarkException {@code CONNECTION_FAILED} when the stream has not passed the barrier within
     *                           {@code timeout}, or the barrier cannot be written
     */
    public void awaitCaughtUp(Duration timeout) {
        SlotStream s = stream;
        if (s == null) {
            return;
        }
        long barrier;
        try (Connection c = DriverManager.getConnection(jdbcUrl, properties)) {
            c.setAutoCommit(true);
            Jdbc.execute(c, "SET synchronous_commit = on");
            barrier = Jdbc.query(c, "SELECT (pg_catalog.pg_logical_emit_message(true, 'tidemark.barrier', '')"
                    + " - '0/0'::pg_catalog.pg_lsn)::bigint", rs -> rs.getLong(1)).get(0);
        } catch (SQLException e) {
            throw SqlErrors.map(e, new SqlContext(null, "writing a barrier for slot " + capture.slot(),
                    JdbcTarget.withoutPassword(jdbcUrl)), "", ErrorCode.CONNECTION_FAILED);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (s.position() < barrier) {
            if (System.nanoTime() > deadline) {
                throw new TidemarkException(ErrorCode.CONNECTION_FAILED, "the replication stream of slot "
                        + capture.slot() + " did not pass the WAL position " + barrier + " within " + timeout
                        + " (it is at " + s.position() + (s.lastError() == null ? "" : "; " + s.lastError()) + ")");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    /** It holds the slot and its table's log no more: an untracked object's stored watermark would hold them forever. */
    @Override
    public void untracked(TrackedObject object) {
        readers.unregister(object.name());
    }

    @Override
    public String sourceIdentity(TrackedObject object) {
        return NAME + ":" + capture.slot() + ":" + tableOf(object).quoted();
    }

    @Override
    public List<CheckReport.Problem> check(Collection<TrackedObject> objects) {
        List<CheckReport.Problem> problems = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(jdbcUrl, properties)) {
            try {
                LogicalSetup.requireLogicalWal(c);
                try {
                    String plugin = LogicalSetup.slotPlugin(c, capture.slot());
                    if (!"pgoutput".equals(plugin)) {
                        problems.add(new CheckReport.Problem("slot " + capture.slot(), ErrorCode.SCHEMA_UNSUPPORTED,
                                plugin == null ? "the replication slot " + capture.slot() + " does not exist: run"
                                        + " PostgresLogicalCapture.install, or its script()"
                                        : "the replication slot " + capture.slot() + " uses the plugin " + plugin
                                        + ", not pgoutput"));
                    }
                } catch (TidemarkException another) {
                    // Another database's slot: reported, and the checks of the role and the publication still run.
                    problems.add(new CheckReport.Problem("slot " + capture.slot(), another.code(),
                            another.getMessage()));
                }
                if (!LogicalSetup.canReplicate(c)) {
                    problems.add(new CheckReport.Problem("slot " + capture.slot(), ErrorCode.PERMISSION_DENIED,
                            "the role " + properties.getProperty("user") + " cannot stream a replication slot:"
                                    + " ALTER ROLE ... REPLICATION"));
                }
                List<PgName> tables = new ArrayList<>();
                for (TrackedObject object : objects) {
                    tables.add(tableOf(object));
                }
                for (String problem : LogicalSetup.publicationProblems(c, capture.publication(), tables)) {
                    problems.add(new CheckReport.Problem("publication " + capture.publication(),
                            ErrorCode.SCHEMA_UNSUPPORTED, problem));
                }
                List<PgName> missing = LogicalSetup.missingFromPublication(c, capture.publication(), tables);
                if (missing == null) {
                    problems.add(new CheckReport.Problem("publication " + capture.publication(),
                            ErrorCode.SCHEMA_UNSUPPORTED, "the publication " + capture.publication()
                            + " does not exist: run PostgresLogicalCapture.install, or its script()"));
                } else {
                    for (PgName table : missing) {
                        problems.add(new CheckReport.Problem(table.quoted(), ErrorCode.SCHEMA_UNSUPPORTED,
                                "the publication " + capture.publication() + " does not publish " + table.quoted()
                                        + ": run PostgresLogicalCapture.install again"));
                    }
                }
            } catch (TidemarkException e) {
                problems.add(new CheckReport.Problem("server", e.code(), e.getMessage()));
            }
        } catch (SQLException e) {
            TidemarkException failure = SqlErrors.map(e, new SqlContext(null, "checking the logical capture "
                    + capture.slot(), JdbcTarget.withoutPassword(jdbcUrl)), "Grant the role SELECT on the catalog.",
                    ErrorCode.DATABASE_ERROR);
            problems.add(new CheckReport.Problem("server", failure.code(), failure.getMessage()));
        }
        return problems;
    }

    @Override
    public ResponsePayload invoke(TrackedObject object, ChangeRequest request, CallContext context) {
        PgName table = tableOf(object);
        SlotStream s = started(object);
        if (request.mode() == ChangeRequest.Mode.SEED) {
            long position = s.position();
            readers.seeded(object.name(), position);
            return LogicalResponse.empty(position);
        }
        if (request.initial()) {
            return export(object, table, s, 0);
        }
        long from = request.fromVersion();
        // The position first: every transaction at or below it is already in the log read next, so an answer
        // without rows can report it without passing over one.
        long position = s.position();
        TableLog.Page page;
        try {
            page = readers.log(table).read(from, request.maxRows().orElse(DEFAULT_MAX_ROWS));
        } catch (TableLog.Released released) {
            // Below what every reader of the table stored (a destination starting from the beginning), or below a
            // transaction too large to hold: those changes are gone, so the reader gets the table whole, as the
            // outbox answers a reader older than its trim.
            return export(object, table, s, released.reasonCode());
        }
        if (page.elements().isEmpty() && !page.truncate() && !s.connected() && s.lastError() != null) {
            throw TidemarkException.forObject(ErrorCode.CONNECTION_FAILED, object.name(), "the replication stream"
                    + " of slot " + capture.slot() + " is down: " + s.lastError() + ". It reconnects by itself; the"
                    + " watermark stays");
        }
        return LogicalResponse.of(page, from, position);
    }

    private ResponsePayload export(TrackedObject object, PgName table, SlotStream s, int reasonCode) {
        try {
            return FullExport.export(jdbcUrl, properties, table, s, readers.log(table),
                    position -> readers.seeded(object.name(), position), reasonCode);
        } catch (SQLException e) {
            // The hold the export took would otherwise keep the slot where it was until the next attempt.
            readers.unseeded(object.name());
            throw SqlErrors.map(e, new SqlContext(object.name(), "exporting " + table.quoted() + " whole",
                    JdbcTarget.withoutPassword(jdbcUrl)), "Grant SELECT on the table to the role.",
                    ErrorCode.PROCEDURE_FAILED);
        } catch (java.io.IOException e) {
            readers.unseeded(object.name());
            throw TidemarkException.forObject(ErrorCode.IO_FAILED, object.name(), "spooling the export of "
                    + table.quoted() + " failed: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            readers.unseeded(object.name());
            throw e;
        }
    }

    /**
     * A {@code SLOT_WAL_RETAINED} warning when the slot keeps more than {@link Builder#slotLagWarning} bytes of WAL,
     * naming the object whose stored watermark holds it; checked at most once per
     * {@link Builder#slotLagCheckInterval} (one query), nothing in between.
     */
    @Override
    public List<io.tidemark.sync.Diagnostic> diagnose(TrackedObject object, OptionalLong storedVersion) {
        return stream == null ? List.of() : lag.diagnose(readers);
    }

    @Override
    public OptionalLong currentVersion(TrackedObject object) {
        return OptionalLong.empty();
    }

    @Override
    public AutoCloseable subscribe(Collection<TrackedObject> objects, Consumer<String> wakeUp) {
        AutoCloseable subscription = readers.subscribe(objects, wakeUp, readInterval);
        if (!objects.isEmpty()) {
            started(objects.iterator().next());
        }
        return subscription;
    }

    /** The stream, started on first use; waits for its first connection so a seed has a position to report. */
    private SlotStream started(TrackedObject object) {
        SlotStream s = stream;
        if (s == null) {
            synchronized (this) {
                s = stream;
                if (s == null) {
                    s = new SlotStream(settings, readers.logs(), readers::committed, readers::acknowledged);
                    s.start();
                    stream = s;
                }
            }
        }
        long deadline = System.nanoTime() + CONNECT_WAIT.toNanos();
        while (s.position() == 0 && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        if (s.position() == 0) {
            throw TidemarkException.forObject(ErrorCode.CONNECTION_FAILED, object.name(), "the replication stream"
                    + " of slot " + capture.slot() + " did not start within " + CONNECT_WAIT.toSeconds() + " s"
                    + (s.lastError() == null ? "" : ": " + s.lastError()));
        }
        return s;
    }

    /** The object's table, parsed once per procedure text: every call and every wake-up asks. */
    private PgName tableOf(TrackedObject object) {
        PgName table = tables.computeIfAbsent(object.procedure(), p -> Optional.ofNullable(capture.tableOf(object)))
                .orElse(null);
        if (table == null) {
            throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, object.name(), "the table "
                    + object.procedure() + " is not one of the logical capture's tables " + capture.tables());
        }
        return table;
    }

    @Override
    public void close() {
        SlotStream s = stream;
        if (s != null) {
            s.close();
        }
    }

    @Override
    public String toString() {
        return "PostgresLogicalProvider[" + capture + "]";
    }

    /** Collects the settings; {@link #build()} checks them all at once. */
    public static final class Builder {

        private final PostgresLogicalCapture capture;
        private String jdbcUrl;
        private Properties properties = new Properties();
        private WatermarkStore watermarks;
        private Duration acknowledgeEvery = Duration.ofSeconds(10);
        private Duration statusInterval = Duration.ofSeconds(10);
        /** The least a limit on held changes may be, in changes and in bytes. */
        private static final int MIN_CHANGES = 1_000;
        private static final long MIN_BYTES = 1L << 20;

        private int maxBufferedChanges = 200_000;
        private long maxBufferedBytes = 256L << 20;
        private int maxTransactionChanges = 200_000;
        private long maxTransactionBytes = 128L << 20;
        private Duration readInterval = Duration.ofMillis(6);
        private long slotLagWarning = 1L << 30;
        private Duration slotLagCheckInterval = Duration.ofMinutes(1);
        private Clock clock = Clock.systemUTC();

        private Builder(PostgresLogicalCapture capture) {
            this.capture = capture;
        }

        /**
         * The server, as a JDBC URL, and a role with the {@code REPLICATION} attribute. The provider opens its
         * replication connection (and, for {@code check()}, a plain one) with these; a pool cannot lend a
         * replication connection.
         */
        public Builder connect(String jdbcUrl, String user, String password) {
            this.jdbcUrl = jdbcUrl;
            Properties p = new Properties();
            if (user != null) {
                p.setProperty("user", user);
            }
            if (password != null) {
                p.setProperty("password", password);
            }
            this.properties = p;
            return this;
        }

        /** As {@link #connect(String, String, String)}, with any pgjdbc connection properties (SSL, timeouts). */
        public Builder connect(String jdbcUrl, Properties properties) {
            this.jdbcUrl = jdbcUrl;
            this.properties = properties == null ? null : (Properties) properties.clone();
            return this;
        }

        /** The engine's watermark store: the slot moves only to the lowest watermark stored there for its objects. */
        public Builder watermarks(WatermarkStore store) {
            this.watermarks = store;
            return this;
        }

        /** How often the stored watermarks are read and the slot moved to them; default 10 s. */
        public Builder acknowledgeEvery(Duration interval) {
            this.acknowledgeEvery = interval;
            return this;
        }

        /** How often the stream reports its position to the server when nothing else is said; default 10 s. */
        public Builder statusInterval(Duration interval) {
            this.statusInterval = interval;
            return this;
        }

        /**
         * The shortest time between two reads that commits wake: the first commit after a quiet spell is read at
         * once, and the commits that follow within the interval are read together at its end. Every read ends in a
         * watermark write, so this bounds those writes under a steady flow (about 170 a second by default) for at most
         * this much delay; zero reads at every commit. Default 6 ms.
         */
        public Builder readInterval(Duration interval) {
            this.readInterval = interval;
            return this;
        }

        /** Warn ({@code SLOT_WAL_RETAINED}) when the slot keeps more WAL than this; default 1 GiB. */
        public Builder slotLagWarning(long bytes) {
            this.slotLagWarning = bytes;
            return this;
        }

        /** How often the slot's retained WAL is checked (one query); default one minute. */
        public Builder slotLagCheckInterval(Duration interval) {
            this.slotLagCheckInterval = interval;
            return this;
        }

        /** The clock the lag checks are timed by; default UTC system time. */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** The most changes kept in memory before the stream stops reading; default 200,000. */
        public Builder maxBufferedChanges(int changes) {
            this.maxBufferedChanges = changes;
            return this;
        }

        /** As {@link #maxBufferedChanges}, for the bytes of the changes' JSON; default 256 MiB, at least 1 MiB. */
        public Builder maxBufferedBytes(long bytes) {
            this.maxBufferedBytes = bytes;
            return this;
        }

        /**
         * The most changes of one transaction held in memory while it is decoded (its changes get their version, the
         * end of its commit record, only at its end); default 200,000, all tables of the transaction together. The
         * change that would be one more lets go of its table: the transaction's changes of that table are not kept,
         * and its readers get it whole after the commit (a {@code Full} answer with {@code ReasonCode}
         * {@value PostgresLogicalCapture#OVERSIZED_TRANSACTION_REASON_CODE}, as a reader behind the provider does);
         * the tables written before keep their changes. A re-export reads the whole table: raise this, with the heap,
         * where transactions that large are routine on large tables.
         */
        public Builder maxTransactionChanges(int changes) {
            this.maxTransactionChanges = changes;
            return this;
        }

        /**
         * As {@link #maxTransactionChanges}, for the heap the held changes' rows take (their values' bytes plus an
         * estimate of what surrounds them), so that wide rows are bounded too; default 128 MiB, at least 1 MiB.
         */
        public Builder maxTransactionBytes(long bytes) {
            this.maxTransactionBytes = bytes;
            return this;
        }

        public PostgresLogicalProvider build() {
            Objects.requireNonNull(capture, "capture");
            if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql:")) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "the logical provider needs a"
                        + " jdbc:postgresql: URL to connect to, got " + jdbcUrl + ": connect(url, user, password)");
            }
            if (properties == null) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "the connection properties are null");
            }
            if (watermarks == null) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "the logical provider needs the"
                        + " engine's watermark store, to move the slot only past what every reader stored:"
                        + " watermarks(store)");
            }
            requirePositive(acknowledgeEvery, "acknowledgeEvery");
            requirePositive(statusInterval, "statusInterval");
            requirePositive(slotLagCheckInterval, "slotLagCheckInterval");
            if (slotLagWarning < 0 || clock == null) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "slotLagWarning must be zero or more"
                        + " bytes and the clock set, got " + slotLagWarning + " and " + clock);
            }
            if (readInterval == null || readInterval.isNegative()) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "readInterval must be zero or positive,"
                        + " got " + readInterval);
            }
            if (maxBufferedChanges < MIN_CHANGES) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "maxBufferedChanges must be at least"
                        + " 1,000, got " + maxBufferedChanges);
            }
            if (maxBufferedBytes < MIN_BYTES) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "maxBufferedBytes must be at least"
                        + " 1 MiB, got " + maxBufferedBytes);
            }
            if (maxTransactionChanges < MIN_CHANGES || maxTransactionBytes < MIN_BYTES) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "maxTransactionChanges must be at least"
                        + " 1,000 and maxTransactionBytes at least 1 MiB, got " + maxTransactionChanges + " and "
                        + maxTransactionBytes);
            }
            return new PostgresLogicalProvider(this);
        }

        private static void requirePositive(Duration d, String what) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, what + " must be a positive duration,"
                        + " got " + d);
            }
        }
    }
}
