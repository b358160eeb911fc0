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
 * Two coordinated instances tracking different object sets for a while (a deploy that adds an object and drops a
 * destination, or one instance reconfigured first): leases are per object, so the instance tracking one object more
 * competes for the same leases, and its holding an object must not move the watermark past the stored position of a
 * destination only the other live instance has.
 */
@EmbeddedPostgresTest
class DifferentlyTrackingInstancesTest {

    private static final Duration LEASE = Duration.ofSeconds(3);

    private final DataSource ds;
    private final JdbcWatermarkStore store;
    private SyncEngine a;
    private SyncEngine b;

    DifferentlyTrackingInstancesTest(TestDatabase database) throws Exception {
        this.ds = database.dataSource();
        StreamFixture.install(ds, 3); // the third only for the instance that tracks one object more
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
        return engine(instance, 2, destinations);
    }

    private SyncEngine engine(String instance, int objects, Map<String, Destination> destinations) {
        SyncEngine.Builder builder = SyncEngine.builder()
                .name(instance)
                .provider(PostgresProvider.create(ds))
                .watermarks(store)
                .pollInterval(Duration.ofMillis(100))
                .shutdownTimeout(Duration.ofSeconds(5))
                .coordination(Coordination.builder().instanceId(instance).leaseDuration(LEASE).build());
        StreamFixture.objectNames(objects).forEach(name -> builder.track(TrackedObject.of(name, "public." + name)));
        destinations.forEach(builder::destination);
        return builder.build();
    }

    @Test
    void an_instance_with_another_object_set_holds_the_watermark_for_the_destinations_of_the_others()
            throws Exception {
        List<String> d2 = new CopyOnWriteArrayList<>();
        a = engine("a", Map.of("d1", batch -> { }, "d2", StreamFixture.versionRecorder(d2)));
        a.start();
        Await.until(Duration.ofSeconds(30), "a, alone, holds both objects",
                () -> StreamFixture.counts(StreamFixture.holders(ds)).equals(Map.of("a", 2)));
        for (long v = 1; v <= 5; v++) {
            StreamFixture.write(ds, 2, v);
        }
        Await.until(Duration.ofSeconds(30), "stream_01 delivered up to 5 by a", 
                () -> StreamFixture.watermark(store, "stream_01") == 5);

        b = engine("b", 3, Map.of("d1", batch -> { })); // other objects, and no d2
        b.start();
        Await.until(Duration.ofSeconds(30), "b holds stream_03",
                () -> "b".equals(StreamFixture.holders(ds).get("stream_03")));
        a.untrack("stream_01"); // a hands stream_01 back (a is still alive, with d2) and b takes it
        Await.until(Duration.ofSeconds(30), "b holds stream_01",
                () -> "b".equals(StreamFixture.holders(ds).get("stream_01")));
        for (long v = 6; v <= 10; v++) {
            StreamFixture.write(ds, 2, v);
        }
        Await.until(Duration.ofSeconds(30), "b delivered stream_01 to d1 up to 10",
                () -> StreamFixture.position(store, "stream_01", "d1") == 10);

        assertThat(StreamFixture.position(store, "stream_01", "d2")).as("b does not deliver to d2").isEqualTo(5);
        assertThat(StreamFixture.watermark(store, "stream_01")).as("so the watermark stays at d2's position")
                .isEqualTo(5);

        b.close(); // stream_01 goes back to a, which tracks it again and has d2
        b = null;
        a.track(TrackedObject.of("stream_01", "public.stream_01"));
        Await.until(Duration.ofSeconds(30), "a delivered stream_01 to d2 up to 10",
                () -> StreamFixture.position(store, "stream_01", "d2") == 10);
        assertThat(d2.stream().filter(s -> s.startsWith("stream_01:")))
                .as("d2 got every change of stream_01 once, none skipped")
                .containsExactly("stream_01:1", "stream_01:2", "stream_01:3", "stream_01:4", "stream_01:5",
                        "stream_01:6", "stream_01:7", "stream_01:8", "stream_01:9", "stream_01:10");
    }
}
