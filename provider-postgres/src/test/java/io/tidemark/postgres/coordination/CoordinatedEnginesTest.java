package io.tidemark.postgres.coordination;

import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three engines in one JVM sharing twelve objects with two destinations each, under a steady stream of changes:
 * the objects spread over the three (four each, never more than six), each change reaches each destination once,
 * and a clean close hands the closing engine's objects to the others at once (well before its leases would expire).
 * A few seconds by default; {@code -Dtidemark.coordination.full=true} keeps the stream going for three minutes.
 */
@EmbeddedPostgresTest
class CoordinatedEnginesTest {

    static final boolean FULL = Boolean.getBoolean("tidemark.coordination.full");
    private static final int OBJECTS = 12;
    private static final Duration LEASE = Duration.ofSeconds(3);

    private final DataSource ds;
    private final List<SyncEngine> engines = new ArrayList<>();
    private final AtomicInteger lost = new AtomicInteger();
    private StreamFixture.Writer writer;

    CoordinatedEnginesTest(TestDatabase database) throws Exception {
        this.ds = database.dataSource();
        StreamFixture.install(ds, OBJECTS);
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (writer != null) {
            writer.stop();
        }
        engines.forEach(SyncEngine::close);
    }

    private SyncEngine engine(String instance) {
        SyncEngine engine = StreamFixture.engine(ds, OBJECTS, instance, LEASE, new SyncListener() {
            @Override
            public void onLeaseReleased(String objectName, String instanceId, long epoch, boolean wasLost) {
                if (wasLost) {
                    lost.incrementAndGet();
                }
            }
        });
        engines.add(engine);
        return engine;
    }

    @Test
    void three_engines_spread_twelve_objects_deliver_each_change_once_and_hand_over_at_once_on_close()
            throws Exception {
        SyncEngine e1 = engine("e1");
        SyncEngine e2 = engine("e2");
        SyncEngine e3 = engine("e3");
        writer = new StreamFixture.Writer(ds, OBJECTS);
        e1.start();
        e2.start();
        e3.start();

        Await.until(Duration.ofSeconds(30), "the twelve objects spread four by four over e1, e2, e3", () -> {
            Map<String, Integer> counts = StreamFixture.counts(StreamFixture.holders(ds));
            return counts.size() == 3 && counts.values().stream().allMatch(n -> n == 4);
        });
        // Steady state: the spread holds, and each engine's status names the holder of each object.
        long steadyUntil = System.nanoTime() + (FULL ? Duration.ofMinutes(3) : Duration.ofSeconds(6)).toNanos();
        int most = 0;
        while (System.nanoTime() < steadyUntil) {
            Map<String, Integer> counts = StreamFixture.counts(StreamFixture.holders(ds));
            most = Math.max(most, counts.values().stream().mapToInt(Integer::intValue).max().orElse(0));
            Thread.sleep(250);
        }
        assertThat(most).as("no engine holds more than 6 of the 12 objects").isLessThanOrEqualTo(6);
        Map<String, String> holders = StreamFixture.holders(ds);
        e1.status().forEach(s -> assertThat(s.leaseHolder()).as(s.object().name())
                .hasValue(holders.get(s.object().name())));

        long closing = System.nanoTime();
        e3.close();
        Await.until(LEASE, "e3's objects taken over by e1 and e2 before its leases could have expired", () -> {
            Map<String, String> now = StreamFixture.holders(ds);
            return now.size() == OBJECTS && !now.containsValue("e3");
        });
        Duration handover = Duration.ofNanos(System.nanoTime() - closing);
        Thread.sleep(2000);
        assertThat(StreamFixture.counts(StreamFixture.holders(ds)).values()).containsOnly(6);

        long last = writer.stop();
        Await.until(Duration.ofSeconds(60), "every change delivered to every destination",
                () -> StreamFixture.deliveredEverywhere(ds, OBJECTS) >= last);

        StreamFixture.Verdict verdict = StreamFixture.verdict(ds, last);
        assertThat(verdict.missing()).as("changes never delivered").isZero();
        // A lease lost under load (and taken back, perhaps by the same engine) brings its page in flight back
        // under the key it had: every repeat is recognisable by its idempotency key.
        assertThat(verdict.sameKey()).as("repeated changes that came back under the same idempotency key")
                .isEqualTo(verdict.duplicates());
        if (lost.get() == 0) {
            // No lease was lost (only handed over cleanly): not a single change twice.
            assertThat(verdict.duplicates()).as("changes delivered twice").isZero();
        }
        assertThat(verdict.byInstance()).containsOnlyKeys("e1", "e2", "e3");
        System.out.printf("coordination: %d versions x %d objects x 2 destinations, hand-over on close %d ms,"
                        + " leases lost %d, repeats %d%n", last, OBJECTS, handover.toMillis(), lost.get(),
                verdict.duplicates());
    }
}
