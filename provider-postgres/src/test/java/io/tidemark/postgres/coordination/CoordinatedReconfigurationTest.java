package io.tidemark.postgres.coordination;

import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Live reconfiguration on coordinated engines: an object untracked on every instance gives its lease back at the
 * next round (it is not renewed for ever, and does not count against the instance's share), and an object tracked
 * later is leased by one instance and delivered.
 */
@EmbeddedPostgresTest
class CoordinatedReconfigurationTest {

    private static final int OBJECTS = 6;
    private static final Duration LEASE = Duration.ofSeconds(3);

    private final DataSource ds;
    private final List<SyncEngine> engines = new ArrayList<>();

    CoordinatedReconfigurationTest(TestDatabase database) throws Exception {
        this.ds = database.dataSource();
        StreamFixture.install(ds, OBJECTS);
    }

    @AfterEach
    void stop() {
        engines.forEach(SyncEngine::close);
    }

    @Test
    void untracked_objects_give_their_leases_back_and_tracked_ones_are_leased() throws Exception {
        List<String> names = StreamFixture.objectNames(OBJECTS);
        // Both engines start with the first four objects only.
        for (String instance : List.of("a", "b")) {
            SyncEngine engine = StreamFixture.engine(ds, OBJECTS, instance, LEASE);
            names.subList(4, OBJECTS).forEach(engine::untrack);
            engines.add(engine);
            engine.start();
        }
        Await.until(Duration.ofSeconds(20), "objects 1-4 held two by two", () -> {
            Map<String, String> holders = StreamFixture.holders(ds);
            return holders.keySet().equals(java.util.Set.copyOf(names.subList(0, 4)))
                    && StreamFixture.counts(holders).values().stream().allMatch(n -> n == 2);
        });

        for (SyncEngine engine : engines) {
            engine.untrack(names.get(0));
            engine.untrack(names.get(1));
        }
        Await.until(Duration.ofSeconds(10), "the untracked objects' leases given back within a round or two", () -> {
            Map<String, String> holders = StreamFixture.holders(ds);
            return !holders.containsKey(names.get(0)) && !holders.containsKey(names.get(1))
                    && holders.size() == 2 && StreamFixture.counts(holders).values().stream().allMatch(n -> n == 1);
        });

        for (SyncEngine engine : engines) {
            engine.track(TrackedObject.of(names.get(5), "public." + names.get(5)).maxRows(StreamFixture.PAGE));
        }
        StreamFixture.write(ds, OBJECTS, 1);
        Await.until(Duration.ofSeconds(20), "the object tracked later leased by one instance", () ->
                StreamFixture.holders(ds).containsKey(names.get(5)));
        Await.until(Duration.ofSeconds(20), "its change delivered to both destinations", () ->
                deliveries(names.get(5)) == 2);
        Thread.sleep(1000);
        assertThat(deliveries(names.get(5))).as("once per destination, by one instance").isEqualTo(2);
    }

    private long deliveries(String object) throws Exception {
        try (var c = ds.getConnection(); var ps = c.prepareStatement(
                "SELECT count(*) FROM stream_delivered WHERE object = ?")) {
            ps.setString(1, object);
            try (var rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
