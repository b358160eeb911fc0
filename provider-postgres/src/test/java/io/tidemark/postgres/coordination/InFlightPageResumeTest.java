package io.tidemark.postgres.coordination;

import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Coordination;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.Destination;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A page in flight after page 1 of a response of several pages: instance a delivered page 1 (its position moved to
 * the boundary before page 2), recorded page 2 and was cut off while offering it. Instance b takes the object over
 * and delivers page 2 again under its key only when that is the same page: the same page size, and the position
 * still exactly where page 2 left it. Otherwise it reads from the position as usual, and nothing is skipped.
 */
@EmbeddedPostgresTest
class InFlightPageResumeTest {

    private static final Duration LEASE = Duration.ofSeconds(2);
    /** The database belongs to the class: each test has an object of its own. */
    private static final AtomicInteger TESTS = new AtomicInteger();
    private static final int PAGE = 3;

    private final String object;
    private final DataSource ds;
    private final JdbcWatermarkStore store;
    private final AtomicBoolean partitioned = new AtomicBoolean();
    private final CountDownLatch unstick = new CountDownLatch(1);
    private final List<ChangeBatch> givenToB = new CopyOnWriteArrayList<>();
    private final List<ObjectReport> reportsOfB = new CopyOnWriteArrayList<>();
    private SyncEngine a;
    private SyncEngine b;

