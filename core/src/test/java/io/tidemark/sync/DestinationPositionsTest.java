package io.tidemark.sync;

import io.tidemark.sync.spi.DeliveryException;
import io.tidemark.sync.spi.DestinationPosition;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import io.tidemark.sync.testkit.VersionedRows;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;

import static io.tidemark.sync.testkit.Responses.response;
import static io.tidemark.sync.testkit.Responses.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Independent destination positions: each destination moves on its own, calls are shared by destinations at the
 * same position, the watermark is the lowest position, old single-watermark state migrates, destinations added
 * later start where they are told, and destinations can be paused one by one.
 */
class DestinationPositionsTest {

    private static final String ITEMS = "Items";

    private final ScriptedProvider provider = new ScriptedProvider();
    private final WatermarkStore store = InMemoryWatermarkStore.create();
    private final VersionedRows rows = VersionedRows.ignoringMaxRows();
    private final List<SyncEngine> engines = new ArrayList<>();

    @AfterEach
    void close() {
        engines.forEach(SyncEngine::close);
    }

    private SyncEngine engine(SyncEngine.Builder builder) {
        SyncEngine engine = builder.provider(provider).watermarks(store).track(TrackedObject.of(ITEMS,
                "public.items_changes")).pageSize(2).build();
        engines.add(engine);
        return engine;
    }

    private List<String> calls() {
        return provider.calls(ITEMS);
    }

    private OptionalLong position(String destination) {
        DestinationPosition p = store.load(ITEMS).orElseThrow().positions().get(destination);
        return p == null ? OptionalLong.empty() : p.position();
    }

    private OptionalLong watermark() {
        return store.load(ITEMS).orElseThrow().version();
    }

    private static List<Long> versions(RecordingDestination d) {
        return d.changes().stream().map(c -> c.version().orElseThrow()).toList();
    }

