package io.tidemark.postgres.coordination;

import io.tidemark.postgres.PostgresProvider;
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
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two coordinated instances configured differently for a while (a rolling deploy that adds a destination): the one
 * without destination d2 must not move an object's watermark past d2's stored position while the other, which has
 * d2, is alive; when the object's lease goes back to it, d2 continues where it stopped, and no change is skipped.
 */
@EmbeddedPostgresTest
class DifferentlyConfiguredInstancesTest {

    private static final Duration LEASE = Duration.ofSeconds(3);

    private final DataSource ds;
    private final JdbcWatermarkStore store;
    private SyncEngine a;
    private SyncEngine b;

    DifferentlyConfiguredInstancesTest(TestDatabase database) throws Exception {
        this.ds = database.dataSource();
        StreamFixture.install(ds, 2);
        this.store = JdbcWatermarkStore.create(ds);
    }

    @AfterEach
    void close() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
    }

    private SyncEngine engine(String instance, Map<String, Destination> destinations) {
        SyncEngine.Builder builder = SyncEngine.builder()
                .name(instance)
                .provider(PostgresProvider.create(ds))
                .watermarks(store)
                .pollInterval(Duration.ofMillis(100))
                .shutdownTimeout(Duration.ofSeconds(5))
                .coordination(Coordination.builder().instanceId(instance).leaseDuration(LEASE).build());
        StreamFixture.objectNames(2).forEach(name -> builder.track(TrackedObject.of(name, "public." + name)));
        destinations.forEach(builder::destination);
        return builder.build();
    }

    @Test
    void an_instance_without_a_destination_does_not_move_the_watermark_past_it_and_the_destination_skips_nothing()
            throws Exception {
        List<String> d2 = new CopyOnWriteArrayList<>();
        a = engine("a", Map.of("d1", batch -> { }, "d2", StreamFixture.versionRecorder(d2)));
        a.start();
        Await.until(Duration.ofSeconds(30), "a, alone, holds both objects",
                () -> StreamFixture.counts(StreamFixture.holders(ds)).equals(Map.of("a", 2)));
        for (long v = 1; v <= 5; v++) {
            StreamFixture.write(ds, 2, v);
        }
        for (String name : StreamFixture.objectNames(2)) {
            Await.until(Duration.ofSeconds(30), name + " delivered up to 5 by a", 
                    () -> StreamFixture.watermark(store, name) == 5);
        }

        b = engine("b", Map.of("d1", batch -> { })); // b does not have d2 (yet)
        b.start();
        Await.until(Duration.ofSeconds(30), "the objects are shared one each",
                () -> StreamFixture.counts(StreamFixture.holders(ds)).equals(Map.of("a", 1, "b", 1)));
        String ofB = StreamFixture.holders(ds).entrySet().stream().filter(e -> e.getValue().equals("b"))
                .map(Map.Entry::getKey).findFirst().orElseThrow();
        for (long v = 6; v <= 10; v++) {
            StreamFixture.write(ds, 2, v);
        }
        Await.until(Duration.ofSeconds(30), "b delivered " + ofB + " to d1 up to 10",
                () -> StreamFixture.position(store, ofB, "d1") == 10);

        assertThat(StreamFixture.position(store, ofB, "d2")).as("b does not deliver to d2").isEqualTo(5);
        assertThat(StreamFixture.watermark(store, ofB)).as("so the watermark stays at d2's position").isEqualTo(5);

        b.close(); // the lease goes back to a, which has d2
        b = null;
        Await.until(Duration.ofSeconds(30), "a delivered " + ofB + " to d2 up to 10",
                () -> StreamFixture.position(store, ofB, "d2") == 10);
        assertThat(d2.stream().filter(s -> s.startsWith(ofB + ":")))
                .as("d2 got every change of " + ofB + " once, none skipped")
                .containsExactly(ofB + ":1", ofB + ":2", ofB + ":3", ofB + ":4", ofB + ":5", ofB + ":6",
                        ofB + ":7", ofB + ":8", ofB + ":9", ofB + ":10");
        assertThat(StreamFixture.watermark(store, ofB)).isEqualTo(10);
    }
}
