package io.tidemark.postgres.coordination;

import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Coordination;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.Destination;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The page in flight when a holder stops is delivered again by the instance that takes the object over under the
 * same idempotency key, with the same changes, even when it was the partial tail of the stream and more changes
 * were written meanwhile (which a plain re-read from the position would have folded into a new, longer page under
 * a new key). Only then do the newer changes follow, as a page of their own.
 */
@EmbeddedPostgresTest
class InFlightPageFailoverTest {

    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final String OBJECT = "stream_01";

    private final DataSource ds;
    private final AtomicBoolean partitioned = new AtomicBoolean();
    private final CountDownLatch unstick = new CountDownLatch(1);
    private SyncEngine a;
    private SyncEngine b;

    InFlightPageFailoverTest(TestDatabase database) throws Exception {
        this.ds = database.dataSource();
        StreamFixture.install(ds, 1);
    }

    @AfterEach
    void close() {
        partitioned.set(false);
        unstick.countDown();
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
    }


    private SyncEngine engine(String instance, DataSource store, Destination destination) {
        return SyncEngine.builder()
                .name(instance)
                .provider(PostgresProvider.create(ds))
                .watermarks(JdbcWatermarkStore.create(store))
                .pollInterval(Duration.ofMillis(100))
                .pageSize(20)
                .shutdownTimeout(Duration.ofSeconds(1))
                .track(TrackedObject.of(OBJECT, "public." + OBJECT))
                .destination("d1", destination)
                .coordination(Coordination.builder().instanceId(instance).leaseDuration(LEASE).build())
                .build();
    }

    @Test
    void a_partial_page_in_flight_comes_back_under_the_same_key_with_the_same_changes() throws Exception {
        StreamFixture.writeRange(ds, OBJECT, 1, 5);
        AtomicBoolean stickNext = new AtomicBoolean();
        CountDownLatch stuck = new CountDownLatch(1);
        List<ChangeBatch> givenToA = new CopyOnWriteArrayList<>();
        a = engine("a", StreamFixture.partitionable(ds, partitioned), batch -> {
            givenToA.add(batch);
            if (stickNext.get()) {
                stuck.countDown();
                unstick.await();
            }
        });
        a.start();
        JdbcWatermarkStore store = JdbcWatermarkStore.create(ds);
        Await.until(Duration.ofSeconds(20), "a delivered versions 1 to 5 and stored them",
                () -> store.load(OBJECT).map(s -> s.version().equals(OptionalLong.of(5))).orElse(false));

        stickNext.set(true);
        // 10 changes in one transaction: one partial page of the page size 20
        StreamFixture.writeRange(ds, OBJECT, 6, 15);
        assertThat(stuck.await(20, TimeUnit.SECONDS)).as("a's destination was given the partial page").isTrue();
        ChangeBatch inFlight = givenToA.get(givenToA.size() - 1);
        assertThat(versions(inFlight)).containsExactly(6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L, 15L);
        assertThat(inFlight.pageCount()).isEqualTo(1);

        partitioned.set(true); // a stops renewing: its lease runs out with the page in flight and no position
        StreamFixture.writeRange(ds, OBJECT, 16, 25); // written after the page in flight was read
        List<ChangeBatch> givenToB = new CopyOnWriteArrayList<>();
        b = engine("b", ds, givenToB::add);
        b.start();
        Await.until(Duration.ofSeconds(30), "b took the object over and stored version 25",
                () -> store.load(OBJECT).map(s -> s.version().equals(OptionalLong.of(25))).orElse(false));

        ChangeBatch again = givenToB.get(0);
        assertThat(again.idempotencyKey()).as("the duplicate carries the key of the page in flight")
                .isEqualTo(inFlight.idempotencyKey());
        assertThat(again.batchId()).isEqualTo(inFlight.batchId());
        assertThat(versions(again)).as("and the same changes").isEqualTo(versions(inFlight));
        assertThat(givenToB.stream().skip(1).flatMap(batch -> versions(batch).stream()))
                .as("then the changes written since, once, under keys of their own")
                .containsExactly(16L, 17L, 18L, 19L, 20L, 21L, 22L, 23L, 24L, 25L);
        assertThat(givenToB.stream().skip(1).map(ChangeBatch::idempotencyKey))
                .doesNotContain(inFlight.idempotencyKey());
        assertThat(store.load(OBJECT).orElseThrow().positions().get("d1").position()).hasValue(25);
    }

    /** Versions {@code first..last} of the object, in one transaction. */
    private static List<Long> versions(ChangeBatch batch) {
        return batch.changes().stream().map(c -> c.version().getAsLong()).toList();
    }
}
