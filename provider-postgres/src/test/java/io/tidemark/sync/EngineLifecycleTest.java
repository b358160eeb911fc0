package io.tidemark.sync;

import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Background polling, close, pause/resume and the maxRows drain loop, against real change functions. */
@EmbeddedPostgresTest
class EngineLifecycleTest {

    private static final AtomicInteger FUNCTIONS = new AtomicInteger();
    private static final Duration AN_HOUR = Duration.ofHours(1);

    private final TestDatabase database;
    private final JdbcWatermarkStore store;

    EngineLifecycleTest(TestDatabase database) {
        this.database = database;
        this.store = JdbcWatermarkStore.create(database.dataSource());
    }

    private RowsFunction rows(boolean honourMaxRows) {
        return RowsFunction.create(database, "life_fn_" + FUNCTIONS.incrementAndGet(), honourMaxRows);
    }

    private SyncEngine.Builder engine(String name, TrackedObject object, RecordingDestination out, WatermarkStore watermarks) {
        return SyncEngine.builder()
                .name(name)
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(watermarks)
                .track(object)
                .destination("out", out);
    }

    @Test
    void started_and_closed_a_hundred_times_leaves_no_poller_behind() throws Exception {
        RowsFunction fn = rows(true).insert(1, 3);
        for (int i = 0; i < 100; i++) {
            String name = "lifecycle-" + i;
            CountDownLatch cycled = new CountDownLatch(1);
            SyncEngine engine = engine(name, TrackedObject.of(fn.name(), fn.name()).pollInterval(Duration.ofMillis(5)),
                    new RecordingDestination(), InMemoryWatermarkStore.create())
                    .listener(new SyncListener() {
                        @Override
                        public void onReport(ObjectReport report) {
                            cycled.countDown();
                        }
                    })
                    .build();
            engine.start();
            assertThat(cycled.await(30, TimeUnit.SECONDS)).as("a cycle ran in engine %s", name).isTrue();
            engine.close();

            assertThat(pollerThreads(name + "-")).as("poller threads of %s after close", name).isEmpty();
        }
        int callsAfterClose = fn.calls().size();
        assertThat(pollerThreads("lifecycle-")).isEmpty();
        assertThat(fn.calls()).hasSize(callsAfterClose);
    }

