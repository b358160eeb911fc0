package io.tidemark.postgres.coordination;

import io.tidemark.sync.SyncEngine;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Engines that track different objects on one store (two applications, or instances mid-way through a
 * reconfiguration): each counts its fair share among the instances tracking the same objects, so every object is
 * leased and delivered.
 */
@EmbeddedPostgresTest
class CoordinatedObjectSetsTest {

    private static final int OBJECTS = 6;
    private static final Duration LEASE = Duration.ofSeconds(3);

    private final DataSource ds;
    private final List<SyncEngine> engines = new ArrayList<>();

    CoordinatedObjectSetsTest(TestDatabase database) throws Exception {
        this.ds = database.dataSource();
        StreamFixture.install(ds, OBJECTS);
    }

    @AfterEach
    void stop() {
        engines.forEach(SyncEngine::close);
    }

    @Test
    void engines_tracking_different_objects_on_one_store_each_lease_all_of_theirs() throws Exception {
        List<String> names = StreamFixture.objectNames(OBJECTS);
        // Two applications on one store: "a" tracks objects 1-4, "b" objects 5-6. Counted as two instances of
        // one set, each would take only half of its own objects, and nobody would ever take the rest.
        SyncEngine a = StreamFixture.engine(ds, OBJECTS, "a", LEASE);
        names.subList(4, OBJECTS).forEach(a::untrack);
        SyncEngine b = StreamFixture.engine(ds, OBJECTS, "b", LEASE);
        names.subList(0, 4).forEach(b::untrack);
        engines.add(a);
        engines.add(b);
        a.start();
        b.start();
        Await.until(Duration.ofSeconds(20), "all six objects leased, 1-4 by a and 5-6 by b", () -> {
            Map<String, String> holders = StreamFixture.holders(ds);
            return holders.size() == OBJECTS
                    && names.subList(0, 4).stream().allMatch(n -> "a".equals(holders.get(n)))
                    && names.subList(4, OBJECTS).stream().allMatch(n -> "b".equals(holders.get(n)));
        });
        StreamFixture.write(ds, OBJECTS, 1);
        for (String name : names) {
            Await.until(Duration.ofSeconds(20), name + " delivered to both destinations",
                    () -> deliveries(name) == 2);
        }
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
