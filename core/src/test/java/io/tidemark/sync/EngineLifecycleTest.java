package io.tidemark.sync;

import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.sync.testkit.CallGate;
import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import io.tidemark.sync.testkit.VersionedRows;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.tidemark.sync.testkit.Responses.response;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Background polling, close, pause/resume, wake and the maxRows drain loop, against a scripted provider. */
class EngineLifecycleTest {

    private static final String ITEMS = "Items";
    private static final Duration AN_HOUR = Duration.ofHours(1);

    private final ScriptedProvider provider = new ScriptedProvider();
    private final WatermarkStore store = InMemoryWatermarkStore.create();

    private static TrackedObject items() {
        return TrackedObject.of(ITEMS, "public.items_changes");
    }

    private VersionedRows rows(boolean honourMaxRows) {
        VersionedRows rows = honourMaxRows ? VersionedRows.honouringMaxRows() : VersionedRows.ignoringMaxRows();
        provider.object(ITEMS).respondWith(rows);
        return rows;
    }

    private SyncEngine.Builder engine(String name, TrackedObject object, RecordingDestination out, WatermarkStore watermarks) {
        return SyncEngine.builder()
                .name(name)
                .provider(provider)
                .watermarks(watermarks)
                .track(object)
                .destination("out", out);
    }

    @Test
    void started_and_closed_a_hundred_times_leaves_no_poller_behind() throws Exception {
        rows(true).insert(1, 3);
        for (int i = 0; i < 100; i++) {
            String name = "lifecycle-" + i;
            CountDownLatch cycled = new CountDownLatch(1);
            SyncEngine engine = engine(name, items().pollInterval(Duration.ofMillis(5)),
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
        int callsAfterClose = provider.calls(ITEMS).size();
        assertThat(callsAfterClose).isGreaterThanOrEqualTo(100);
        Thread.sleep(50);
        assertThat(pollerThreads("lifecycle-")).isEmpty();
        assertThat(provider.calls(ITEMS)).as("no call after every engine closed").hasSize(callsAfterClose);
    }

    @Test
    void an_engine_starts_once_and_is_unusable_after_close() {
        rows(true);
        SyncEngine engine = engine("once", items().pollInterval(AN_HOUR), new RecordingDestination(), store).build();
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
        CallGate held = new CallGate();
        provider.object(ITEMS).thenBlock(held, response(99, "Diff", 0));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine("slow", items(), out, store).shutdownTimeout(Duration.ofMillis(200)).build();
        engine.start();
        assertThat(held.awaitEntered(Duration.ofSeconds(30))).isTrue();

        long started = System.nanoTime();
        engine.close();

        // The held call ignores interrupts, as a JDBC call does: only the engine's cancel ends it.
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
        assertThat(held.wasCancelled()).isTrue();
        assertThat(held.finished()).isTrue();
        assertThat(pollerThreads("slow-")).isEmpty();
        assertThat(out.offered()).isZero();
        assertThat(store.load(ITEMS).map(s -> s.version()).orElse(OptionalLong.empty())).isEmpty();
        assertThat(store.load(ITEMS).orElseThrow().lastError()).get().asString().startsWith("ENGINE_STATE");
    }

    @Test
    void close_lets_a_running_delivery_finish_within_the_timeout() throws Exception {
        rows(true).insert(1, 5);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        RecordingDestination recorder = new RecordingDestination();
        SyncEngine engine = SyncEngine.builder()
                .name("graceful")
                .provider(provider)
                .watermarks(store)
                .track(items().pollInterval(AN_HOUR))
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
        assertThat(store.load(ITEMS).orElseThrow().version()).hasValue(5);
        assertThat(pollerThreads("graceful-")).isEmpty();
    }

    @Test
    void a_pause_is_stored_and_seen_by_another_engine_sharing_the_store_and_resume_delivers() {
        rows(true).insert(1, 2);
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine first = engine("pauser", items(), out, store).build();
             SyncEngine second = engine("other", items(), out, store).build()) {
            first.pause(ITEMS);

            ObjectReport report = second.runOnce().get(ITEMS);

            assertThat(report.outcome()).isEqualTo(Outcome.PAUSED);
            assertThat(second.status(ITEMS).paused()).isTrue();
            assertThat(provider.calls(ITEMS)).isEmpty();
            assertThat(out.offered()).isZero();

            second.resume(ITEMS);
            assertThat(first.runOnce().get(ITEMS).outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(out.changes()).hasSize(2);
            assertThat(first.status(ITEMS).paused()).isFalse();
        }
    }

    @Test
    void a_paused_object_is_not_polled_in_the_background() throws Exception {
        rows(true).insert(1, 2);
        RecordingDestination out = new RecordingDestination();
        CountDownLatch twoCycles = new CountDownLatch(2);
        try (SyncEngine engine = engine("paused-bg", items().pollInterval(Duration.ofMillis(10)), out, store)
                .listener(new SyncListener() {
                    @Override
                    public void onReport(ObjectReport report) {
                        if (report.outcome() == Outcome.PAUSED) {
                            twoCycles.countDown();
                        }
                    }
                }).build()) {
            engine.pause(ITEMS);
            engine.start();
            assertThat(twoCycles.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(provider.calls(ITEMS)).isEmpty();
            assertThat(out.offered()).isZero();

            engine.resume(ITEMS);
            out.awaitChanges(2, Duration.ofSeconds(30));
        }
    }

    @Test
    void a_backlog_drains_in_max_rows_steps_without_waiting_for_the_interval() throws Exception {
        rows(true).insert(1, 1000);
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = engine("drain", items().maxRows(100).pollInterval(AN_HOUR), out, store).build()) {
            engine.start();

            List<Change> changes = out.awaitChanges(1000, Duration.ofSeconds(30));

            assertThat(changes).extracting(c -> c.version().getAsLong()).isSorted().doesNotHaveDuplicates();
            assertThat(out.batches()).allSatisfy(b -> assertThat(b.changes()).hasSizeLessThanOrEqualTo(100));
            List<String> calls = provider.calls(ITEMS);
            assertThat(calls.get(0)).isEqualTo("{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true,\"maxRows\":100}");
            assertThat(calls.get(9)).isEqualTo("{\"fromVersion\":900,\"mode\":\"sync\",\"maxRows\":100}");
            assertThat(calls).hasSizeGreaterThanOrEqualTo(10);
            assertThat(provider.requests(ITEMS)).allSatisfy(r -> assertThat(r.maxRows()).hasValue(100));
        }
    }

    @Test
    void a_backlog_drains_even_when_the_function_cuts_its_calls_below_max_rows() throws Exception {
        VersionedRows rows = VersionedRows.honouringMaxRows().insert(1, 300);
        // Cuts at 60 rows (as a function that stops at a version boundary may), never reaching maxRows.
        provider.object(ITEMS).respondWith(r -> rows.apply(ChangeRequest.sync(r.fromVersion(), OptionalInt.of(60))));
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = engine("cut", items().maxRows(100).pollInterval(AN_HOUR), out, store).build()) {
            engine.start();

            out.awaitChanges(300, Duration.ofSeconds(30));

            assertThat(out.batches()).extracting(b -> b.changes().size()).containsExactly(60, 60, 60, 60, 60);
            assertThat(provider.calls(ITEMS).get(4)).isEqualTo("{\"fromVersion\":240,\"mode\":\"sync\",\"maxRows\":100}");
        }
    }

    @Test
    void a_function_that_ignores_max_rows_keeps_working() {
        rows(false).insert(1, 250);
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = engine("ignores", items().maxRows(100), out, store).build()) {
            ObjectReport report = engine.runOnce().get(ITEMS);

            assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(report.changeCount()).isEqualTo(250);
            assertThat(report.fullBatch()).isTrue();
            assertThat(engine.runOnce().get(ITEMS).outcome()).isEqualTo(Outcome.NO_CHANGES);
            assertThat(out.changes()).hasSize(250);
            assertThat(store.load(ITEMS).orElseThrow().version()).hasValue(250);
        }
    }

