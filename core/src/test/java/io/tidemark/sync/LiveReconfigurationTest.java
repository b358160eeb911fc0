package io.tidemark.sync;

import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.DestinationPosition;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.sync.testkit.CallGate;
import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import io.tidemark.sync.testkit.VersionedRows;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.tidemark.sync.testkit.Responses.response;
import static io.tidemark.sync.testkit.Responses.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Live reconfiguration: objects tracked, changed and untracked, destinations added, replaced and removed on a
 * running engine; validated as build() validates; never two overlapping calls of one object's procedure; never a
 * page offered twice to a destination that accepted it; an untracked object's watermark kept.
 */
class LiveReconfigurationTest {

    private static final String ITEMS = "Items";
    private static final String ORDERS = "Orders";

    private final ScriptedProvider scripted = new ScriptedProvider();
    private final OverlapCheckingProvider provider = new OverlapCheckingProvider(scripted);
    private final WatermarkStore store = InMemoryWatermarkStore.create();
    private final VersionedRows items = VersionedRows.ignoringMaxRows();
    private final VersionedRows orders = VersionedRows.honouringMaxRows();
    private final RecordingDestination audit = new RecordingDestination();
    private final List<SyncEngine> engines = new ArrayList<>();

    LiveReconfigurationTest() {
        scripted.object(ITEMS).respondWith(items);
        scripted.object(ORDERS).respondWith(orders);
    }

    @AfterEach
    void close() {
        engines.forEach(SyncEngine::close);
    }

    private SyncEngine engine() {
        SyncEngine engine = SyncEngine.builder().provider(provider).watermarks(store)
                .track(TrackedObject.of(ITEMS, "public.items_changes")).destination("audit", audit)
                .pollInterval(Duration.ofMillis(20)).build();
        engines.add(engine);
        return engine;
    }

