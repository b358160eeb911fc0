package io.tidemark.postgres.coordination;

import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Coordination;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code close()} with coordination: it lets the pages in flight finish and their positions be written (within the
 * shutdown timeout), then hands the lease back and removes the instance's heartbeat at once, so another instance
 * can take the object without waiting for the lease to expire.
 */
@EmbeddedPostgresTest
class BoundedShutdownTest {

    private static final String OBJECT = "stream_01";

    private final DataSource ds;

    BoundedShutdownTest(TestDatabase database) throws Exception {
        this.ds = database.dataSource();
        StreamFixture.install(ds, 1);
    }

    @Test
    void close_finishes_the_pages_in_flight_writes_their_positions_then_hands_the_lease_back() throws Exception {
        for (long v = 1; v <= 40; v++) {
            StreamFixture.write(ds, 1, v); // two pages of 20
        }
        CountDownLatch delivering = new CountDownLatch(1);
        List<ChangeBatch> given = new CopyOnWriteArrayList<>();
        JdbcWatermarkStore store = JdbcWatermarkStore.create(ds);
        SyncEngine engine = SyncEngine.builder()
                .name("a")
                .provider(PostgresProvider.create(ds))
                .watermarks(store)
                .pageSize(20)
                .shutdownTimeout(Duration.ofSeconds(20))
                .track(TrackedObject.of(OBJECT, "public." + OBJECT))
                .destination("d1", batch -> {
                    delivering.countDown();
                    Thread.sleep(700); // a slow destination: the cycle is in flight when close() is called
                    given.add(batch);
                })
                .coordination(Coordination.builder().instanceId("a").leaseDuration(Duration.ofSeconds(30)).build())
                .build();
        engine.start();
        assertThat(delivering.await(30, TimeUnit.SECONDS)).isTrue();

        engine.close();

        assertThat(given).extracting(ChangeBatch::pageNumber).containsExactly(1, 2);
        assertThat(store.load(OBJECT).orElseThrow().version()).hasValue(40);
        assertThat(StreamFixture.holders(ds)).as("the 30 s lease was handed back at once").isEmpty();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM tidemark.sync_state_instances")) {
            rs.next();
            assertThat(rs.getInt(1)).as("the heartbeat is gone").isZero();
        }
    }
}
