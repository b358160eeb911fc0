package io.tidemark.postgres;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.JdbcDeadLetterStore;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.Destination;
import io.tidemark.testing.DeadLetterStoreContract;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replays of one destination's dead letters from two engines, each with its own store and its own pool
 * connections, running at the same time on two threads each: no letter is sent twice, none is lost, and the
 * destination receives them in version order.
 */
@EmbeddedPostgresTest
class PostgresDeadLetterReplayTest {

    private static final int LETTERS = 40;
    private static final Instant AT = Instant.parse("2026-01-01T00:00:00Z");

    private final TestDatabase database;
    /** Every page the destination accepted, from either engine, in the order it accepted them. */
    private final List<ChangeBatch> received = Collections.synchronizedList(new ArrayList<>());

    PostgresDeadLetterReplayTest(TestDatabase database) {
        this.database = database;
    }

    /** An engine that never runs a cycle here: only its dead letters are used. */
    private SyncEngine engine(String name, String object) {
        Destination audit = batch -> {
            // Slow enough that the replayers overlap for real.
            Thread.sleep(ThreadLocalRandom.current().nextInt(1, 4));
            received.add(batch);
        };
        return SyncEngine.builder().name(name)
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(JdbcWatermarkStore.create(database.dataSource()))
                .deadLetters(JdbcDeadLetterStore.create(database.dataSource()))
                .track(TrackedObject.of(object, "public.unused_changes"))
                .destination("audit", audit)
                .destination("search", batch -> {
                    throw new AssertionError("a replay of audit's letters reached search: " + batch);
                })
                .build();
    }

    /** Letters for "audit" recorded out of version order, and one for "search" that must stay untouched. */
    private List<DeadLetter> seed(String object) {
        JdbcDeadLetterStore store = JdbcDeadLetterStore.create(database.dataSource());
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < LETTERS; i++) {
            order.add(i);
        }
        Collections.shuffle(order, new java.util.Random(7));
        for (int i : order) {
            ChangeBatch page = DeadLetterStoreContract.page(object, i * 10L, i * 10L + 10, 1, 1);
            store.record(DeadLetter.of(page, "audit", new IllegalStateException("down"), AT));
        }
        store.record(DeadLetter.of(DeadLetterStoreContract.page(object, 0, 10, 1, 1), "search",
                new IllegalStateException("down"), AT));
        return store.list(object, "audit");
    }

    @Test
    void concurrent_replays_of_a_destination_send_each_letter_once_and_in_version_order() throws Exception {
        String object = "replay-" + UUID.randomUUID();
        List<DeadLetter> letters = seed(object);
        try (SyncEngine one = engine("one", object); SyncEngine two = engine("two", object)) {
            List<SyncEngine> replayers = List.of(one, one, two, two);
            CyclicBarrier start = new CyclicBarrier(replayers.size());
            ExecutorService pool = Executors.newFixedThreadPool(replayers.size());
            try {
                List<Future<Integer>> runs = new ArrayList<>();
                for (SyncEngine engine : replayers) {
                    runs.add(pool.submit(() -> {
                        start.await(30, TimeUnit.SECONDS);
                        int delivered = 0;
                        // Keep at it until nothing is left: replays that find the destination busy come back.
                        while (!engine.deadLetters().list(object, "audit").isEmpty()) {
                            delivered += engine.deadLetters().replayAll(object, "audit").delivered();
                        }
                        return delivered;
                    }));
                }
                int total = 0;
                for (Future<Integer> run : runs) {
                    total += run.get(120, TimeUnit.SECONDS);
                }
                assertThat(total).isEqualTo(LETTERS);
            } finally {
                pool.shutdownNow();
            }
            assertThat(received).extracting(ChangeBatch::idempotencyKey).doesNotHaveDuplicates()
                    .containsExactlyElementsOf(letters.stream().map(DeadLetter::idempotencyKey).toList());
            assertThat(received).extracting(ChangeBatch::fromVersion).isSorted();
            assertThat(one.deadLetters().list(object)).singleElement()
                    .satisfies(l -> assertThat(l.destination()).isEqualTo("search"));
        }
    }

    @Test
    void concurrent_replays_of_single_letters_send_each_letter_once() throws Exception {
        String object = "replay-one-" + UUID.randomUUID();
        List<DeadLetter> letters = seed(object);
        try (SyncEngine one = engine("one", object); SyncEngine two = engine("two", object)) {
            List<SyncEngine> replayers = List.of(one, one, two, two);
            CyclicBarrier start = new CyclicBarrier(replayers.size());
            ExecutorService pool = Executors.newFixedThreadPool(replayers.size());
            try {
                List<Future<Integer>> runs = new ArrayList<>();
                for (SyncEngine engine : replayers) {
                    runs.add(pool.submit(() -> {
                        start.await(30, TimeUnit.SECONDS);
                        int delivered = 0;
                        for (DeadLetter letter : letters) {
                            delivered += engine.deadLetters().replay(letter.id()).delivered();
                        }
                        return delivered;
                    }));
                }
                int total = 0;
                for (Future<Integer> run : runs) {
                    total += run.get(120, TimeUnit.SECONDS);
                }
                assertThat(total).isEqualTo(LETTERS);
            } finally {
                pool.shutdownNow();
            }
            assertThat(received).extracting(ChangeBatch::idempotencyKey).doesNotHaveDuplicates()
                    .containsExactlyInAnyOrderElementsOf(letters.stream().map(DeadLetter::idempotencyKey).toList());
            assertThat(one.deadLetters().list(object, "audit")).isEmpty();
        }
    }
}