    private static boolean until(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    private static List<Long> versions(RecordingDestination destination) {
        return destination.changes().stream().map(c -> c.version().getAsLong()).toList();
    }

    private OptionalLong position(String object, String destination) {
        DestinationPosition p = store.load(object).orElseThrow().positions().get(destination);
        return p == null ? OptionalLong.empty() : p.position();
    }

    // Objects.

    @Test
    void a_tracked_object_is_polled_from_then_on_and_is_in_the_status() throws Exception {
        SyncEngine engine = engine();
        engine.start();
        orders.insert(1, 3);
        engine.track(TrackedObject.of(ORDERS, "public.orders_changes").initialSync(InitialSync.FULL));

        assertThat(until(() -> store.load(ORDERS).map(s -> s.version().orElse(-1)).orElse(-1L) == 3)).isTrue();
        assertThat(engine.trackedObjects()).extracting(TrackedObject::name).containsExactly(ITEMS, ORDERS);
        assertThat(engine.status()).extracting(s -> s.object().name()).containsExactly(ITEMS, ORDERS);
        assertThat(audit.batches()).extracting(ChangeBatch::objectName).contains(ORDERS);
    }

    @Test
    void tracking_an_invalid_or_known_object_fails_naming_it_and_changes_nothing() {
        SyncEngine engine = engine();
        TidemarkException known = catchThrowableOfType(TidemarkException.class,
                () -> engine.track(TrackedObject.of(ITEMS, "public.other")));
        assertThat(known.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(known.getMessage()).contains("already tracks an object named 'Items'").contains("update(");

        TidemarkException invalid = catchThrowableOfType(TidemarkException.class,
                () -> engine.track(TrackedObject.of(ORDERS, " ").maxRows(0)));
        assertThat(invalid.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(invalid.getMessage()).contains("2 configuration problems").contains("[Orders] needs the name")
                .contains("[Orders] maxRows must be at least 1");
        assertThat(engine.trackedObjects()).extracting(TrackedObject::name).containsExactly(ITEMS);

        assertThat(catchThrowableOfType(TidemarkException.class,
                () -> engine.update(TrackedObject.of(ORDERS, "public.orders_changes"))).code())
                .isEqualTo(ErrorCode.UNKNOWN_OBJECT);
        assertThat(catchThrowableOfType(TidemarkException.class, () -> engine.untrack(ORDERS)).code())
                .isEqualTo(ErrorCode.UNKNOWN_OBJECT);
    }

    @Test
    void an_untracked_object_keeps_its_watermark_and_continues_from_it_when_tracked_again() {
        SyncEngine engine = engine();
        items.insert(1, 4);
        engine.runOnce();
        engine.untrack(ITEMS);

        assertThat(store.load(ITEMS).orElseThrow().version()).hasValue(4);
        assertThat(engine.runOnce().objects()).isEmpty();
        assertThatThrownBy(() -> engine.runOnce(ITEMS)).isInstanceOfSatisfying(TidemarkException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_OBJECT));

        items.insert(5, 6);
        engine.track(TrackedObject.of(ITEMS, "public.items_changes"));
        assertThat(engine.status(ITEMS).state()).as("no report of its former life").isEqualTo(
                ObjectStatus.State.NOT_RUN);
        assertThat(engine.status(ITEMS).stored().version()).hasValue(4);
        engine.runOnce();

        assertThat(scripted.requests(ITEMS).get(scripted.requests(ITEMS).size() - 1).fromVersion()).isEqualTo(4);
        assertThat(versions(audit)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
    }

    @Test
    void a_changed_object_uses_its_new_settings_from_its_next_cycle() {
        SyncEngine engine = engine();
        engine.track(TrackedObject.of(ORDERS, "public.orders_changes").initialSync(InitialSync.FULL));
        orders.insert(1, 10);
        engine.runOnce(ORDERS);
        assertThat(scripted.requests(ORDERS).get(0).maxRows()).isEmpty();

        orders.insert(11, 20);
        engine.update(TrackedObject.of(ORDERS, "public.orders_changes").maxRows(4));
        engine.runOnce(ORDERS);

        ChangeRequest last = scripted.requests(ORDERS).get(scripted.requests(ORDERS).size() - 1);
        assertThat(last.maxRows()).hasValue(4);
        assertThat(last.fromVersion()).isEqualTo(10);
        assertThat(store.load(ORDERS).orElseThrow().version()).hasValue(14);
    }

    @Test
    void an_object_pointed_at_another_procedure_meets_the_source_check_as_after_a_restart() {
        SyncEngine engine = engine();
        items.insert(1, 2);
        engine.runOnce(ITEMS);

        engine.update(TrackedObject.of(ITEMS, "public.items_changes_v2"));
        ObjectReport report = engine.runOnce(ITEMS);

        assertThat(report.error()).hasValueSatisfying(e ->
                assertThat(e.code()).isEqualTo(ErrorCode.WATERMARK_SOURCE_CHANGED));
        engine.adoptWatermark(ITEMS);
        assertThat(engine.runOnce(ITEMS).isSuccess()).isTrue();
    }

    /** Starts the engine and returns once a cycle of Items is inside the procedure, held there by the gate. */
    private CallGate blockedInACycle(SyncEngine engine) throws InterruptedException {
        CallGate gate = new CallGate();
        items.insert(1, 1);
        scripted.object(ITEMS).thenBlock(gate, response(1, "Diff", 0, row("I", 1, "\"Body\":\"x\"")));
        engine.start();
        assertThat(gate.awaitEntered(Duration.ofSeconds(10))).isTrue();
        return gate;
    }

    @Test
    void untracking_waits_for_the_running_cycle_and_nothing_of_the_object_runs_afterwards() throws Exception {
        SyncEngine engine = engine();
        CallGate gate = blockedInACycle(engine);

        CompletableFuture<Void> untrack = CompletableFuture.runAsync(() -> engine.untrack(ITEMS));
        Thread.sleep(200);
        assertThat(untrack).as("waits for the cycle in flight").isNotDone();

        assertThat(provider.untracked).as("not before its cycle ended").isEmpty();
        gate.release();
        untrack.get(10, TimeUnit.SECONDS);
        assertThat(provider.untracked).as("the provider is told once its cycles ended")
                .containsExactly(ITEMS + " after 1 calls, 0 running");
        int calls = provider.calls(ITEMS);
        Thread.sleep(200); // ten poll intervals
        assertThat(provider.calls(ITEMS)).isEqualTo(calls);
        assertThat(provider.maxConcurrent(ITEMS)).isEqualTo(1);
    }

    @Test
    void an_object_tracked_again_while_its_untrack_waits_keeps_its_registration_at_the_provider() throws Exception {
        SyncEngine engine = engine();
        CallGate gate = blockedInACycle(engine);
        CompletableFuture<Void> untrack = CompletableFuture.runAsync(() -> engine.untrack(ITEMS));
        assertThat(until(() -> engine.trackedObjects().isEmpty())).as("the name is free while untrack waits").isTrue();

        engine.track(TrackedObject.of(ITEMS, "public.items_changes"));
        gate.release();
        untrack.get(10, TimeUnit.SECONDS);

        assertThat(engine.trackedObjects()).extracting(TrackedObject::name).containsExactly(ITEMS);
        assertThat(provider.untracked).as("the provider is not told to forget an object tracked again").isEmpty();
    }

    @Test
    void a_changed_object_never_runs_its_new_cycle_while_the_former_one_is_in_the_procedure() throws Exception {
        SyncEngine engine = engine();
        CallGate gate = new CallGate();
        items.insert(1, 2);
        scripted.object(ITEMS).thenBlock(gate, response(2, "Diff", 0));
        engine.start();
        assertThat(gate.awaitEntered(Duration.ofSeconds(10))).isTrue();

        CompletableFuture<Void> update = CompletableFuture.runAsync(() ->
                engine.update(TrackedObject.of(ITEMS, "public.items_changes").maxRows(1)));
        Thread.sleep(200);
        assertThat(update).as("waits for the cycle in flight").isNotDone();
        assertThat(provider.calls(ITEMS)).as("the new poller waits too").isEqualTo(1);

        gate.release();
        update.get(10, TimeUnit.SECONDS);
        // A re-add right away must not start a poller of its own next to the new one.
        engine.untrack(ITEMS);
        engine.track(TrackedObject.of(ITEMS, "public.items_changes"));
        items.insert(3, 5);
        assertThat(until(() -> versions(audit).contains(5L))).isTrue();
        assertThat(provider.maxConcurrent(ITEMS)).isEqualTo(1);
    }

    // Destinations.

    @Test
    void an_added_destination_starts_as_its_start_says() {
        SyncEngine engine = engine();
        items.insert(1, 3);
        engine.runOnce();

        RecordingDestination current = new RecordingDestination();
        RecordingDestination export = new RecordingDestination();
        engine.addDestination("current", current);
        engine.addDestination("export", export, DeliveryPolicy.block(), DestinationStart.FULL_EXPORT);
        items.insert(4, 5);
        engine.runOnce();

        assertThat(versions(current)).containsExactly(4L, 5L);
        assertThat(versions(export)).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(versions(audit)).containsExactly(1L, 2L, 3L, 4L, 5L);
    }

    @Test
    void adding_an_invalid_or_known_destination_fails_naming_it() {
        SyncEngine engine = engine();
        TidemarkException known = catchThrowableOfType(TidemarkException.class,
                () -> engine.addDestination("audit", new RecordingDestination()));
        assertThat(known.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(known.getMessage()).contains("'audit'").contains("replaceDestination");

        TidemarkException letters = catchThrowableOfType(TidemarkException.class,
                () -> engine.addDestination("search", new RecordingDestination(), DeliveryPolicy.deadLetterAfter(2, Duration.ofMillis(1)),
                        DestinationStart.CURRENT_POSITION));
        assertThat(letters.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(letters.getMessage()).contains("'search'").contains("no dead-letter store");

        TidemarkException nulls = catchThrowableOfType(TidemarkException.class,
                () -> engine.addDestination("search", null, DeliveryPolicy.block(), null));
        assertThat(nulls.getMessage()).contains("Destination 'search' is null").contains("'search' needs a start");

        assertThat(catchThrowableOfType(TidemarkException.class, () -> engine.removeDestination("search")).code())
                .isEqualTo(ErrorCode.UNKNOWN_DESTINATION);
        assertThat(catchThrowableOfType(TidemarkException.class,
                () -> engine.replaceDestination("search", audit, DeliveryPolicy.block())).code())
                .isEqualTo(ErrorCode.UNKNOWN_DESTINATION);
        TidemarkException last = catchThrowableOfType(TidemarkException.class, () -> engine.removeDestination("audit"));
        assertThat(last.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(last.getMessage()).contains("'audit' is the engine's last one");
    }

    @Test
    void a_removed_destination_no_longer_holds_the_watermark_back_and_keeps_its_position() {
        RecordingDestination lagging = new RecordingDestination();
        SyncEngine engine = engine();
        engine.addDestination("lagging", lagging);
        items.insert(1, 2);
        engine.runOnce();
        lagging.refuseAll();
        items.insert(3, 4);
        engine.runOnce();
        assertThat(store.load(ITEMS).orElseThrow().version()).as("held back by the blocked one").hasValue(2);

        engine.removeDestination("lagging");
        engine.runOnce();

        assertThat(store.load(ITEMS).orElseThrow().version()).hasValue(4);
        assertThat(position(ITEMS, "lagging")).as("kept in the store").hasValue(2);
        assertThat(engine.status(ITEMS).destinations()).extracting(DestinationStatus::destination)
                .containsExactly("audit");
    }

    @Test
    void a_destination_removed_and_added_back_before_anything_moved_continues_without_a_page_twice() {
        RecordingDestination search = new RecordingDestination();
        SyncEngine engine = engine();
        engine.addDestination("search", search);
        items.insert(1, 3);
        engine.runOnce();

        engine.removeDestination("search");
        engine.addDestination("search", search);
        items.insert(4, 4);
        engine.runOnce();

        assertThat(versions(search)).containsExactly(1L, 2L, 3L, 4L);
    }

    @Test
    void a_destination_added_back_after_the_others_moved_on_starts_as_its_start_says() {
        RecordingDestination search = new RecordingDestination();
        RecordingDestination export = new RecordingDestination();
        SyncEngine engine = engine();
        engine.addDestination("search", search);
        engine.addDestination("export", export);
        items.insert(1, 3);
        engine.runOnce();
        engine.removeDestination("search");
        engine.removeDestination("export");
        items.insert(4, 6); // delivered to audit only: the watermark passes search's and export's positions
        engine.runOnce();

        engine.addDestination("search", search);
        engine.addDestination("export", export, DeliveryPolicy.block(), DestinationStart.FULL_EXPORT);
        items.insert(7, 7);
        engine.runOnce();

        assertThat(versions(search)).as("current position: 4..6 are skipped, nothing twice")
                .containsExactly(1L, 2L, 3L, 7L);
        assertThat(versions(export)).as("its own full export").containsExactly(1L, 2L, 3L, 1L, 2L, 3L, 4L, 5L, 6L, 7L);
        assertThat(versions(audit)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L);
        assertThat(position(ITEMS, "search")).hasValue(7);
    }

    @Test
    void a_replaced_destination_continues_from_the_former_ones_position() {
        SyncEngine engine = engine();
        items.insert(1, 3);
        engine.runOnce();

        RecordingDestination replacement = new RecordingDestination();
        engine.replaceDestination("audit", replacement, DeliveryPolicy.retryThenBlock(3, Duration.ofMillis(1)));
        items.insert(4, 5);
        engine.runOnce();

        assertThat(versions(replacement)).containsExactly(4L, 5L);
        assertThat(versions(audit)).containsExactly(1L, 2L, 3L);
    }

    @Test
    void removing_a_destination_waits_until_no_cycle_delivers_to_it() throws Exception {
        SyncEngine engine = engine();
        CountingGate inDelivery = new CountingGate();
        engine.addDestination("slow", inDelivery);
        items.insert(1, 1);
        CompletableFuture<SyncReport> run = CompletableFuture.supplyAsync(engine::runOnce);
        assertThat(inDelivery.entered.await(10, TimeUnit.SECONDS)).isTrue();

        CompletableFuture<Void> removal = CompletableFuture.runAsync(() -> engine.removeDestination("slow"));
        Thread.sleep(200);
        assertThat(removal).isNotDone();
        inDelivery.release.countDown();
        removal.get(10, TimeUnit.SECONDS);
        run.get(10, TimeUnit.SECONDS);

        items.insert(2, 2);
        engine.runOnce();
        assertThat(inDelivery.pages.get()).isEqualTo(1);
    }

    @Test
    void reconfiguring_from_within_a_cycle_is_refused_and_changes_nothing() {
        AtomicReference<TidemarkException> refused = new AtomicReference<>();
        AtomicReference<SyncEngine> self = new AtomicReference<>();
        SyncEngine engine = engine();
        self.set(engine);
        engine.addDestination("reconfiguring", batch -> {
            try {
                self.get().removeDestination("audit");
            } catch (TidemarkException e) {
                refused.set(e);
            }
        });
        items.insert(1, 1);
        engine.runOnce();

        assertThat(refused.get().code()).isEqualTo(ErrorCode.ENGINE_STATE);
        assertThat(refused.get().getMessage()).contains("within a cycle of 'Items'");
        assertThat(engine.status(ITEMS).destinations()).extracting(DestinationStatus::destination)
                .containsExactly("audit", "reconfiguring");
    }

    @Test
    void a_closed_engine_refuses_reconfiguration() {
        SyncEngine engine = engine();
        engine.close();
        assertThat(catchThrowableOfType(TidemarkException.class,
                () -> engine.track(TrackedObject.of(ORDERS, "public.orders_changes"))).code())
                .isEqualTo(ErrorCode.ENGINE_STATE);
        assertThat(catchThrowableOfType(TidemarkException.class,
                () -> engine.addDestination("x", new RecordingDestination())).code())
                .isEqualTo(ErrorCode.ENGINE_STATE);
    }

    /** A destination that holds its first page until released. */
    private static final class CountingGate implements io.tidemark.sync.spi.Destination {
        final java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        final AtomicInteger pages = new AtomicInteger();

        @Override
        public void deliver(ChangeBatch batch) throws Exception {
            pages.incrementAndGet();
            entered.countDown();
            release.await();
        }
    }

    /** Counts each object's calls and the most that ever ran at once. */
    static final class OverlapCheckingProvider implements ChangeProvider {
        private final ChangeProvider delegate;
        private final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
        private final Map<String, AtomicInteger> most = new ConcurrentHashMap<>();
        private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        /** What {@link #untracked} was told, and how many of the object's calls were running then. */
        final List<String> untracked = new java.util.concurrent.CopyOnWriteArrayList<>();

        OverlapCheckingProvider(ChangeProvider delegate) {
            this.delegate = delegate;
        }

        int maxConcurrent(String object) {
            return most.getOrDefault(object, new AtomicInteger()).get();
        }

        int calls(String object) {
            return calls.getOrDefault(object, new AtomicInteger()).get();
        }

        @Override
        public String name() {
            return delegate.name();
        }

        @Override
        public void validate(TrackedObject object) {
            delegate.validate(object);
        }

        @Override
        public ResponsePayload invoke(TrackedObject object, ChangeRequest request, CallContext context) {
            AtomicInteger now = running.computeIfAbsent(object.name(), n -> new AtomicInteger());
            int inside = now.incrementAndGet();
            most.computeIfAbsent(object.name(), n -> new AtomicInteger()).accumulateAndGet(inside, Math::max);
            calls.computeIfAbsent(object.name(), n -> new AtomicInteger()).incrementAndGet();
            try {
                return delegate.invoke(object, request, context);
            } finally {
                now.decrementAndGet();
            }
        }

        @Override
        public OptionalLong currentVersion(TrackedObject object) {
            return delegate.currentVersion(object);
        }

        @Override
        public void untracked(TrackedObject object) {
            untracked.add(object.name() + " after " + calls(object.name()) + " calls, " + running
                    .getOrDefault(object.name(), new AtomicInteger()).get() + " running");
        }
    }
}
