package io.tidemark.postgres.delivery;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.DestinationReport;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.DeliveryException;
import io.tidemark.sync.spi.Destination;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.PooledDataSource;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fault-injection run: one object over the generated outbox on a real PostgreSQL, three destinations, one of
 * them refusing 30 % of its pages at random and another one down for a stretch of the stream, while rows are
 * written. Every change must reach every destination, in version order per destination, with duplicates only as
 * re-deliveries under the same idempotency key, and the healthy destination must not be held back by the one
 * that is down; how far behind it falls is measured (the latency from commit to acceptance, while the other is down
 * and while all are up).
 *
 * <p>The suite runs 5,000 changes; {@code -Dtidemark.delivery.full=true} runs the judged 50,000.
 */
@EmbeddedPostgresTest
class FaultInjectionRunTest {

    private static final boolean FULL = Boolean.getBoolean("tidemark.delivery.full");
    private static final int CHANGES = FULL ? 50_000 : 5_000;
    /** The writer's pace, changes per second: a steady stream the engine can follow. */
    private static final int RATE = 2_500;
    /** Rows per INSERT statement: the outbox gives a statement's rows one version. */
    private static final int ROWS_PER_STATEMENT = 10;

    private final TestDatabase database;

    FaultInjectionRunTest(TestDatabase database) {
        this.database = database;
    }

    /** Records what a destination accepted, with the time; refuses as its fault says. */
    private static final class Recorder implements Destination {
        final List<AcceptedPage> accepted = new CopyOnWriteArrayList<>();
        final Map<Long, Long> acceptedAt = new ConcurrentHashMap<>();
        final AtomicLong refusals = new AtomicLong();
        private final Fault fault;

        Recorder(Fault fault) {
            this.fault = fault;
        }

        @Override
        public void deliver(io.tidemark.sync.ChangeBatch batch) {
            if (fault.refuses()) {
                refusals.incrementAndGet();
                throw DeliveryException.retryable("injected refusal", null);
            }
            long now = System.nanoTime();
            AcceptedPage page = AcceptedPage.of(0, batch, now);
            accepted.add(page);
            page.ids().forEach(id -> acceptedAt.putIfAbsent(id, now));
        }
    }

    @FunctionalInterface
    private interface Fault {
        boolean refuses();
    }