    @Test
    void an_engine_starts_once_and_is_unusable_after_close() {
        RowsFunction fn = rows(true);
        SyncEngine engine = engine("once", TrackedObject.of(fn.name(), fn.name()).pollInterval(AN_HOUR),
                new RecordingDestination(), store).build();
        engine.start();
        assertThatThrownBy(engine::start).isInstanceOf(TidemarkException.class)
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.ENGINE_STATE);
        engine.close();
        engine.close();
        assertThatThrownBy(engine::runOnce).isInstanceOf(TidemarkException.class).hasMessageContaining("closed");
        assertThatThrownBy(engine::start).isInstanceOf(TidemarkException.class).hasMessageContaining("closed");
        assertThat(pollerThreads("once-")).isEmpty();
    }

    @Test
    void close_cancels_a_call_that_outlives_the_shutdown_timeout_and_keeps_the_watermark() throws Exception {
        database.execute("CREATE FUNCTION public.slow_changes(payload json) RETURNS json LANGUAGE sql AS $$"
                + " SELECT json_build_object('Metadata', json_build_object('Sync', json_build_object('Version', 99 + 0 * extract(epoch FROM clock_timestamp()) + 0 * length(pg_sleep(300)::text)))) $$");
        WatermarkStore watermarks = InMemoryWatermarkStore.create();
        SyncEngine engine = engine("slow", TrackedObject.of("slow", "public.slow_changes"), new RecordingDestination(), watermarks)
                .shutdownTimeout(Duration.ofMillis(200))
                .build();
        engine.start();
        awaitActiveQuery("slow_changes");

        long started = System.nanoTime();
        engine.close();

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
        assertThat(pollerThreads("slow-")).isEmpty();
        assertThat(watermarks.load("slow").map(s -> s.version()).orElse(OptionalLong.empty())).isEmpty();
        awaitNoActiveQuery("slow_changes");
    }

    @Test
    void close_lets_a_running_delivery_finish_within_the_timeout() throws Exception {
        RowsFunction fn = rows(true).insert(1, 5);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        RecordingDestination recorder = new RecordingDestination();
        SyncEngine engine = SyncEngine.builder()
                .name("graceful")
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(store)
                .track(TrackedObject.of(fn.name(), fn.name()).pollInterval(AN_HOUR))
                .destination("slow", batch -> {
                    entered.countDown();
                    release.await();
                    recorder.deliver(batch);
                })
                .build();
        engine.start();
        assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
        Thread closer = new Thread(engine::close, "closer");
        closer.start();
        awaitState(closer, Thread.State.TIMED_WAITING);

        release.countDown();
        closer.join(30_000);

        assertThat(closer.isAlive()).isFalse();
        assertThat(recorder.changes()).hasSize(5);
        assertThat(store.load(fn.name()).orElseThrow().version()).hasValue(5);
        assertThat(pollerThreads("graceful-")).isEmpty();
    }

    @Test
    void a_pause_is_stored_and_seen_by_another_engine_and_resume_delivers() {
        RowsFunction fn = rows(true).insert(1, 2);
        TrackedObject object = TrackedObject.of(fn.name(), fn.name());
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine first = engine("pauser", object, out, store).build();
             SyncEngine second = engine("other", object, out, JdbcWatermarkStore.create(database.dataSource())).build()) {
            first.pause(fn.name());

            ObjectReport report = second.runOnce().get(fn.name());

            assertThat(report.outcome()).isEqualTo(Outcome.PAUSED);
            assertThat(second.status(fn.name()).paused()).isTrue();
            assertThat(fn.calls()).isEmpty();
            assertThat(out.offered()).isZero();

            second.resume(fn.name());
            assertThat(first.runOnce().get(fn.name()).outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(out.changes()).hasSize(2);
            assertThat(first.status(fn.name()).paused()).isFalse();
        }
    }

    @Test
    void a_paused_object_is_not_polled_in_the_background() throws Exception {
        RowsFunction fn = rows(true).insert(1, 2);
        RecordingDestination out = new RecordingDestination();
        CountDownLatch twoCycles = new CountDownLatch(2);
        try (SyncEngine engine = engine("paused-bg", TrackedObject.of(fn.name(), fn.name()).pollInterval(Duration.ofMillis(10)),
                out, store).listener(new SyncListener() {
                    @Override
                    public void onReport(ObjectReport report) {
                        if (report.outcome() == Outcome.PAUSED) {
                            twoCycles.countDown();
                        }
                    }
                }).build()) {
            engine.pause(fn.name());
            engine.start();
            assertThat(twoCycles.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(fn.calls()).isEmpty();

            engine.resume(fn.name());
            out.awaitChanges(2, Duration.ofSeconds(30));
        }
    }

    @Test
    void a_backlog_drains_in_max_rows_steps_without_waiting_for_the_interval() throws Exception {
        RowsFunction fn = rows(true).insert(1, 1000);
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = engine("drain", TrackedObject.of(fn.name(), fn.name()).maxRows(100).pollInterval(AN_HOUR),
                out, store).build()) {
            engine.start();

            List<Change> changes = out.awaitChanges(1000, Duration.ofSeconds(60));

            assertThat(changes).extracting(c -> c.version().getAsLong()).isSorted().doesNotHaveDuplicates();
            assertThat(out.batches()).allSatisfy(b -> assertThat(b.changes()).hasSizeLessThanOrEqualTo(100));
            List<String> calls = fn.calls();
            assertThat(calls.get(0)).isEqualTo("{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true,\"maxRows\":100}");
            assertThat(calls.get(9)).isEqualTo("{\"fromVersion\":900,\"mode\":\"sync\",\"maxRows\":100}");
            assertThat(calls).hasSizeGreaterThanOrEqualTo(10);
        }
    }

    @Test
    void a_function_that_ignores_max_rows_keeps_working() {
        RowsFunction fn = rows(false).insert(1, 250);
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = engine("ignores", TrackedObject.of(fn.name(), fn.name()).maxRows(100), out, store).build()) {
            ObjectReport report = engine.runOnce().get(fn.name());

            assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(report.changeCount()).isEqualTo(250);
            assertThat(report.fullBatch()).isTrue();
            assertThat(engine.runOnce().get(fn.name()).outcome()).isEqualTo(Outcome.NO_CHANGES);
            assertThat(out.changes()).hasSize(250);
        }
    }

    @Test
    void wake_polls_at_once_instead_of_waiting_for_the_interval() throws Exception {
        RowsFunction fn = rows(true).insert(1, 1);
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = engine("wake", TrackedObject.of(fn.name(), fn.name()).pollInterval(AN_HOUR), out, store).build()) {
            engine.start();
            out.awaitChanges(1, Duration.ofSeconds(30));
            fn.insert(2, 3);

            engine.wake(fn.name());

            out.awaitChanges(3, Duration.ofSeconds(30));
        }
    }

    @Test
    void unknown_objects_are_named_in_the_error() {
        RowsFunction fn = rows(true);
        try (SyncEngine engine = engine("unknown", TrackedObject.of(fn.name(), fn.name()), new RecordingDestination(), store).build()) {
            assertThatThrownBy(() -> engine.pause("Nope")).isInstanceOf(TidemarkException.class)
                    .hasMessageContaining("'Nope'").hasMessageContaining(fn.name())
                    .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.UNKNOWN_OBJECT);
        }
    }

    private static List<String> pollerThreads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .filter(n -> n.startsWith(prefix))
                .toList();
    }

    private void awaitActiveQuery(String fragment) throws Exception {
        awaitQueryCount(fragment, true);
    }

    private void awaitNoActiveQuery(String fragment) throws Exception {
        awaitQueryCount(fragment, false);
    }

    /** Polls pg_stat_activity (the database's own view of what runs) until the query is active, or not. */
    private void awaitQueryCount(String fragment, boolean active) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try (Connection c = database.dataSource().getConnection();
             PreparedStatement s = c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE state = 'active'"
                     + " AND query LIKE '%' || ? || '%' AND pid <> pg_backend_pid()")) {
            s.setString(1, fragment);
            while (true) {
                try (ResultSet rs = s.executeQuery()) {
                    rs.next();
                    if ((rs.getInt(1) > 0) == active) {
                        return;
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("query " + fragment + (active ? " never became active" : " is still active"));
                }
            }
        }
    }

    private static void awaitState(Thread thread, Thread.State state) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (thread.getState() != state) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(thread.getName() + " never reached " + state + ", is " + thread.getState());
            }
            Thread.onSpinWait();
        }
    }
}
