package io.tidemark.sync;

import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.DeadLetterStore;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import io.tidemark.sync.testkit.VersionedRows;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Retries within a cycle, and the explicit "dead-letter and move on" opt-out, with the in-memory stores. */
class DeliveryPolicyTest {

    private static final String ITEMS = "Items";

    private final ScriptedProvider provider = new ScriptedProvider();
    private final WatermarkStore watermarks = InMemoryWatermarkStore.create();
    private final DeadLetterStore deadLetters = InMemoryDeadLetterStore.create();

    private static TrackedObject items() {
        return TrackedObject.of(ITEMS, "public.items_changes");
    }

    private void rows(long from, long to) {
        provider.object(ITEMS).respondWith(VersionedRows.honouringMaxRows().insert(from, to));
    }

    @Test
    void retries_within_the_cycle_before_blocking() {
        rows(1, 3);
        AtomicInteger attempts = new AtomicInteger();
        RecordingDestination recorder = new RecordingDestination();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(provider)
                .watermarks(watermarks)
                .track(items())
                .destination("flaky", batch -> {
                    if (attempts.incrementAndGet() < 3) {
                        throw new IllegalStateException("temporarily down");
                    }
                    recorder.deliver(batch);
                }, DeliveryPolicy.retryThenBlock(3, Duration.ofMillis(5)))
                .build()) {

            ObjectReport report = engine.runOnce().get(ITEMS);

            assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(attempts.get()).isEqualTo(3);
            assertThat(recorder.changes()).hasSize(3);
            assertThat(provider.calls(ITEMS)).hasSize(1);
            assertThat(watermarks.load(ITEMS).orElseThrow().version()).hasValue(3);
        }
    }

    @Test
    void exhausted_retries_block_by_default() {
        rows(1, 3);
        AtomicInteger attempts = new AtomicInteger();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(provider)
                .watermarks(watermarks)
                .track(items())
                .destination("down", batch -> {
                    attempts.incrementAndGet();
                    throw new IllegalStateException("down");
                }, DeliveryPolicy.retryThenBlock(2, Duration.ZERO))
                .build()) {

            ObjectReport report = engine.runOnce().get(ITEMS);

            assertThat(report.outcome()).isEqualTo(Outcome.BLOCKED);
            assertThat(report.error().orElseThrow().getMessage()).contains("after 2 attempts").contains("down");
            assertThat(attempts.get()).isEqualTo(2);
            assertThat(watermarks.load(ITEMS).orElseThrow().version()).isEmpty();
        }
    }

    @Test
    void a_blocking_destination_stops_the_pages_after_it_for_every_destination() {
        rows(1, 5);
        RecordingDestination healthy = new RecordingDestination();
        RecordingDestination refusing = new RecordingDestination().refuseWhen(b -> b.pageNumber() == 2);
        try (SyncEngine engine = SyncEngine.builder()
                .provider(provider)
                .watermarks(watermarks)
                .track(items().pageSize(2))
                .destination("refusing", refusing)
                .destination("healthy", healthy)
                .build()) {

            ObjectReport report = engine.runOnce().get(ITEMS);

            assertThat(report.outcome()).isEqualTo(Outcome.BLOCKED);
            assertThat(healthy.batches()).extracting(ChangeBatch::pageNumber).containsExactly(1);
            assertThat(refusing.offered()).isEqualTo(2);
            // Both took page 1, and stand at its end; on an object's first cycle neither goes further alone.
            assertThat(watermarks.load(ITEMS).orElseThrow().version()).isEqualTo(OptionalLong.of(2));
        }
    }

    @Test
    void a_dead_letter_destination_sets_refused_pages_aside_and_the_watermark_moves_on() {
        rows(1, 5);
        RecordingDestination healthy = new RecordingDestination();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(provider)
                .watermarks(watermarks)
                .deadLetters(deadLetters)
                .track(items().pageSize(2))
                .destination("healthy", healthy)
                .destination("broken", batch -> {
                    if (batch.pageNumber() == 2) {
                        throw new IllegalArgumentException("cannot map row");
                    }
                }, DeliveryPolicy.deadLetterAfter(2, Duration.ZERO))
                .build()) {

            ObjectReport report = engine.runOnce().get(ITEMS);

            assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(report.deadLetteredPages()).isEqualTo(1);
            assertThat(report.toVersion()).hasValue(5);
            assertThat(watermarks.load(ITEMS).orElseThrow().version()).hasValue(5);
            assertThat(healthy.changes()).hasSize(5);
            List<DeadLetter> letters = deadLetters.list(ITEMS);
            assertThat(letters).singleElement().satisfies(letter -> {
                assertThat(letter.destination()).isEqualTo("broken");
                assertThat(letter.pageNumber()).isEqualTo(2);
                assertThat(letter.changeCount()).isEqualTo(2);
                assertThat(letter.batchId()).isEqualTo(ITEMS + ":0-5");
                assertThat(letter.lastError()).contains("cannot map row");
                assertThat(letter.attempts()).isEqualTo(1);
                assertThat(letter.pageCount()).isEqualTo(3);
                assertThat(letter.envelope()).startsWith("{\"object\":\"Items\",\"idempotencyKey\":\""
                        + letter.idempotencyKey() + "\"").endsWith("\"changes\":["
                        + "{\"$operation\":\"I\",\"$version\":3,\"Body\":\"row 3\"},"
                        + "{\"$operation\":\"I\",\"$version\":4,\"Body\":\"row 4\"}]}");
            });
            assertThat(deadLetters.delete(letters.get(0).id())).isTrue();
            assertThat(deadLetters.list(ITEMS)).isEmpty();
        }
    }

    @Test
    void a_dead_letter_policy_without_a_store_is_refused_at_build() {
        assertThatThrownBy(() -> SyncEngine.builder()
                .provider(provider)
                .watermarks(watermarks)
                .track(TrackedObject.of("x", "public.x"))
                .destination("d", batch -> { }, DeliveryPolicy.deadLetterAfter(1, Duration.ZERO))
                .build())
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining("no dead-letter store");
        assertThat(provider.calls("x")).isEmpty();
    }
}
