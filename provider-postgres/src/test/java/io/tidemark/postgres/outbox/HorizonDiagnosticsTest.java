package io.tidemark.postgres.outbox;

import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * "Why are my changes late?": the transaction holding the horizon back is named, after the threshold, and the look-up
 * costs no query while nothing is wrong. Time is a clock the test moves; connections are counted to see queries.
 */
@EmbeddedPostgresTest
class HorizonDiagnosticsTest {

    private final TestDatabase database;

    HorizonDiagnosticsTest(TestDatabase database) {
        this.database = database;
    }

    /** A clock the test sets. */
    private static final class TestClock extends Clock {
        private volatile Instant now = Instant.parse("2026-03-01T10:00:00Z");

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }

    /** Counts the connections the provider takes: one per change-function call, one per pg_stat_activity look-up. */
    private static final class CountingDataSource {
        final AtomicInteger connections = new AtomicInteger();
        final DataSource dataSource;

        CountingDataSource(DataSource delegate) {
            this.dataSource = (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(),
                    new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                        if (method.getName().equals("getConnection")) {
                            connections.incrementAndGet();
                        }
                        try {
                            return method.invoke(delegate, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
    }

    private record Setup(OutboxTables table, SyncEngine engine, CountingDataSource counted, TestClock clock,
                         List<Diagnostic> heard) {
    }

    private Setup setup(String prefix, DataSource providerDataSource, Duration threshold, Duration checkInterval) {
        return setup(prefix, providerDataSource, threshold, checkInterval, null);
    }

    /** @param reader a role to grant what a reader needs (the table, the outbox, its state), or null */
    private Setup setup(String prefix, DataSource providerDataSource, Duration threshold, Duration checkInterval,
                        String reader) {
        OutboxTables t = OutboxTables.create(database, prefix, "id int PRIMARY KEY, name text");
        if (reader != null) {
            t.execute("GRANT SELECT ON $T, " + t.outbox.outboxTable() + ", " + t.outbox.outboxTable() + "_state TO "
                    + reader);
        }
        CountingDataSource counted = new CountingDataSource(providerDataSource);
        TestClock clock = new TestClock();
        List<Diagnostic> heard = new CopyOnWriteArrayList<>();
        SyncEngine engine = SyncEngine.builder()
                .name(prefix)
                .provider(PostgresProvider.builder(counted.dataSource).listen(false).clock(clock)
                        .horizonWarningAfter(threshold).horizonCheckInterval(checkInterval).build())
                .watermarks(InMemoryWatermarkStore.create())
                .track(t.outbox.track("Items").initialSync(InitialSync.INCREMENTAL))
                .destination("out", new RecordingDestination())
                .listener(new SyncListener() {
                    @Override
                    public void onDiagnostic(String objectName, Diagnostic diagnostic) {
                        heard.add(diagnostic);
                    }
                })
                .build();
        assertThat(engine.runOnce().get("Items").outcome()).isEqualTo(Outcome.SEEDED);
        return new Setup(t, engine, counted, clock, heard);
    }

    /** An idle-in-transaction session that took an xid, and a change committed after it. */
    private static OpenTransaction holdBack(OutboxTables t) {
        OpenTransaction holder = OpenTransaction.begin(t.dataSource());
        holder.execute("SET application_name = 'batch-import'");
        holder.takeXid();
        t.execute("INSERT INTO $T VALUES (1, 'waits')");
        return holder;
    }

    @Test
    void an_old_transaction_holding_changes_back_is_named_in_the_status_and_to_listeners() {
        Setup s = setup("held", database.dataSource(), Duration.ofMinutes(1), Duration.ofSeconds(30));
        try (SyncEngine engine = s.engine(); OpenTransaction holder = holdBack(s.table())) {
            ObjectReport young = engine.runOnce().get("Items");
            assertThat(young.outcome()).isEqualTo(Outcome.NO_CHANGES);
            assertThat(young.diagnostics()).isEmpty();

            s.clock().advance(Duration.ofSeconds(61));
            ObjectReport old = engine.runOnce().get("Items");

            assertThat(old.diagnostics()).hasSize(1);
            Diagnostic d = old.diagnostics().get(0);
            assertThat(d.severity()).isEqualTo(Diagnostic.Severity.WARNING);
            assertThat(d.code()).isEqualTo("HORIZON_HELD_BACK");
            assertThat(d.message()).contains("pid " + holder.pid(), "application 'batch-import'",
                    "state 'idle in transaction'", "open for ", "last query started ",
                    "pg_terminate_backend(" + holder.pid() + ")");
            assertThat(d.details()).containsEntry("pid", Integer.toString(holder.pid()))
                    .containsEntry("application_name", "batch-import")
                    .containsEntry("state", "idle in transaction")
                    .containsKeys("transaction_age", "query_start", "xact_start", "horizon", "database", "user");
            assertThat(engine.status("Items").diagnostics()).containsExactly(d);
            assertThat(s.heard()).containsExactly(d);

            holder.commit();
            ObjectReport after = engine.runOnce().get("Items");
            assertThat(after.outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(after.diagnostics()).isEmpty();
        }
    }

    @Test
    void nothing_is_queried_while_nothing_is_held_back() {
        Setup s = setup("healthy", database.dataSource(), Duration.ZERO, Duration.ZERO);
        try (SyncEngine engine = s.engine()) {
            int before = s.counted().connections.get();
            for (int i = 0; i < 5; i++) {
                s.table().execute("INSERT INTO $T VALUES (" + i + ", 'x')");
                s.clock().advance(Duration.ofMinutes(5));
                assertThat(engine.runOnce().get("Items").diagnostics()).isEmpty();
            }
            assertThat(s.counted().connections.get() - before).as("one connection per change-function call").isEqualTo(5);
        }
    }

    @Test
    void while_it_lasts_the_holder_is_looked_up_once_per_check_interval_and_reported_every_cycle() {
        Setup s = setup("rate", database.dataSource(), Duration.ZERO, Duration.ofMinutes(10));
        try (SyncEngine engine = s.engine(); OpenTransaction holder = holdBack(s.table())) {
            int before = s.counted().connections.get();
            List<Diagnostic.Severity> severities = new java.util.ArrayList<>();
            for (int i = 0; i < 6; i++) {
                ObjectReport report = engine.runOnce().get("Items");
                assertThat(report.diagnostics()).singleElement()
                        .satisfies(d -> assertThat(d.details()).containsEntry("pid", Integer.toString(holder.pid())));
                severities.add(report.diagnostics().get(0).severity());
                s.clock().advance(Duration.ofMinutes(3));
            }
            // Cycles at 0, 3, 6, 9, 12 and 15 minutes: look-ups at 0 and 12.
            assertThat(severities).containsExactly(Diagnostic.Severity.WARNING, Diagnostic.Severity.INFO,
                    Diagnostic.Severity.INFO, Diagnostic.Severity.INFO, Diagnostic.Severity.WARNING,
                    Diagnostic.Severity.INFO);
            assertThat(s.counted().connections.get() - before).as("6 calls and 2 look-ups").isEqualTo(8);
        }
    }

    @Test
    void below_the_threshold_nothing_is_reported_or_queried() {
        Setup s = setup("young", database.dataSource(), Duration.ofHours(1), Duration.ZERO);
        try (SyncEngine engine = s.engine(); OpenTransaction ignored = holdBack(s.table())) {
            int before = s.counted().connections.get();
            for (int i = 0; i < 3; i++) {
                s.clock().advance(Duration.ofMinutes(10));
                assertThat(engine.runOnce().get("Items").diagnostics()).isEmpty();
            }
            assertThat(s.counted().connections.get() - before).isEqualTo(3);
        }
    }

    @Test
    void a_role_that_cannot_see_other_sessions_is_told_which_grant_it_needs() {
        DataSource observer = database.createRole("horizon_observer");
        database.execute("GRANT USAGE ON SCHEMA public TO horizon_observer");
        Setup s = setup("hidden", observer, Duration.ZERO, Duration.ZERO, "horizon_observer");
        try (SyncEngine engine = s.engine(); OpenTransaction ignored = holdBack(s.table())) {
            List<Diagnostic> diagnostics = engine.runOnce().get("Items").diagnostics();

            assertThat(diagnostics).singleElement().satisfies(d -> assertThat(d.message())
                    .contains("committed changes are held back by transaction")
                    .contains("GRANT pg_read_all_stats TO horizon_observer"));
        }
    }
}
