package io.tidemark.postgres.coordination;

import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Coordination;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.SyncListener;
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
 * A holder whose cycle is stuck in a destination while it is cut off from the database past its lease (its
 * renewals fail, as they would during a pause or a partition): another instance takes the object over and delivers
 * it; when the stuck holder comes back, it delivers no further page and moves no position.
 */
@EmbeddedPostgresTest
class FrozenHolderTest {

    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final String OBJECT = "stream_01";

    private final TestDatabase database;
    private final DataSource ds;
    private final AtomicBoolean partitioned = new AtomicBoolean();
    private SyncEngine a;
    private SyncEngine b;

    FrozenHolderTest(TestDatabase database) throws Exception {
        this.database = database;
        this.ds = database.dataSource();
        StreamFixture.install(ds, 1);
    }

    @AfterEach
    void close() {
        partitioned.set(false);
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
    }


    private SyncEngine engine(String instance, DataSource store, io.tidemark.sync.spi.Destination destination,
                              SyncListener listener) {
        return SyncEngine.builder()
                .name(instance)
                .provider(PostgresProvider.create(ds))
                .watermarks(JdbcWatermarkStore.create(store))
                .pollInterval(Duration.ofMillis(100))
                .pageSize(20)
                .shutdownTimeout(Duration.ofSeconds(1))
                .track(TrackedObject.of(OBJECT, "public." + OBJECT))
                .destination("d1", destination)
                .listener(listener)
                .coordination(Coordination.builder().instanceId(instance).leaseDuration(LEASE).build())
                .build();
    }

    @Test
    void a_holder_stuck_past_its_lease_delivers_no_further_page_and_moves_no_position() throws Exception {
        for (long v = 1; v <= 60; v++) {
            StreamFixture.write(ds, 1, v); // 60 changes: three pages of 20 in one response
        }
        CountDownLatch stuck = new CountDownLatch(1);
        CountDownLatch unstick = new CountDownLatch(1);
        List<ChangeBatch> givenToA = new CopyOnWriteArrayList<>();
        List<ObjectReport> reportsOfA = new CopyOnWriteArrayList<>();
        a = engine("a", StreamFixture.partitionable(ds, partitioned), batch -> {
            givenToA.add(batch);
            stuck.countDown();
            unstick.await();
        }, new SyncListener() {
            @Override
            public void onReport(ObjectReport report) {
                reportsOfA.add(report);
            }
        });
        a.start();
        Await.until(Duration.ofSeconds(20), "a holds the object",
                () -> "a".equals(StreamFixture.holders(ds).get(OBJECT)));
        assertThat(stuck.await(20, TimeUnit.SECONDS)).as("a's destination was given page 1").isTrue();

        partitioned.set(true); // a's renewals fail from now on
        List<Long> givenToB = new CopyOnWriteArrayList<>();
        b = engine("b", ds, batch -> batch.changes().forEach(c -> givenToB.add(c.version().getAsLong())),
                new SyncListener() { });
        b.start();
        Await.until(Duration.ofSeconds(20), "b took the object over and delivered all 60 changes",
                () -> givenToB.size() >= 60);
        JdbcWatermarkStore store = JdbcWatermarkStore.create(ds);
        Await.until(Duration.ofSeconds(10), "b's position stored at 60",
                () -> store.load(OBJECT).orElseThrow().version().equals(OptionalLong.of(60)));

        partitioned.set(false);
        unstick.countDown(); // a wakes up, long after its lease ran out
        Await.until(Duration.ofSeconds(10), "a's stuck cycle ended", () -> !reportsOfA.isEmpty());

        ObjectReport ended = reportsOfA.get(0);
        assertThat(ended.outcome()).isEqualTo(Outcome.FAILED);
        assertThat(ended.error()).map(TidemarkException::code).hasValue(ErrorCode.LEASE_LOST);
        assertThat(givenToA).as("a was given page 1 before it was cut off, and nothing after it")
                .extracting(ChangeBatch::pageNumber).containsExactly(1);
        assertThat(store.load(OBJECT).orElseThrow().version()).hasValue(60);
        assertThat(store.load(OBJECT).orElseThrow().positions().get("d1").position()).hasValue(60);
        assertThat(givenToB).hasSize(60).doesNotHaveDuplicates();
        assertThat(StreamFixture.holders(ds)).containsEntry(OBJECT, "b");
    }

}