    @Test
    void every_change_reaches_every_destination_in_order_and_the_healthy_one_is_not_held_back() throws Exception {
        database.execute("CREATE TABLE public.fi_items (id bigint PRIMARY KEY, n int NOT NULL)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.fi_items").build();
        outbox.install(database.dataSource());

        Random random = new Random(20261202);
        AtomicInteger committed = new AtomicInteger();
        // Down while the writer is between 20 % and 60 % of the stream.
        Fault downStretch = () -> committed.get() >= CHANGES / 5 && committed.get() < CHANGES * 3 / 5;
        Recorder healthy = new Recorder(() -> false);
        Recorder flaky = new Recorder(() -> random.nextDouble() < 0.30);
        Recorder down = new Recorder(downStretch);
        AtomicLong blockedReports = new AtomicLong();
        TrackedObject object = outbox.track("Items").initialSync(InitialSync.INCREMENTAL).maxRows(1000)
                .pageSize(200).pollInterval(Duration.ofMillis(20));
        // Pooled, as an application would run it: connecting per statement would dominate every cycle.
        try (PooledDataSource pool = PooledDataSource.of(database.dataSource(), 6);
             SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.builder(pool).listen(false).build())
                .watermarks(JdbcWatermarkStore.create(pool))
                .track(object)
                .destination("healthy", healthy)
                .destination("flaky", flaky, DeliveryPolicy.builder().maxAttempts(5).backoff(Duration.ofMillis(2))
                        .maxDelay(Duration.ofMillis(20)).build())
                .destination("down", down, DeliveryPolicy.builder().maxAttempts(2).backoff(Duration.ofMillis(5))
                        .maxDelay(Duration.ofMillis(5)).build())
                .listener(new SyncListener() {
                    @Override
                    public void onReport(ObjectReport report) {
                        blockedReports.addAndGet(report.blockedDestinations().size());
                        if (Boolean.getBoolean("tidemark.delivery.trace")) {
                            System.out.println("TRACE " + System.nanoTime() / 1_000_000 + " " + report.duration().toMillis() + " ms " + report);
                        }
                    }
                })
                .build()) {
            engine.runOnce(); // seeds: the stream starts after this
            engine.start();

            long[] committedAt = new long[CHANGES + 1];
            long downFrom = 0;
            long downUntil = 0;
            long writeStarted = System.nanoTime();
            try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
                for (int first = 1; first <= CHANGES; first += ROWS_PER_STATEMENT) {
                    int last = Math.min(CHANGES, first + ROWS_PER_STATEMENT - 1);
                    long due = writeStarted + (long) first * 1_000_000_000L / RATE;
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(wait / 1_000_000);
                    }
                    s.execute("INSERT INTO public.fi_items SELECT g, 0 FROM generate_series(" + first + ", " + last
                            + ") g");
                    long now = System.nanoTime();
                    for (int id = first; id <= last; id++) {
                        committedAt[id] = now;
                    }
                    boolean wasDown = downStretch.refuses();
                    committed.set(last);
                    if (!wasDown && downStretch.refuses()) {
                        downFrom = now;
                    } else if (wasDown && !downStretch.refuses()) {
                        downUntil = now;
                    }
                }
            }
            long writeEnded = System.nanoTime();

            long deadline = System.nanoTime() + Duration.ofMinutes(FULL ? 10 : 3).toNanos();
            while ((healthy.acceptedAt.size() < CHANGES || flaky.acceptedAt.size() < CHANGES
                    || down.acceptedAt.size() < CHANGES) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            long drained = System.nanoTime();

            List<DeliveryAudit> audits = List.of(DeliveryAudit.of("healthy", healthy.accepted, CHANGES),
                    DeliveryAudit.of("flaky", flaky.accepted, CHANGES), DeliveryAudit.of("down", down.accepted, CHANGES));
            Latency healthyWhileDown = Latency.of(healthy, committedAt, downFrom, downUntil, true);
            Latency healthyOtherwise = Latency.of(healthy, committedAt, downFrom, downUntil, false);
            Latency flakyWhileDown = Latency.of(flaky, committedAt, downFrom, downUntil, true);
            Latency downCatchUp = Latency.of(down, committedAt, downFrom, downUntil, true);
            System.out.printf("Fault-injection run: %,d changes written in %.1f s; all destinations complete %.1f s"
                            + " after the last write; down for %.1f s; %,d injected refusals at flaky, %,d at down;"
                            + " %,d blocked-destination reports%n", CHANGES, seconds(writeEnded - writeStarted),
                    seconds(drained - writeEnded), seconds(downUntil - downFrom), flaky.refusals.get(),
                    down.refusals.get(), blockedReports.get());
            audits.forEach(a -> System.out.println("  " + a));
            System.out.println("  commit-to-accept latency, healthy while 'down' was down: " + healthyWhileDown);
            System.out.println("  commit-to-accept latency, healthy otherwise:              " + healthyOtherwise);
            System.out.println("  commit-to-accept latency, flaky while 'down' was down:   " + flakyWhileDown);
            System.out.println("  commit-to-accept latency, down (changes of its stretch): " + downCatchUp);
            for (DestinationReport r : engine.status("Items").lastReport().orElseThrow().destinations()) {
                System.out.println("  last report: " + r);
            }

            for (DeliveryAudit audit : audits) {
                assertThat(audit.problems).as(audit.destination).isEmpty();
                assertThat(audit.duplicates).as(audit.destination + " duplicates")
                        .isEqualTo(audit.duplicatesUnderSameKey);
            }
            assertThat(down.refusals.get()).as("the down stretch was hit").isPositive();
            assertThat(flaky.refusals.get()).as("flaky refused").isPositive();
            // The healthy destination kept receiving while the other was down, as fast as when all were up; the
            // changes of the stretch reached the down one only after it came back.
            assertThat(healthyWhileDown.p50Millis).isLessThanOrEqualTo(healthyOtherwise.p50Millis * 2 + 250);
            assertThat(downCatchUp.p50Millis).isGreaterThan(healthyWhileDown.p50Millis);
            assertThat(engine.status("Items").stored().version().getAsLong()).isPositive();
        }
    }

    private static double seconds(long nanos) {
        return nanos / 1e9;
    }

    /** Commit-to-acceptance times of the changes committed inside (or outside) the down stretch. */
    private record Latency(long count, long p50Millis, long p99Millis, long maxMillis) {

        static Latency of(Recorder r, long[] committedAt, long from, long until, boolean inside) {
            List<Long> millis = new ArrayList<>();
            for (int id = 1; id < committedAt.length; id++) {
                boolean in = committedAt[id] >= from && committedAt[id] < until;
                Long accepted = r.acceptedAt.get((long) id);
                if (in == inside && accepted != null) {
                    millis.add((accepted - committedAt[id]) / 1_000_000);
                }
            }
            if (millis.isEmpty()) {
                return new Latency(0, 0, 0, 0);
            }
            Collections.sort(millis);
            return new Latency(millis.size(), millis.get(millis.size() / 2), millis.get(millis.size() * 99 / 100),
                    millis.get(millis.size() - 1));
        }

        @Override
        public String toString() {
            return String.format("%,d changes, p50 %d ms, p99 %d ms, max %d ms", count, p50Millis, p99Millis,
                    maxMillis);
        }
    }
}
