package io.tidemark.testing;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.DeadLetterStore;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The behaviour every {@link DeadLetterStore} must have: one letter per object, destination and page (a page
 * refused again is merged into it), version order, exclusive claims with a lease, and purge by age. Extend it in a
 * test of your own store and implement {@link #store()}; each test uses object names of its own, so the store may
 * be shared between tests.
 */
public abstract class DeadLetterStoreContract {

    /** Whole microseconds: what SQL timestamp columns keep. */
    private static final Instant T1 = Instant.parse("2026-01-02T03:04:05.123456Z");
    private static final Instant T2 = T1.plusSeconds(60);
    private static final Instant T3 = T2.plusSeconds(60);
    private static final Instant LATER = T3.plusSeconds(3600);

    protected abstract DeadLetterStore store();

    private static String name() {
        return "contract-" + UUID.randomUUID();
    }

    /** Page {@code page} of {@code pageCount} of the cycle {@code from}-{@code to} of {@code object}, one change. */
    public static ChangeBatch page(String object, long from, long to, int page, int pageCount) {
        String raw = "{\"$operation\":\"I\",\"$version\":" + to + ",\"Id\":" + page + ",\"Name\":\"ü ✓\"}";
        Change change = Change.fromRaw(Operation.INSERT, to, null, raw.getBytes(StandardCharsets.UTF_8));
        return new ChangeBatch(object, from, to, SyncType.DIFF, 0, List.of(change), page, pageCount, pageCount);
    }

    private static DeadLetter letter(ChangeBatch batch, String destination, String error, Instant at) {
        return DeadLetter.of(batch, destination, new IllegalStateException(error), at);
    }

    @Test
    void a_letter_keeps_the_page_its_envelope_and_its_failure() {
        String object = name();
        ChangeBatch batch = page(object, 4, 9, 2, 3);
        DeadLetter stored = store().record(letter(batch, "audit", "refused: ✗", T1));

        assertThat(stored.id()).isPositive();
        DeadLetter found = store().find(stored.id()).orElseThrow();
        assertThat(found).isEqualTo(stored);
        assertThat(found.objectName()).isEqualTo(object);
        assertThat(found.destination()).isEqualTo("audit");
        assertThat(found.idempotencyKey()).isEqualTo(batch.idempotencyKey());
        assertThat(found.batchId()).isEqualTo(batch.batchId());
        assertThat(found.pageNumber()).isEqualTo(2);
        assertThat(found.pageCount()).isEqualTo(3);
        assertThat(found.fromVersion()).isEqualTo(4);
        assertThat(found.toVersion()).isEqualTo(9);
        assertThat(found.changeCount()).isEqualTo(1);
        assertThat(found.envelope()).contains("\"changes\":[{\"$operation\":\"I\",\"$version\":9,\"Id\":2,"
                + "\"Name\":\"ü ✓\"}]");
        assertThat(found.attempts()).isEqualTo(1);
        assertThat(found.failures()).containsExactly(
                new DeadLetter.Failure(T1, "java.lang.IllegalStateException: refused: ✗"));
        assertThat(found.firstFailedAt()).isEqualTo(T1);
        assertThat(found.lastFailedAt()).isEqualTo(T1);
        assertThat(store().find(stored.id() + 1_000_000)).isEmpty();
    }

    @Test
    void the_same_page_refused_again_updates_its_letter_instead_of_adding_one() {
        String object = name();
        ChangeBatch batch = page(object, 0, 5, 1, 1);
        DeadLetter first = store().record(letter(batch, "audit", "one", T1));
        DeadLetter second = store().record(letter(batch, "audit", "two", T2));
        DeadLetter otherDestination = store().record(letter(batch, "search", "three", T2));

        assertThat(second.id()).isEqualTo(first.id());
        assertThat(otherDestination.id()).isNotEqualTo(first.id());
        assertThat(store().list(object, "audit")).singleElement().satisfies(l -> {
            assertThat(l.attempts()).isEqualTo(2);
            assertThat(l.failures()).extracting(DeadLetter.Failure::error)
                    .containsExactly("java.lang.IllegalStateException: one", "java.lang.IllegalStateException: two");
            assertThat(l.firstFailedAt()).isEqualTo(T1);
            assertThat(l.lastFailedAt()).isEqualTo(T2);
            assertThat(l.lastError()).isEqualTo("java.lang.IllegalStateException: two");
        });
        assertThat(store().list(object)).hasSize(2);
    }

    @Test
    void a_letter_keeps_its_latest_failures_and_counts_every_attempt() {
        String object = name();
        ChangeBatch batch = page(object, 0, 5, 1, 1);
        for (int i = 0; i < DeadLetter.MAX_FAILURES + 5; i++) {
            store().record(letter(batch, "audit", "failure " + i, T1.plusSeconds(i)));
        }
        DeadLetter stored = store().list(object).get(0);
        assertThat(stored.attempts()).isEqualTo(DeadLetter.MAX_FAILURES + 5);
        assertThat(stored.failures()).hasSize(DeadLetter.MAX_FAILURES);
        assertThat(stored.failures().get(0).error()).endsWith("failure 5");
        assertThat(stored.lastError()).endsWith("failure " + (DeadLetter.MAX_FAILURES + 4));
        assertThat(stored.firstFailedAt()).isEqualTo(T1);
    }

    @Test
    void letters_are_listed_in_version_order_per_object_and_per_destination() {
        String object = name();
        DeadLetter late = store().record(letter(page(object, 20, 30, 1, 2), "audit", "x", T1));
        DeadLetter early2 = store().record(letter(page(object, 10, 20, 2, 2), "audit", "x", T1));
        DeadLetter early1 = store().record(letter(page(object, 10, 20, 1, 2), "audit", "x", T2));
        DeadLetter search = store().record(letter(page(object, 10, 20, 1, 2), "search", "x", T1));
        store().record(letter(page(name(), 0, 1, 1, 1), "audit", "x", T1));

        assertThat(store().list(object, "audit")).extracting(DeadLetter::id)
                .containsExactly(early1.id(), early2.id(), late.id());
        assertThat(store().list(object, "search")).extracting(DeadLetter::id).containsExactly(search.id());
        assertThat(store().list(object)).extracting(DeadLetter::id).containsExactlyInAnyOrder(
                early1.id(), early2.id(), late.id(), search.id());
        assertThat(store().list(object).get(3).id()).isEqualTo(late.id());
        assertThat(store().list(object, "nobody")).isEmpty();
    }

    @Test
    void a_claimed_letter_is_claimed_by_no_one_else_until_its_lease_ends() {
        String object = name();
        DeadLetter stored = store().record(letter(page(object, 0, 5, 1, 1), "audit", "x", T1));

        assertThat(store().claim(stored.id(), "a", T2, T3)).hasValueSatisfying(l -> assertThat(l.id())
                .isEqualTo(stored.id()));
        assertThat(store().claim(stored.id(), "b", T2, T3)).isEmpty();
        assertThat(store().claimNext(object, "audit", "b", T2, T3, 10)).isEmpty();
        assertThat(store().resolve(stored.id(), "b")).isFalse();
        assertThat(store().release(stored.id(), "b")).isFalse();

        // The lease ran out (its holder died): someone else may claim it, and the first holder lost it.
        assertThat(store().claim(stored.id(), "b", LATER, LATER.plusSeconds(60))).isPresent();
        assertThat(store().resolve(stored.id(), "a")).isFalse();
        assertThat(store().resolve(stored.id(), "b")).isTrue();
        assertThat(store().find(stored.id())).isEmpty();
        assertThat(store().claim(stored.id(), "c", LATER, LATER.plusSeconds(60))).isEmpty();
    }

    @Test
    void claim_next_takes_free_letters_in_version_order_and_never_overtakes_another_claimant() {
        String object = name();
        DeadLetter third = store().record(letter(page(object, 20, 30, 1, 1), "audit", "x", T1));
        DeadLetter second = store().record(letter(page(object, 10, 20, 2, 2), "audit", "x", T1));
        DeadLetter first = store().record(letter(page(object, 10, 20, 1, 2), "audit", "x", T1));
        DeadLetter otherDestination = store().record(letter(page(object, 0, 10, 1, 1), "search", "x", T1));

        assertThat(store().claimNext(object, "audit", "a", T2, T3, 2)).extracting(DeadLetter::id)
                .containsExactly(first.id(), second.id());
        // "a" still holds earlier versions: "b" must not send later ones ahead of them.
        assertThat(store().claimNext(object, "audit", "b", T2, T3, 10)).isEmpty();
        assertThat(store().claimNext(object, "search", "b", T2, T3, 10)).extracting(DeadLetter::id)
                .containsExactly(otherDestination.id());
        assertThat(store().claimNext(object, "audit", "a", T2, T3, 10)).extracting(DeadLetter::id)
                .containsExactly(third.id());
        assertThat(store().claimNext(object, "audit", "a", T2, T3, 10)).isEmpty();

        assertThat(store().release(first.id(), "a")).isTrue();
        assertThat(store().resolve(second.id(), "a")).isTrue();
        assertThat(store().resolve(third.id(), "a")).isTrue();
        assertThat(store().claimNext(object, "audit", "b", T2, T3, 10)).extracting(DeadLetter::id)
                .containsExactly(first.id());
    }

    @Test
    void a_failed_replay_counts_an_attempt_and_frees_the_letter() {
        String object = name();
        DeadLetter stored = store().record(letter(page(object, 0, 5, 1, 1), "audit", "x", T1));
        store().claim(stored.id(), "a", T2, T3);

        assertThat(store().releaseFailed(stored.id(), "b", new DeadLetter.Failure(T2, "not mine"))).isFalse();
        assertThat(store().releaseFailed(stored.id(), "a", new DeadLetter.Failure(T3, "still down"))).isTrue();
        DeadLetter after = store().find(stored.id()).orElseThrow();
        assertThat(after.attempts()).isEqualTo(2);
        assertThat(after.lastError()).isEqualTo("still down");
        assertThat(after.lastFailedAt()).isEqualTo(T3);
        assertThat(after.firstFailedAt()).isEqualTo(T1);
        assertThat(store().releaseFailed(stored.id(), "a", new DeadLetter.Failure(T3, "again"))).isFalse();
        assertThat(store().claim(stored.id(), "b", T3, LATER)).isPresent();
    }

    @Test
    void a_page_accepted_by_its_destination_resolves_its_letter_by_key() {
        String object = name();
        ChangeBatch batch = page(object, 0, 5, 1, 1);
        DeadLetter stored = store().record(letter(batch, "audit", "x", T1));
        DeadLetter other = store().record(letter(batch, "search", "x", T1));
        store().claim(stored.id(), "a", T2, T3);

        assertThat(store().resolve(object, "audit", batch.idempotencyKey())).isTrue();
        assertThat(store().resolve(object, "audit", batch.idempotencyKey())).isFalse();
        assertThat(store().list(object)).extracting(DeadLetter::id).containsExactly(other.id());
        assertThat(store().delete(other.id())).isTrue();
        assertThat(store().delete(other.id())).isFalse();
    }

    @Test
    void purge_deletes_letters_whose_last_failure_is_older_than_the_cut_off() {
        String object = name();
        DeadLetter old = store().record(letter(page(object, 0, 5, 1, 1), "audit", "x", T1));
        DeadLetter refreshed = store().record(letter(page(object, 5, 9, 1, 1), "audit", "x", T1));
        store().record(letter(page(object, 5, 9, 1, 1), "audit", "x", T3));
        DeadLetter recent = store().record(letter(page(object, 9, 12, 1, 1), "audit", "x", T2));

        assertThat(store().purge(T2)).isGreaterThanOrEqualTo(1);
        assertThat(store().list(object)).extracting(DeadLetter::id).containsExactly(refreshed.id(), recent.id());
        assertThat(store().find(old.id())).isEmpty();
    }

    @Test
    void concurrent_records_of_one_page_end_in_one_letter_counting_every_attempt() throws Exception {
        String object = name();
        ChangeBatch batch = page(object, 0, 5, 1, 1);
        int threads = 6;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<DeadLetter>> results = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                Instant at = T1.plusSeconds(i);
                results.add(pool.submit(() -> {
                    start.await(30, TimeUnit.SECONDS);
                    return store().record(letter(batch, "audit", "x", at));
                }));
            }
            Set<Long> ids = new HashSet<>();
            for (Future<DeadLetter> result : results) {
                ids.add(result.get(60, TimeUnit.SECONDS).id());
            }
            assertThat(ids).hasSize(1);
        } finally {
            pool.shutdownNow();
        }
        assertThat(store().list(object)).singleElement()
                .satisfies(l -> assertThat(l.attempts()).isEqualTo(threads));
    }

    @Test
    void concurrent_claims_never_hand_out_one_letter_twice() throws Exception {
        String object = name();
        int letters = 40;
        for (int i = 0; i < letters; i++) {
            store().record(letter(page(object, i * 10L, i * 10L + 10, 1, 1), "audit", "x", T1));
        }
        int threads = 4;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<Long>>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String claimant = "claimant-" + t;
                results.add(pool.submit(() -> {
                    start.await(30, TimeUnit.SECONDS);
                    List<Long> mine = new ArrayList<>();
                    for (DeadLetter l : store().list(object, "audit")) {
                        store().claim(l.id(), claimant, T2, T3).ifPresent(c -> mine.add(c.id()));
                    }
                    return mine;
                }));
            }
            List<Long> all = new ArrayList<>();
            for (Future<List<Long>> result : results) {
                all.addAll(result.get(60, TimeUnit.SECONDS));
            }
            assertThat(all).doesNotHaveDuplicates().hasSize(letters);
        } finally {
            pool.shutdownNow();
        }
    }
}
