package io.tidemark.postgres.outage;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.tidemark.postgres.ActiveQueries;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.jdbc.ConnectionWatchdog;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A connection that stops answering without closing (a TCP proxy that blackholes, as a partition or a dead load
 * balancer does): the engine notices within its timeouts, fails the cycle as CONNECTION_FAILED, and recovers with
 * nothing lost when traffic flows again.
 */
@EmbeddedPostgresTest
class BlackholeTest {

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration SLACK = Duration.ofSeconds(3);
    /** The JDBC stores' statement timeout (JdbcStoreSupport.STATEMENT_TIMEOUT, not exported to this module). */
    private static final Duration STORE_STATEMENT_TIMEOUT = Duration.ofSeconds(10);

    private final TestDatabase database;

    BlackholeTest(TestDatabase database) {
        this.database = database;
    }

    private PGSimpleDataSource through(BlackholeProxy proxy) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setServerNames(new String[] {"127.0.0.1"});
        ds.setPortNumbers(new int[] {proxy.port()});
        ds.setDatabaseName(database.name());
        ds.setUser("postgres");
        ds.setConnectTimeout(2);
        ds.setLoginTimeout(2);
        ds.setTcpKeepAlive(true);
        // How long a statement timeout's cancel request may wait (default 10 s); the call it cancels waits for it.
        ds.setCancelSignalTimeout(1);
        return ds;
    }

    @Test
    void a_call_whose_connection_stops_answering_is_abandoned_after_the_command_timeout_and_retried()
            throws Exception {
        database.execute("""
                CREATE FUNCTION public.slow_changes(payload json) RETURNS json LANGUAGE sql AS $$
                  SELECT pg_sleep(0.6);
                  SELECT '{"Metadata":{"Sync":{"Version":5,"Type":"Full","ReasonCode":0}},"Data":[]}'::json
                $$""");
        try (BlackholeProxy proxy = new BlackholeProxy(database.port());
             SyncEngine engine = SyncEngine.builder()
                     .provider(PostgresProvider.builder(through(proxy)).commandTimeout(COMMAND_TIMEOUT)
                             .listen(false).build())
                     .watermarks(InMemoryWatermarkStore.create())
                     .track(TrackedObject.of("Slow", "public.slow_changes"))
                     .destination("out", new RecordingDestination())
                     .build()) {
            CompletableFuture<ObjectReport> cycle = CompletableFuture.supplyAsync(() -> engine.runOnce("Slow"));
            ActiveQueries.await(database.dataSource(), "slow_changes", true); // in flight, the server sleeping
            proxy.blackhole();
            ObjectReport failed = cycle.get(30, TimeUnit.SECONDS);

            assertThat(failed.outcome()).isEqualTo(Outcome.FAILED);
            assertThat(failed.error().orElseThrow().code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
            assertThat(failed.error().orElseThrow().getMessage()).contains("stopped answering", "abandoned");
            assertThat(failed.duration()).as("noticed within the command timeout plus the watchdog's grace")
                    .isLessThanOrEqualTo(COMMAND_TIMEOUT.plus(ConnectionWatchdog.GRACE).plus(SLACK));

            proxy.resume();
            assertThat(engine.runOnce("Slow").isSuccess()).as("after the network is back").isTrue();
        }
    }

    @Test
    void an_engine_behind_a_pool_rides_out_a_blackhole_with_nothing_lost() throws Exception {
        database.execute("CREATE TABLE public.bh_items (id bigint PRIMARY KEY, note text NOT NULL)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.bh_items").build();
        outbox.install(database.dataSource());
        List<ObjectReport> reports = new CopyOnWriteArrayList<>();
        OutageRecoveryTest.Deliveries deliveries = new OutageRecoveryTest.Deliveries();

        try (BlackholeProxy proxy = new BlackholeProxy(database.port());
             HikariDataSource pool = pool(through(proxy))) {
            SyncEngine engine = SyncEngine.builder()
                    .name("blackhole")
                    .provider(PostgresProvider.builder(pool).commandTimeout(COMMAND_TIMEOUT).build())
                    .watermarks(JdbcWatermarkStore.create(pool))
                    .track(outbox.track("Items").initialSync(InitialSync.FULL).pollInterval(Duration.ofMillis(100)))
                    .destination("out", deliveries::deliver)
                    .listener(new SyncListener() {
                        @Override
                        public void onReport(ObjectReport report) {
                            reports.add(report);
                        }
                    })
                    .build();
            OutageRecoveryTest.Writer writer = new OutageRecoveryTest.Writer(database.dataSource(), "public.bh_items");
            try (engine) {
                engine.start();
                writer.start();
                Thread.sleep(1500);
                proxy.blackhole();
                Thread.sleep(15_000);
                proxy.resume();
                Thread.sleep(2000);
                writer.stop();
                Set<Long> written = OutageRecoveryTest.ids(database.dataSource(), "public.bh_items");
                deliveries.awaitAll(written, Duration.ofSeconds(30));
                assertThat(deliveries.ids()).as("every committed row delivered").containsAll(written);
            }
        }

        List<ObjectReport> failed = reports.stream().filter(r -> !r.isSuccess()).toList();
        assertThat(failed).as("cycles that met the blackhole").isNotEmpty();
        assertThat(failed).allSatisfy(r -> {
            assertThat(r.error().orElseThrow().code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
            assertThat(r.duration()).as("noticed within the store's statement timeout plus the grace: " + r)
                    .isLessThanOrEqualTo(STORE_STATEMENT_TIMEOUT.plus(ConnectionWatchdog.GRACE)
                            .plus(SLACK));
        });
    }

    /** HikariCP as an application would configure it: short waits for a connection, a driver that bounds logins. */
    static HikariDataSource pool(PGSimpleDataSource driver) {
        HikariConfig config = new HikariConfig();
        config.setDataSource(driver);
        config.setMaximumPoolSize(4);
        config.setConnectionTimeout(2000);
        config.setValidationTimeout(1000);
        config.setInitializationFailTimeout(-1);
        config.setPoolName("tidemark-test");
        return new HikariDataSource(config);
    }
}