    @Test
    void a_blocked_destination_holds_back_only_itself_and_catches_up_from_its_own_position() {
        provider.object(ITEMS).respondWith(rows.insert(1, 3));
        RecordingDestination healthy = new RecordingDestination();
        RecordingDestination down = new RecordingDestination();
        SyncEngine engine = engine(SyncEngine.builder().destination("healthy", healthy).destination("down", down));
        engine.runOnce();
        down.refuseAll();

        rows.insert(4, 6);
        ObjectReport first = engine.runOnce(ITEMS);
        rows.insert(7, 9);
        ObjectReport second = engine.runOnce(ITEMS);

        assertThat(first.outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(second.outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(second.blockedDestinations()).extracting(DestinationReport::destination).containsExactly("down");
        assertThat(versions(healthy)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
        assertThat(position("healthy")).hasValue(9);
        assertThat(position("down")).hasValue(3);
        assertThat(watermark()).hasValue(3);
        assertThat(store.load(ITEMS).orElseThrow().lastError()).get().asString().contains("'down'");

        down.acceptAll();
        rows.insert(10, 10);
        ObjectReport caughtUp = engine.runOnce(ITEMS);

        assertThat(caughtUp.blockedDestinations()).isEmpty();
        assertThat(versions(down)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
        assertThat(versions(healthy)).endsWith(9L, 10L).hasSize(10);
        assertThat(position("down")).hasValue(10);
        assertThat(watermark()).hasValue(10);
        assertThat(store.load(ITEMS).orElseThrow().lastError()).isEmpty();
        // One shared call while together, one per position while apart (the most advanced first).
        assertThat(calls()).containsExactly(
                "{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}",
                "{\"fromVersion\":3,\"mode\":\"sync\"}",
                "{\"fromVersion\":6,\"mode\":\"sync\"}",
                "{\"fromVersion\":3,\"mode\":\"sync\"}",
                "{\"fromVersion\":9,\"mode\":\"sync\"}",
                "{\"fromVersion\":3,\"mode\":\"sync\"}");
        // Once together again they share one call.
        rows.insert(11, 11);
        engine.runOnce(ITEMS);
        assertThat(calls()).last().isEqualTo("{\"fromVersion\":10,\"mode\":\"sync\"}");
        assertThat(calls()).hasSize(7);
    }

    @Test
    void a_full_response_to_a_lagging_destinations_call_goes_only_to_that_destination() {
        provider.object(ITEMS)
                .thenReturn(response(5, "Diff", 0, row("I", 5, "\"Id\":5")))
                .thenReturn(response(6, "Diff", 0, row("I", 6, "\"Id\":6")))       // both from 5: lag refuses
                .thenReturn(response(7, "Diff", 0, row("I", 7, "\"Id\":7")))       // healthy from 6
                .thenReturn(response(7, "Full", 1, row("I", 7, "\"Id\":1")));      // lag from 5: too old, FULL
        RecordingDestination healthy = new RecordingDestination();
        RecordingDestination lag = new RecordingDestination();
        SyncEngine engine = engine(SyncEngine.builder().destination("healthy", healthy).destination("lag", lag));
        engine.runOnce();
        lag.refuseAll();
        engine.runOnce();
        lag.acceptAll();

        engine.runOnce();

        assertThat(healthy.batches()).extracting(ChangeBatch::syncType)
                .containsExactly(SyncType.DIFF, SyncType.DIFF, SyncType.DIFF);
        assertThat(lag.batches()).extracting(ChangeBatch::syncType).containsExactly(SyncType.DIFF, SyncType.FULL);
        assertThat(lag.batches().get(1).reasonCode()).isEqualTo(1);
        assertThat(position("healthy")).hasValue(7);
        assertThat(position("lag")).hasValue(7);
    }

    @Test
    void a_page_offered_again_after_a_block_carries_the_same_idempotency_key() {
        provider.object(ITEMS).respondWith(rows.insert(1, 2));
        RecordingDestination d = new RecordingDestination();
        List<String> keysSeen = new ArrayList<>();
        AtomicInteger refusals = new AtomicInteger(2);
        SyncEngine engine = engine(SyncEngine.builder().destination("d", d).destination("keys", batch -> {
            keysSeen.add(batch.idempotencyKey());
            if (batch.fromVersion() > 0 && refusals.getAndDecrement() > 0) {
                throw DeliveryException.retryable("not now", null);
            }
        }));
        engine.runOnce();
        rows.insert(3, 4);

        engine.runOnce();
        engine.runOnce();
        engine.runOnce();

        assertThat(keysSeen).hasSize(4);
        assertThat(keysSeen.subList(1, 4)).containsOnly(keysSeen.get(1));
        assertThat(keysSeen.get(0)).isNotEqualTo(keysSeen.get(1));
        assertThat(position("keys")).hasValue(4);
    }

    @Test
    void a_store_from_before_positions_puts_every_destination_at_the_stored_watermark() {
        // What an older Tidemark left behind: a watermark, no positions.
        store.advance(ITEMS, provider.sourceIdentity(TrackedObject.of(ITEMS, "public.items_changes")),
                OptionalLong.empty(), 2, Instant.EPOCH);
        provider.object(ITEMS).respondWith(rows.insert(1, 4));
        RecordingDestination a = new RecordingDestination();
        RecordingDestination b = new RecordingDestination().refuseAll();
        SyncEngine engine = engine(SyncEngine.builder().destination("a", a).destination("b", b));

        engine.runOnce();

        assertThat(calls()).containsExactly("{\"fromVersion\":2,\"mode\":\"sync\"}");
        assertThat(versions(a)).containsExactly(3L, 4L);
        // Both are written, the blocked one where it stood: it must not later read as newly added.
        assertThat(position("a")).hasValue(4);
        assertThat(position("b")).hasValue(2);
        assertThat(watermark()).hasValue(2);
    }

    @Test
    void a_destination_added_later_starts_at_the_current_position_or_with_its_own_full_export() {
        provider.object(ITEMS).respondWith(rows.insert(1, 3));
        RecordingDestination first = new RecordingDestination();
        engine(SyncEngine.builder().destination("first", first)).runOnce();
        engines.remove(0).close();

        RecordingDestination current = new RecordingDestination();
        RecordingDestination full = new RecordingDestination();
        SyncEngine engine = engine(SyncEngine.builder()
                .destination("first", first)
                .destination("current", current, DeliveryPolicy.block(), DestinationStart.CURRENT_POSITION)
                .destination("full", full, DeliveryPolicy.block(), DestinationStart.FULL_EXPORT));
        rows.insert(4, 4);

        engine.runOnce();

        assertThat(versions(current)).containsExactly(4L);
        assertThat(versions(full)).containsExactly(1L, 2L, 3L, 4L);
        assertThat(full.batches()).allSatisfy(b -> assertThat(b.fromVersion()).isZero());
        assertThat(versions(first)).containsExactly(1L, 2L, 3L, 4L);
        assertThat(calls()).containsExactly(
                "{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}",
                "{\"fromVersion\":3,\"mode\":\"sync\"}",
                "{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}");
        assertThat(position("full")).hasValue(4);
        assertThat(watermark()).hasValue(4);
    }

    @Test
    void a_paused_destination_receives_nothing_holds_the_watermark_and_catches_up_when_resumed() {
        provider.object(ITEMS).respondWith(rows.insert(1, 2));
        RecordingDestination a = new RecordingDestination();
        RecordingDestination b = new RecordingDestination();
        SyncEngine engine = engine(SyncEngine.builder().destination("a", a).destination("b", b));
        engine.runOnce();

        engine.pause(ITEMS, "b");
        rows.insert(3, 5);
        ObjectReport paused = engine.runOnce(ITEMS);

        assertThat(paused.outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(paused.destinations()).extracting(DestinationReport::outcome)
                .containsExactly(Outcome.DELIVERED, Outcome.PAUSED);
        assertThat(versions(b)).containsExactly(1L, 2L);
        assertThat(watermark()).hasValue(2);
        assertThat(engine.status(ITEMS).stored().positions().get("b").paused()).isTrue();

        engine.resume(ITEMS, "b");
        engine.runOnce(ITEMS);

        assertThat(versions(b)).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(watermark()).hasValue(5);
        assertThat(versions(a)).containsExactly(1L, 2L, 3L, 4L, 5L);
    }

    @Test
    void pausing_every_destination_pauses_the_object_and_an_unknown_destination_is_refused() {
        provider.object(ITEMS).respondWith(rows.insert(1, 2));
        SyncEngine engine = engine(SyncEngine.builder().destination("a", new RecordingDestination()));
        engine.runOnce();
        engine.pause(ITEMS, "a");

        assertThat(engine.runOnce(ITEMS).outcome()).isEqualTo(Outcome.PAUSED);
        assertThatThrownBy(() -> engine.pause(ITEMS, "nope"))
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.UNKNOWN_DESTINATION))
                .hasMessageContaining("'nope'").hasMessageContaining("[a]");
    }

    @Test
    void a_fatal_refusal_skips_the_remaining_attempts() {
        provider.object(ITEMS).respondWith(rows.insert(1, 1));
        AtomicInteger attempts = new AtomicInteger();
        SyncEngine engine = engine(SyncEngine.builder().destination("d", batch -> {
            attempts.incrementAndGet();
            throw DeliveryException.fatal("400 bad request", null);
        }, DeliveryPolicy.retryThenBlock(5, Duration.ofMillis(1))));

        ObjectReport report = engine.runOnce(ITEMS);

        assertThat(report.outcome()).isEqualTo(Outcome.BLOCKED);
        assertThat(attempts).hasValue(1);
        assertThat(report.error().orElseThrow().getMessage()).contains("after 1 attempt").contains("400");
    }

    @Test
    void retries_wait_as_the_destination_asks_and_a_longer_wait_than_max_delay_is_honoured_across_cycles() {
        provider.object(ITEMS).respondWith(rows.insert(1, 1));
        List<Long> attemptsAt = new ArrayList<>();
        AtomicInteger refusals = new AtomicInteger(1);
        MutableClock clock = new MutableClock();
        SyncEngine engine = engine(SyncEngine.builder().clock(clock).destination("d", batch -> {
            attemptsAt.add(System.nanoTime());
            if (refusals.getAndDecrement() > 0) {
                throw DeliveryException.retryableAfter("429", Duration.ofMillis(150));
            }
            if (attemptsAt.size() == 3) {
                throw DeliveryException.retryableAfter("429", Duration.ofMinutes(2));
            }
        }, DeliveryPolicy.builder().maxAttempts(5).maxDelay(Duration.ofSeconds(1)).build()));

        engine.runOnce(ITEMS);
        assertThat(attemptsAt).hasSize(2);
        assertThat(Duration.ofNanos(attemptsAt.get(1) - attemptsAt.get(0))).isGreaterThanOrEqualTo(
                Duration.ofMillis(150));

        rows.insert(2, 2);
        ObjectReport deferred = engine.runOnce(ITEMS);
        assertThat(attemptsAt).hasSize(3); // two minutes is over the policy's 1 s: no second attempt now
        assertThat(deferred.outcome()).isEqualTo(Outcome.BLOCKED);

        ObjectReport stillWaiting = engine.runOnce(ITEMS);
        assertThat(attemptsAt).hasSize(3); // not called before the time it asked for
        assertThat(stillWaiting.error().orElseThrow().getMessage()).contains("Retry-After");

        clock.advance(Duration.ofMinutes(2));
        engine.runOnce(ITEMS);
        assertThat(attemptsAt).hasSize(4);
        assertThat(position("d")).hasValue(2);
    }

    @Test
    void the_backoff_bound_doubles_up_to_max_delay() {
        DeliveryPolicy policy = DeliveryPolicy.builder().maxAttempts(10).backoff(Duration.ofMillis(100))
                .maxDelay(Duration.ofMillis(500)).build();

        assertThat(policy.delayBound(1)).isEqualTo(Duration.ofMillis(100));
        assertThat(policy.delayBound(2)).isEqualTo(Duration.ofMillis(200));
        assertThat(policy.delayBound(3)).isEqualTo(Duration.ofMillis(400));
        assertThat(policy.delayBound(4)).isEqualTo(Duration.ofMillis(500));
        assertThat(policy.delayBound(60)).isEqualTo(Duration.ofMillis(500));
        assertThatThrownBy(() -> DeliveryPolicy.builder().maxAttempts(0).maxDelay(Duration.ofMillis(-1)).build())
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining("maxAttempts").hasMessageContaining("maxDelay");
    }

    @Test
    void jittered_waits_stay_within_the_bound_and_vary() {
        provider.object(ITEMS).respondWith(rows.insert(1, 1));
        List<Long> at = new ArrayList<>();
        SyncEngine engine = engine(SyncEngine.builder().destination("d", batch -> {
            at.add(System.nanoTime());
            if (at.size() < 8) {
                throw DeliveryException.retryable("503", null);
            }
        }, DeliveryPolicy.builder().maxAttempts(8).backoff(Duration.ofMillis(40)).maxDelay(Duration.ofMillis(40))
                .build()));

        engine.runOnce(ITEMS);

        List<Long> waits = new ArrayList<>();
        for (int i = 1; i < at.size(); i++) {
            waits.add(Duration.ofNanos(at.get(i) - at.get(i - 1)).toMillis());
        }
        // Without the 40 ms cap the backoff alone would reach 40 * 2^6 = 2,560 ms by the seventh wait; the slack
        // absorbs scheduling on a loaded CI machine (70 ms of it was seen) and still fails an uncapped backoff.
        assertThat(waits).hasSize(7).allSatisfy(w -> assertThat(w).isLessThan(40 + 250));
        assertThat(waits.stream().distinct().count()).isGreaterThan(1);
    }

    @Test
    void a_dead_letter_policy_moves_that_destinations_position_past_the_refused_page() {
        provider.object(ITEMS).respondWith(rows.insert(1, 4));
        RecordingDestination refusing = new RecordingDestination().refuseWhen(b -> b.pageNumber() == 1);
        InMemoryDeadLetterStore letters = InMemoryDeadLetterStore.create();
        SyncEngine engine = engine(SyncEngine.builder().deadLetters(letters)
                .destination("ok", new RecordingDestination())
                .destination("letters", refusing, DeliveryPolicy.deadLetterAfter(1, Duration.ZERO)));
        engine.runOnce();
        rows.insert(5, 8);

        ObjectReport report = engine.runOnce(ITEMS);

        assertThat(report.deadLetteredPages()).isEqualTo(1);
        assertThat(position("letters")).hasValue(8);
        assertThat(watermark()).hasValue(8);
        assertThat(letters.list(ITEMS)).hasSize(2);
    }

    @Test
    void a_position_is_stored_after_each_accepted_page_before_the_next_is_offered() {
        provider.object(ITEMS).respondWith(rows.insert(1, 7));
        store.advance(ITEMS, provider.sourceIdentity(TrackedObject.of(ITEMS, "public.items_changes")),
                OptionalLong.empty(), 0, Instant.EPOCH); // not a first cycle: each destination goes its own way
        List<String> seen = new ArrayList<>();
        RecordingDestination watcher = new RecordingDestination();
        SyncEngine engine = engine(SyncEngine.builder().destination("d", batch -> {
            // What the store holds for this destination while it is handed each page.
            seen.add(batch.pageNumber() + "@" + store.load(ITEMS).map(s -> s.positions().get("d"))
                    .map(p -> String.valueOf(p.version())).orElse("none"));
            if (batch.pageNumber() == 3) {
                throw new IllegalStateException("down");
            }
        }).destination("watcher", watcher));

        ObjectReport report = engine.runOnce(ITEMS);

        assertThat(seen).containsExactly("1@none", "2@2", "3@4"); // none: the legacy watermark only
        // It keeps the two pages it accepted; the watcher took everything.
        assertThat(position("d")).hasValue(4);
        assertThat(position("watcher")).hasValue(7);
        assertThat(watermark()).hasValue(4);
        assertThat(report.destinations().get(0).toVersion()).hasValue(4);
        assertThat(report.destinations().get(0).outcome()).isEqualTo(Outcome.BLOCKED);
    }

    @Test
    void a_version_split_across_two_pages_is_not_a_place_to_stand() {
        provider.object(ITEMS)
                .thenReturn(response(3, "Diff", 0, row("I", 1, "\"Id\":1"), row("I", 2, "\"Id\":2"),
                        row("U", 2, "\"Id\":3"), row("I", 3, "\"Id\":4")))
                .thenReturn(response(3, "Diff", 0, row("I", 2, "\"Id\":2"), row("U", 2, "\"Id\":3"),
                        row("I", 3, "\"Id\":4")));
        RecordingDestination d = new RecordingDestination().refuseWhen(b -> b.pageNumber() == 2);
        SyncEngine engine = engine(SyncEngine.builder().destination("d", d).destination("other",
                new RecordingDestination()));

        engine.runOnce(ITEMS);

        // Page 1 holds versions 1 and 2, but version 2 continues on page 2: only 1 is complete.
        assertThat(position("d")).hasValue(1);
        d.acceptAll();
        engine.runOnce(ITEMS);
        assertThat(calls()).last().isEqualTo("{\"fromVersion\":1,\"mode\":\"sync\"}");
        assertThat(position("d")).hasValue(3);
    }

    @Test
    void a_full_response_moves_a_destination_only_once_it_took_all_of_it() {
        provider.object(ITEMS)
                .thenReturn(response(4, "Full", 0, row("I", 1, "\"Id\":1"), row("I", 2, "\"Id\":2"),
                        row("I", 3, "\"Id\":3"), row("I", 4, "\"Id\":4")));
        List<String> seen = new ArrayList<>();
        SyncEngine engine = engine(SyncEngine.builder().destination("d", batch -> seen.add(
                store.load(ITEMS).map(s -> s.positions().toString()).orElse("none"))));

        engine.runOnce(ITEMS);

        assertThat(seen).containsExactly("none", "none");
        assertThat(position("d")).hasValue(4);
    }

    @Test
    void a_blocked_page_is_recorded_as_one_letter_updated_while_refused_and_resolved_once_passed() {
        provider.object(ITEMS).respondWith(rows.insert(1, 2));
        InMemoryDeadLetterStore letters = InMemoryDeadLetterStore.create();
        RecordingDestination blocked = new RecordingDestination();
        SyncEngine engine = engine(SyncEngine.builder().deadLetters(letters)
                .destination("ok", new RecordingDestination())
                .destination("blocked", blocked));
        engine.runOnce();
        blocked.refuseAll();
        rows.insert(3, 4);

        engine.runOnce(ITEMS);
        engine.runOnce(ITEMS);

        assertThat(letters.list(ITEMS)).singleElement().satisfies(letter -> {
            assertThat(letter.destination()).isEqualTo("blocked");
            assertThat(letter.attempts()).isEqualTo(2);
            assertThat(letter.fromVersion()).isEqualTo(2);
        });
        assertThat(position("blocked")).hasValue(2);

        blocked.acceptAll();
        engine.runOnce(ITEMS);

        assertThat(position("blocked")).hasValue(4);
        assertThat(letters.list(ITEMS)).isEmpty();
    }

    /** A clock a test moves by hand. */
    private static final class MutableClock extends Clock {
        private Instant now = Instant.parse("2026-01-01T00:00:00Z");

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
