package io.tidemark.postgres.outage;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.SyncListener;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One engine runs throughout while the database under it is stopped (fast shutdown) and crashed (postmaster
 * SIGKILLed, crash recovery on restart), at random moments during a stream of writes: nothing is lost, no watermark
 * goes down, and the first change committed after the database is back is delivered within a second.
 *
 * <p>The suite runs {@value #SUITE_OUTAGES} outages of 1 to 2 s per configuration. The full run, 10 outages of 1 to
 * 10 s each per configuration, and one three-minute outage, is {@code -Dtidemark.outages.full=true} (about fifteen
 * minutes):
 * {@code mvn -B -o -pl provider-postgres -am verify -Dtest=OutageRecoveryTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dtidemark.outages.full=true}.
 */
class OutageRecoveryTest {

    private static final Logger LOG = LoggerFactory.getLogger(OutageRecoveryTest.class);
    static final String FULL_RUN_PROPERTY = "tidemark.outages.full";
    static final String BACK_TO_BACK_PROPERTY = "tidemark.outages.backToBack";
    private static final int SUITE_OUTAGES = 4;
    private static final Duration TARGET = Duration.ofSeconds(1);
    /**
     * Behind HikariCP the pool decides when a connection is opened again: after repeated failures it waits up to 5 s
     * between attempts (hard-wired in HikariCP), so the engine can only be as quick as the pool's next attempt.
     * The suite leaves more than that between outages. With {@code -D}{@value #BACK_TO_BACK_PROPERTY}{@code =true}
     * the pooled run spaces its outages like the others (0.3 to 1.5 s up between them), which shows the pool missing
     * whole windows: measured, it fails this target by far (see docs/operations.md).
     */
    private static final Duration POOLED_TARGET = Duration.ofSeconds(8);
    private static final AtomicInteger DATABASES = new AtomicInteger();

    private static RestartableServer server;

    @BeforeAll
    static void startServer() {
        server = RestartableServer.create();
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @ParameterizedTest(name = "listen={0}, poll interval {1} ms, HikariCP={2}")
    @CsvSource({
            "true, 30000, false",   // the defaults: LISTEN, a 30 s interval, a plain data source
            "false, 200, false",    // no LISTEN: the probe alone brings failing objects back
            "true, 30000, true",    // behind HikariCP, whose pooled connections go stale across a restart
    })
    void the_engine_rides_out_fast_shutdowns_and_crashes(boolean listen, long intervalMillis, boolean pooled)
            throws Exception {
        boolean full = Boolean.getBoolean(FULL_RUN_PROPERTY);
        run(listen, intervalMillis, pooled, full ? 10 : SUITE_OUTAGES, 1000, full ? 10_000 : 2000);
    }

    /**
     * One long outage (three minutes, a crash) under the default configuration: by then a failing object's backoff
     * has grown to minutes, and the engine still resumes within a second. Full run only (it takes four minutes).
     */
    @org.junit.jupiter.api.Test
    void one_long_outage() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Boolean.getBoolean(FULL_RUN_PROPERTY),
                "a three-minute outage runs with -D" + FULL_RUN_PROPERTY + "=true");
        run(true, 30_000, false, 1, 180_000, 180_000);
    }

    private void run(boolean listen, long intervalMillis, boolean pooled, int outages, long minDown, long maxDown)
            throws Exception {
        String database = "outage_" + DATABASES.incrementAndGet();
        server.createDatabase(database);
        DataSource ds = server.dataSource(database);
        com.zaxxer.hikari.HikariDataSource pool = pooled ? BlackholeTest.pool(server.dataSource(database)) : null;
        DataSource engineDs = pooled ? pool : ds;
        execute(ds, "CREATE TABLE public.items (id bigint PRIMARY KEY, note text NOT NULL)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.items").build();
        outbox.install(ds);

        Deliveries deliveries = new Deliveries();
        Versions versions = new Versions();
        SyncEngine engine = SyncEngine.builder()
                .name("outage")
                .provider(PostgresProvider.builder(engineDs).listen(listen).build())
                .watermarks(JdbcWatermarkStore.create(engineDs))
                .track(outbox.track("Items").initialSync(InitialSync.FULL)
                        .pollInterval(Duration.ofMillis(intervalMillis)))
                .destination("out", deliveries::deliver)
                .listener(versions)
                .build();
        Writer writer = new Writer(ds);
        List<Long> readyAt = new ArrayList<>();
        Random random = new Random(intervalMillis * 31 + (listen ? 1 : 0) + (pooled ? 2 : 0));
        try (engine) {
            engine.start();
            writer.start();
            for (int i = 0; i < outages; i++) {
                // A random moment in the stream of writes. Behind HikariCP, long enough after the last return for the
                // pool's own reconnect backoff (up to 5 s) to have let it open connections again: otherwise what is
                // measured is the pool, not the engine.
                Thread.sleep((pooled && !Boolean.getBoolean(BACK_TO_BACK_PROPERTY) ? 6000 : 300) + random.nextInt(1200));
                boolean crash = i % 2 == 1 || outages == 1;
                long down = minDown + (long) random.nextInt((int) (maxDown - minDown + 1));
                LOG.info("Outage {} of {}: {} for {} ms", i + 1, outages, crash ? "crash (SIGKILL)" : "fast shutdown",
                        down);
                if (crash) {
                    server.crash();
                } else {
                    server.stopFast();
                }
                Thread.sleep(down);
                server.start();
                readyAt.add(System.nanoTime());
            }
            Thread.sleep(1500);
            writer.stop();

            Set<Long> written = ids(ds);
            assertThat(written).as("rows written during the run").hasSizeGreaterThan(outages * 10);
            deliveries.awaitAll(written, Duration.ofSeconds(60));
        } finally {
            if (pool != null) {
                pool.close();
            }
        }

        assertThat(deliveries.ids()).as("every committed row was delivered").containsAll(ids(ds));
        assertThat(versions.problems).as("watermark regressions").isEmpty();

        List<Long> recoveries = new ArrayList<>();
        for (int i = 0; i < readyAt.size(); i++) {
            long from = readyAt.get(i);
            long until = i + 1 < readyAt.size() ? readyAt.get(i + 1) : Long.MAX_VALUE;
            Map.Entry<Long, Long> first = writer.firstCommitBetween(from, until);
            assertThat(first).as("a commit after outage " + (i + 1)).isNotNull();
            Long delivered = deliveries.at(first.getKey());
            assertThat(delivered).as("delivery of row " + first.getKey()).isNotNull();
            recoveries.add(Math.max(0, delivered - first.getValue()) / 1_000_000);
        }
        List<Long> sorted = new ArrayList<>(recoveries);
        Collections.sort(sorted);
        long p50 = percentile(sorted, 50);
        long p99 = percentile(sorted, 99);
        LOG.info("Recovery (first commit after the database returned, until delivered), listen={}, interval {} ms,"
                        + " HikariCP={}, {} outages: p50 {} ms, p99 {} ms, max {} ms; all: {}", listen, intervalMillis,
                pooled,
                recoveries.size(), p50, p99, sorted.get(sorted.size() - 1), recoveries);
        assertThat(p99).as("recovery p99 in ms, " + recoveries)
                .isLessThanOrEqualTo((pooled ? POOLED_TARGET : TARGET).toMillis());
    }

    private static long percentile(List<Long> sorted, int p) {
        int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    static void execute(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    static Set<Long> ids(DataSource ds) throws SQLException {
        return ids(ds, "public.items");
    }

    static Set<Long> ids(DataSource ds, String table) throws SQLException {
        Set<Long> ids = new TreeSet<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id FROM " + table)) {
            while (rs.next()) {
                ids.add(rs.getLong(1));
            }
        }
        return ids;
    }

    /** Records when each row was first delivered. */
    static final class Deliveries {
        private final Map<Long, Long> firstDelivered = new ConcurrentHashMap<>();

        void deliver(ChangeBatch batch) {
            long now = System.nanoTime();
            batch.changes().forEach(c -> firstDelivered.putIfAbsent(c.field("id").orElseThrow().asLong(), now));
        }

        Long at(long id) {
            return firstDelivered.get(id);
        }

        Set<Long> ids() {
            return new TreeSet<>(firstDelivered.keySet());
        }

        void awaitAll(Set<Long> ids, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!firstDelivered.keySet().containsAll(ids) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
        }
    }

    /** Every report's versions: the watermark never goes down, and no cycle reports a regression. */
    static final class Versions implements SyncListener {
        final List<String> problems = Collections.synchronizedList(new ArrayList<>());
        private long highest = Long.MIN_VALUE;

        @Override
        public synchronized void onReport(ObjectReport report) {
            report.error().filter(e -> e.code() == ErrorCode.WATERMARK_REGRESSION)
                    .ifPresent(e -> problems.add(e.getMessage()));
            if (report.toVersion().isPresent()) {
                long version = report.toVersion().getAsLong();
                if (version < highest) {
                    problems.add("version " + version + " after " + highest);
                }
                highest = Math.max(highest, version);
            }
        }
    }

    /**
     * Inserts a row every 20 ms on its own connection, reconnecting after a failure, and records when each commit
     * returned. A row whose commit failed may or may not be in the table: the table is the truth at the end.
     */
    static final class Writer {
        private final DataSource ds;
        private final String table;
        private final Map<Long, Long> committed = new ConcurrentHashMap<>();
        private volatile boolean stopped;
        private Thread thread;

        Writer(DataSource ds) {
            this(ds, "public.items");
        }

        Writer(DataSource ds, String table) {
            this.ds = ds;
            this.table = table;
        }

        void start() {
            thread = new Thread(this::run, "outage-writer");
            thread.setDaemon(true);
            thread.start();
        }

        void stop() throws InterruptedException {
            stopped = true;
            thread.join(30_000);
        }

        /** The first row whose commit returned in [from, until), with that time. */
        Map.Entry<Long, Long> firstCommitBetween(long from, long until) {
            return committed.entrySet().stream()
                    .filter(e -> e.getValue() >= from && e.getValue() < until)
                    .min(Map.Entry.comparingByValue())
                    .orElse(null);
        }

        private void run() {
            long next = 1;
            Connection c = null;
            while (!stopped) {
                try {
                    if (c == null) {
                        c = ds.getConnection();
                    }
                    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " VALUES (?, 'row')")) {
                        ps.setLong(1, next);
                        ps.executeUpdate();
                    }
                    committed.put(next, System.nanoTime());
                } catch (SQLException e) {
                    close(c);
                    c = null;
                }
                next++;
                sleep();
            }
            close(c);
        }

        private static void close(Connection c) {
            if (c != null) {
                try {
                    c.close();
                } catch (SQLException ignored) {
                    // a broken connection
                }
            }
        }

        private static void sleep() {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
