package io.tidemark.sync;

import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.DeadLetterStore;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import io.tidemark.sync.testkit.VersionedRows;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link SyncEngine#deadLetters()}: letters the engine recorded, replayed to their destination only, and purged. */
class DeadLettersTest {

    private static final String ITEMS = "Items";
    private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");

    private final ScriptedProvider provider = new ScriptedProvider();
    private final WatermarkStore watermarks = InMemoryWatermarkStore.create();
    private final DeadLetterStore store = InMemoryDeadLetterStore.create();
    private final RecordingDestination healthy = new RecordingDestination();
    private final RecordingDestination broken = new RecordingDestination().refuseAll();
    private final List<DeadLetter> announced = new CopyOnWriteArrayList<>();

    private SyncEngine engine(Clock clock) {
        provider.object(ITEMS).respondWith(VersionedRows.honouringMaxRows().insert(1, 7));
        return SyncEngine.builder()
                .provider(provider)
                .watermarks(watermarks)
                .deadLetters(store)
                .clock(clock)
                .track(TrackedObject.of(ITEMS, "public.items_changes").pageSize(2))
                .destination("healthy", healthy)
                .destination("broken", broken, DeliveryPolicy.deadLetterAfter(1, Duration.ZERO))
                .listener(new SyncListener() {
                    @Override
                    public void onDeadLetter(DeadLetter letter) {
                        announced.add(letter);
                    }
                })
                .build();
    }

    private SyncEngine engine() {
        return engine(Clock.fixed(NOW, ZoneOffset.UTC));
    }

    @Test
    void every_recorded_letter_is_announced_to_the_listeners() {
        try (SyncEngine engine = engine()) {
            engine.runOnce();

            assertThat(announced).extracting(DeadLetter::pageNumber).containsExactly(1, 2, 3, 4);
            assertThat(announced).allSatisfy(l -> {
                assertThat(l.id()).isPositive();
                assertThat(l.destination()).isEqualTo("broken");
                assertThat(l.attempts()).isEqualTo(1);
                assertThat(l.firstFailedAt()).isEqualTo(NOW);
            });
            assertThat(engine.deadLetters().list(ITEMS)).isEqualTo(announced);
        }
    }

    @Test
    void replay_all_sends_a_destinations_letters_to_it_alone_in_version_order_and_deletes_them() {
        try (SyncEngine engine = engine()) {
            engine.runOnce();
            List<DeadLetter> letters = engine.deadLetters().list(ITEMS, "broken");
            assertThat(healthy.batches()).hasSize(4);
            broken.acceptAll();

            ReplayResult result = engine.deadLetters().replayAll(ITEMS, "broken");

            assertThat(result).isEqualTo(new ReplayResult(4, 0, false, java.util.Optional.empty()));
            assertThat(broken.batches()).extracting(ChangeBatch::pageNumber).containsExactly(1, 2, 3, 4);
            assertThat(broken.batches()).extracting(ChangeBatch::idempotencyKey)
                    .containsExactlyElementsOf(letters.stream().map(DeadLetter::idempotencyKey).toList());
            assertThat(broken.changes()).extracting(Change::rawJson).first()
                    .isEqualTo("{\"$operation\":\"I\",\"$version\":1,\"Body\":\"row 1\"}");
            assertThat(broken.batches().get(0).changes().get(0).version()).hasValue(1);
            assertThat(broken.batches().get(0).totalChanges()).isEqualTo(7);
            assertThat(healthy.batches()).as("the other destination is not offered the replay").hasSize(4);
            assertThat(engine.deadLetters().list(ITEMS)).isEmpty();
        }
    }

    @Test
    void a_replay_stops_at_the_first_refusal_records_the_attempt_and_leaves_the_later_letters() {
        try (SyncEngine engine = engine()) {
            engine.runOnce();
            broken.refuseWhen(batch -> batch.pageNumber() == 2);

            ReplayResult result = engine.deadLetters().replayAll(ITEMS, "broken");

            assertThat(result.delivered()).isEqualTo(1);
            assertThat(result.refused()).isEqualTo(1);
            assertThat(result.error()).hasValueSatisfying(e -> assertThat(e).contains("RecordingDestination refused"));
            assertThat(broken.batches()).extracting(ChangeBatch::pageNumber).containsExactly(1);
            List<DeadLetter> left = engine.deadLetters().list(ITEMS, "broken");
            assertThat(left).extracting(DeadLetter::pageNumber).containsExactly(2, 3, 4);
            assertThat(left.get(0).attempts()).isEqualTo(2);
            assertThat(left.get(0).lastError()).contains("RecordingDestination refused");
            assertThat(left.get(1).attempts()).as("not tried: it would have overtaken page 2").isEqualTo(1);

            // The refused letter was released: the next replay picks up where this one stopped.
            broken.acceptAll();
            assertThat(engine.deadLetters().replayAll(ITEMS, "broken").delivered()).isEqualTo(3);
            assertThat(broken.batches()).extracting(ChangeBatch::pageNumber).containsExactly(1, 2, 3, 4);
        }
    }