    InFlightPageResumeTest(TestDatabase database) throws Exception {
        this.ds = database.dataSource();
        StreamFixture.installOnce(ds, 5);
        this.object = StreamFixture.objectNames(5).get(TESTS.getAndIncrement());
        this.store = JdbcWatermarkStore.create(ds);
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

    private SyncEngine engine(String instance, DataSource provider, DataSource leases, int pageSize,
                              Destination destination, SyncListener... listeners) {
        SyncEngine.Builder builder = SyncEngine.builder()
                .name(instance)
                .provider(PostgresProvider.create(provider))
                .watermarks(JdbcWatermarkStore.create(leases))
                .pollInterval(Duration.ofMillis(100))
                .pageSize(pageSize)
                .shutdownTimeout(Duration.ofSeconds(1))
                .checkOnBuild(false)
                .track(TrackedObject.of(object, "public." + object))
                .destination("d1", destination)
                .coordination(Coordination.builder().instanceId(instance).leaseDuration(LEASE).build());
        for (SyncListener listener : listeners) {
            builder.listener(listener);
        }
        return builder.build();
    }

    /**
     * a delivers versions 1-2, then 3-11 in pages of 3: page 1 (3-5) is accepted and the position moves to 5, page 2
     * (6-8) is recorded and stuck at the destination; a is cut off, and 12-14 are written meanwhile. Returns the
     * stuck page.
     */
    private ChangeBatch pageTwoInFlightAtA() throws Exception {
        AtomicBoolean stickOnPageTwo = new AtomicBoolean();
        CountDownLatch stuck = new CountDownLatch(1);
        List<ChangeBatch> givenToA = new CopyOnWriteArrayList<>();
        a = engine("a", ds, StreamFixture.partitionable(ds, partitioned), PAGE, batch -> {
            givenToA.add(batch);
            if (stickOnPageTwo.get() && batch.pageNumber() == 2) {
                stuck.countDown();
                unstick.await();
            }
        });
        a.start();
        StreamFixture.writeRange(ds, object, 1, 2);
        Await.until(Duration.ofSeconds(20), "a delivered versions 1 and 2", () -> watermark() == 2);
        stickOnPageTwo.set(true);
        StreamFixture.writeRange(ds, object, 3, 11);
        assertThat(stuck.await(20, TimeUnit.SECONDS)).as("a's destination was given page 2").isTrue();
        ChangeBatch inFlight = givenToA.get(givenToA.size() - 1);
        assertThat(versions(inFlight)).containsExactly(6L, 7L, 8L);
        assertThat(inFlight.pageNumber()).isEqualTo(2);
        assertThat(inFlight.pageCount()).isEqualTo(3);
        assertThat(position()).as("page 1 was accepted before page 2 was offered").isEqualTo(5);
        partitioned.set(true); // a's lease runs out with page 2 in flight
        StreamFixture.writeRange(ds, object, 12, 14);
        return inFlight;
    }

    private void startB(DataSource provider, int pageSize) throws Exception {
        b = engine("b", provider, ds, pageSize, givenToB::add, new SyncListener() {
            @Override
            public void onReport(ObjectReport report) {
                reportsOfB.add(report);
            }
        });
        b.start();
        Await.until(Duration.ofSeconds(30), "b took the object over and stored version 14", () -> position() == 14);
    }

    @Test
    void a_page_after_page_one_comes_back_under_its_key_and_the_pages_before_it_are_not_offered_again()
            throws Exception {
        ChangeBatch inFlight = pageTwoInFlightAtA();

        startB(ds, PAGE);

        ChangeBatch again = givenToB.get(0);
        assertThat(again.idempotencyKey()).isEqualTo(inFlight.idempotencyKey());
        assertThat(versions(again)).isEqualTo(versions(inFlight));
        assertThat(givenToB.stream().flatMap(batch -> versions(batch).stream()))
                .as("page 1 is not offered again; pages 2 and 3, then the changes written since, once each")
                .containsExactlyElementsOf(range(6, 14));
        assertThat(reportsOfB.stream().filter(r -> r.outcome() == Outcome.DELIVERED).findFirst().orElseThrow()
                .changeCount()).as("the resumed cycle counts the changes of the pages it delivered").isEqualTo(6);
    }

    @Test
    void a_changed_page_size_reads_from_the_position_as_usual_and_skips_nothing() throws Exception {
        ChangeBatch inFlight = pageTwoInFlightAtA();

        startB(ds, 4); // 9 rows make 3 pages of 4 too: only the page size tells the pages apart

        assertThat(givenToB.stream().flatMap(batch -> versions(batch).stream()))
                .as("every change after the position, once, none skipped").containsExactlyElementsOf(range(6, 14));
        assertThat(givenToB).extracting(ChangeBatch::idempotencyKey)
                .as("other rows are never sent under the key of the page in flight")
                .doesNotContain(inFlight.idempotencyKey());
    }

    @Test
    void a_record_whose_boundary_is_not_the_stored_position_is_ignored() throws Exception {
        ChangeBatch inFlight = pageTwoInFlightAtA();
        // The position no longer where page 2 left it (as an instance that does not record its pages may leave
        // it): resuming page 2 would skip versions 4 and 5.
        Await.until(Duration.ofSeconds(20), "a's lease ran out",
                () -> !StreamFixture.holders(ds).containsKey(object));
        setPosition(3);

        startB(ds, PAGE);

        assertThat(givenToB.stream().flatMap(batch -> versions(batch).stream()))
                .as("read from the stored position: nothing skipped").containsExactlyElementsOf(range(4, 14));
        assertThat(givenToB).extracting(ChangeBatch::idempotencyKey).doesNotContain(inFlight.idempotencyKey());
    }

    @Test
    void a_failed_resume_call_keeps_the_record_and_the_next_cycle_delivers_the_page_under_its_key()
            throws Exception {
        ChangeBatch inFlight = pageTwoInFlightAtA();
        AtomicBoolean unreachable = new AtomicBoolean(true);
        DataSource provider = StreamFixture.partitionable(ds, unreachable);
        reportsOfB.clear();
        b = engine("b", provider, ds, PAGE, givenToB::add, new SyncListener() {
            @Override
            public void onReport(ObjectReport report) {
                reportsOfB.add(report);
                unreachable.set(false); // the database is back after the first cycle
            }
        });
        b.start();
        Await.until(Duration.ofSeconds(30), "b took the object over and stored version 14", () -> position() == 14);

        assertThat(reportsOfB.get(0).outcome()).as("b's first cycle failed on the call").isEqualTo(Outcome.FAILED);
        assertThat(givenToB.get(0).idempotencyKey()).as("the next one still delivered the page under its key")
                .isEqualTo(inFlight.idempotencyKey());
        assertThat(givenToB.stream().flatMap(batch -> versions(batch).stream()))
                .containsExactlyElementsOf(range(6, 14));
    }

    @Test
    void a_destination_the_page_was_not_offered_to_is_called_apart_and_the_others_still_get_the_page_under_its_key()
            throws Exception {
        ChangeBatch inFlight = pageTwoInFlightAtA();
        Await.until(Duration.ofSeconds(20), "a's lease ran out",
                () -> !StreamFixture.holders(ds).containsKey(object));
        // d2, added since, stands where d1 stands: one group, of which the page in flight knows only d1.
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO tidemark.sync_state_positions (object_name, destination, version) VALUES (?, 'd2', 5)")) {
            ps.setString(1, object);
            ps.executeUpdate();
        }
        List<ChangeBatch> givenToD2 = new CopyOnWriteArrayList<>();
        b = SyncEngine.builder()
                .name("b")
                .provider(PostgresProvider.create(ds))
                .watermarks(JdbcWatermarkStore.create(ds))
                .pollInterval(Duration.ofMillis(100))
                .pageSize(PAGE)
                .shutdownTimeout(Duration.ofSeconds(1))
                .track(TrackedObject.of(object, "public." + object))
                .destination("d1", givenToB::add)
                .destination("d2", givenToD2::add)
                .coordination(Coordination.builder().instanceId("b").leaseDuration(LEASE).build())
                .build();
        b.start();
        Await.until(Duration.ofSeconds(30), "b delivered to both up to 14",
                () -> position() == 14 && position("d2") == 14);

        assertThat(givenToB.get(0).idempotencyKey()).as("d1 got the page in flight under its key")
                .isEqualTo(inFlight.idempotencyKey());
        assertThat(givenToB.stream().flatMap(batch -> versions(batch).stream()))
                .containsExactlyElementsOf(range(6, 14));
        assertThat(givenToD2.stream().flatMap(batch -> versions(batch).stream()))
                .as("d2 from its position, as usual").containsExactlyElementsOf(range(6, 14));
        assertThat(givenToD2).extracting(ChangeBatch::idempotencyKey).doesNotContain(inFlight.idempotencyKey());
    }

    private void setPosition(long version) throws Exception {
        try (Connection c = ds.getConnection(); PreparedStatement positions = c.prepareStatement(
                "UPDATE tidemark.sync_state_positions SET version = ? WHERE object_name = ?");
             PreparedStatement state = c.prepareStatement(
                     "UPDATE tidemark.sync_state SET version = ? WHERE object_name = ?")) {
            for (PreparedStatement ps : List.of(positions, state)) {
                ps.setLong(1, version);
                ps.setString(2, object);
                assertThat(ps.executeUpdate()).isEqualTo(1);
            }
        }
    }

    private long watermark() {
        return store.load(object).map(s -> s.version().orElse(-1)).orElse(-1L);
    }

    private long position() {
        return position("d1");
    }

    private long position(String destination) {
        return store.load(object).map(s -> s.positions().get(destination)).map(p -> p.position().orElse(-1))
                .orElse(-1L);
    }

    private static List<Long> range(long first, long last) {
        return LongStream.rangeClosed(first, last).boxed().toList();
    }

    private static List<Long> versions(ChangeBatch batch) {
        return batch.changes().stream().map(c -> c.version().getAsLong()).toList();
    }
}
