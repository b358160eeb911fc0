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
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code close()} stops taking leases before it waits for a slow cycle: while it waits, a lease that falls free (the
 * other instance closed) is left for someone else, not taken only to be handed back at the end.
 */
@EmbeddedPostgresTest
class CloseTakesNoLeaseTest {

    private static final Duration LEASE = Duration.ofSeconds(3); // a round every second

    private final DataSource ds;
    private final CountDownLatch unblock = new CountDownLatch(1);
    private SyncEngine a;
    private SyncEngine b;

    CloseTakesNoLeaseTest(TestDatabase database) throws Exception {
        this.ds = database.dataSource();
        StreamFixture.install(ds, 2);
    }

    @AfterEach
    void close() {
        unblock.countDown();
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
    }

    private SyncEngine engine(String instance, Destination destination) {
        SyncEngine.Builder builder = SyncEngine.builder()
                .name(instance)
                .provider(PostgresProvider.create(ds))
                .watermarks(JdbcWatermarkStore.create(ds))
                .pollInterval(Duration.ofMillis(100))
                .shutdownTimeout(Duration.ofSeconds(30))
                .destination("d1", destination)
                .coordination(Coordination.builder().instanceId(instance).leaseDuration(LEASE).build());
        StreamFixture.objectNames(2).forEach(name -> builder.track(TrackedObject.of(name, "public." + name)));
        return builder.build();
    }

    @Test
    void a_closing_engine_takes_no_lease_while_it_waits_for_its_cycles() throws Exception {
        AtomicBoolean armed = new AtomicBoolean();
        CountDownLatch blocked = new CountDownLatch(1);
        AtomicReference<String> slowObject = new AtomicReference<>();
        a = engine("a", batch -> {
            if (armed.get() && slowObject.compareAndSet(null, batch.objectName())) {
                blocked.countDown();
                unblock.await(); // a slow cycle: close() has to wait for it
            }
        });
        b = engine("b", batch -> { });
        a.start();
        b.start();
        Await.until(Duration.ofSeconds(30), "each instance holds one object",
                () -> StreamFixture.counts(StreamFixture.holders(ds)).equals(Map.of("a", 1, "b", 1)));
        String ofB = StreamFixture.holders(ds).entrySet().stream().filter(e -> e.getValue().equals("b"))
                .map(Map.Entry::getKey).findFirst().orElseThrow();

        armed.set(true);
        StreamFixture.write(ds, 2, 1);
        assertThat(blocked.await(30, TimeUnit.SECONDS)).as("a's cycle is stuck in its destination").isTrue();
        Thread closing = new Thread(a::close, "closing-a");
        closing.start();
        Thread.sleep(300); // close() is now waiting for the stuck cycle
        b.close(); // b's object is free at once, and a alone is left alive
        b = null;

        // Three rounds of a: before the fix it took b's object at the first one.
        Thread.sleep(3_500);
        assertThat(StreamFixture.holders(ds)).as("a, closing, took no lease").doesNotContainEntry(ofB, "a");

        unblock.countDown();
        closing.join(30_000);
        assertThat(closing.isAlive()).isFalse();
        assertThat(StreamFixture.holders(ds)).as("a handed its own lease back once its cycle ended").isEmpty();
        a = null;
    }
}