    @Test
    void replaying_one_letter_sends_only_it() {
        try (SyncEngine engine = engine()) {
            engine.runOnce();
            DeadLetter third = engine.deadLetters().list(ITEMS).get(2);

            assertThat(engine.deadLetters().replay(third.id()).refused()).isEqualTo(1);
            assertThat(engine.deadLetters().list(ITEMS).get(2).attempts()).isEqualTo(2);
            broken.acceptAll();
            assertThat(engine.deadLetters().replay(third.id()).delivered()).isEqualTo(1);

            assertThat(broken.batches()).extracting(ChangeBatch::pageNumber).containsExactly(3);
            assertThat(engine.deadLetters().list(ITEMS)).extracting(DeadLetter::pageNumber).containsExactly(1, 2, 4);
            assertThat(engine.deadLetters().replay(third.id())).isEqualTo(ReplayResult.nothing());
        }
    }

    @Test
    void a_letter_another_replay_holds_is_left_alone() {
        try (SyncEngine engine = engine()) {
            engine.runOnce();
            DeadLetter first = engine.deadLetters().list(ITEMS).get(0);
            assertThat(store.claim(first.id(), "someone else", NOW, NOW.plusSeconds(60))).isPresent();
            broken.acceptAll();

            assertThat(engine.deadLetters().replay(first.id()).claimedElsewhere()).isTrue();
            ReplayResult all = engine.deadLetters().replayAll(ITEMS, "broken");
            assertThat(all.claimedElsewhere()).isTrue();
            assertThat(all.delivered()).isZero();
            assertThat(broken.batches()).isEmpty();
        }
    }

    @Test
    void purge_removes_letters_by_the_age_of_their_last_failure() {
        try (SyncEngine engine = engine()) {
            engine.runOnce();
            assertThat(engine.deadLetters().purge(Duration.ofHours(1))).isZero();
        }
        try (SyncEngine later = engine(Clock.fixed(NOW.plus(Duration.ofDays(8)), ZoneOffset.UTC))) {
            assertThat(later.deadLetters().purge(Duration.ofDays(7))).isEqualTo(4);
            assertThat(later.deadLetters().list(ITEMS)).isEmpty();
            assertThatThrownBy(() -> later.deadLetters().purge(Duration.ofDays(-1)))
                    .hasMessageContaining("retention of zero or more");
        }
    }

    @Test
    void a_letter_for_a_destination_the_engine_no_longer_has_is_refused_by_name_and_stays() {
        try (SyncEngine engine = engine()) {
            engine.runOnce();
        }
        try (SyncEngine without = SyncEngine.builder().provider(provider).watermarks(watermarks).deadLetters(store)
                .track(TrackedObject.of(ITEMS, "public.items_changes")).destination("healthy", healthy).build()) {
            long id = without.deadLetters().list(ITEMS).get(0).id();
            assertThatThrownBy(() -> without.deadLetters().replay(id))
                    .isInstanceOfSatisfying(TidemarkException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_DESTINATION))
                    .hasMessageContaining("no destination named 'broken' (it has [healthy])");
            assertThatThrownBy(() -> without.deadLetters().replayAll(ITEMS, "broken"))
                    .isInstanceOfSatisfying(TidemarkException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_DESTINATION));
            assertThat(store.claim(id, "next", Instant.now(), Instant.now().plusSeconds(1)))
                    .as("the refused replay released its claim").isPresent();
            assertThat(without.deadLetters().discard(id)).isTrue();
        }
    }

    @Test
    void without_a_store_every_call_says_how_to_configure_one() {
        try (SyncEngine engine = SyncEngine.builder().provider(provider).watermarks(watermarks)
                .track(TrackedObject.of(ITEMS, "public.items_changes")).destination("healthy", healthy).build()) {
            assertThatThrownBy(() -> engine.deadLetters().list(ITEMS))
                    .isInstanceOfSatisfying(TidemarkException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                    .hasMessageContaining("builder.deadLetters(JdbcDeadLetterStore.create(dataSource))");
        }
    }
}