    @Test
    void wake_polls_at_once_instead_of_waiting_for_the_interval() throws Exception {
        VersionedRows rows = rows(true).insert(1, 1);
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = engine("wake", items().pollInterval(AN_HOUR), out, store).build()) {
            engine.start();
            out.awaitChanges(1, Duration.ofSeconds(30));
            rows.insert(2, 3);

            engine.wake(ITEMS);

            out.awaitChanges(3, Duration.ofSeconds(30));
        }
    }

    @Test
    void a_change_notification_from_the_provider_polls_at_once() throws Exception {
        VersionedRows rows = rows(true).insert(1, 1);
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = engine("notified", items().pollInterval(AN_HOUR), out, store).build()) {
            engine.start();
            out.awaitChanges(1, Duration.ofSeconds(30));
            rows.insert(2, 2);

            provider.notifyChanges(ITEMS);

            out.awaitChanges(2, Duration.ofSeconds(30));
        }
    }

    @Test
    void unknown_objects_are_named_in_the_error() {
        try (SyncEngine engine = engine("unknown", items(), new RecordingDestination(), store).build()) {
            assertThatThrownBy(() -> engine.pause("Nope")).isInstanceOf(TidemarkException.class)
                    .hasMessageContaining("'Nope'").hasMessageContaining(ITEMS)
                    .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.UNKNOWN_OBJECT);
            assertThat(provider.calls(ITEMS)).isEmpty();
        }
    }

    private static List<String> pollerThreads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .filter(n -> n.startsWith(prefix))
                .toList();
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
