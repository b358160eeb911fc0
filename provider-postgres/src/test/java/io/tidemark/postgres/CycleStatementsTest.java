package io.tidemark.postgres;

import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.testkit.MutableClock;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What one cycle costs the database, statement by statement: the engine runs a cycle per notified commit while
 * changes flow, so each statement here is paid up to hundreds of times a second (see the README's "What an engine
 * costs the database"). A cycle reads the store in one statement and no transaction (a polled one only once a second:
 * it starts from the state it stored itself), calls the change function once, and writes positions and watermark in
 * one statement and no transaction, only when it delivered (or must record something); only a write that stores a
 * destination's first position takes a transaction.
 */
@EmbeddedPostgresTest
class CycleStatementsTest {

    private static final String READ = "SELECT s.object_name, s.version, s.source_identity, s.paused,";
    private static final String UPDATE_POSITIONS_IN_ONE = "UPDATE \"tidemark\".\"sync_state_positions\" AS p";
    private static final String UPDATE_WATERMARK_IN_ONE = "UPDATE \"tidemark\".\"sync_state\" AS s";
    private static final String UPDATE_WATERMARK = "UPDATE \"tidemark\".\"sync_state\" SET version = ?";
    /** The write of positions and watermark in one statement. */
    private static final String ADVANCE = "WITH moves AS ( SELECT m.destination, m.expected, m.version";

    private final TestDatabase database;

    CycleStatementsTest(TestDatabase database) {
        this.database = database;
    }

    @Test
    void a_cycle_delivering_a_change_reads_once_calls_once_and_writes_in_one_statement() {
        database.execute("CREATE TABLE public.items (id bigint PRIMARY KEY, note text NOT NULL)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.items").build();
        outbox.install(database.dataSource());
        StatementLog log = new StatementLog(database.dataSource());
        try (SyncEngine engine = engine(log, outbox.track("Items").initialSync(InitialSync.INCREMENTAL))) {
            engine.runOnce("Items"); // seeds
            database.execute("INSERT INTO public.items VALUES (1, 'first')");
            engine.runOnce("Items"); // the first delivery stores the destination's position

            database.execute("INSERT INTO public.items VALUES (2, 'second')");
            log.start();
            Outcome outcome = engine.runOnce("Items").outcome();
            List<String> sent = log.stop();

            assertThat(outcome).isEqualTo(Outcome.DELIVERED);
            assertThat(sent).hasSize(3);
            assertThat(sent.get(0)).as("the store read, one statement outside a transaction").startsWith(READ);
            assertThat(sent.get(1)).isEqualTo("SELECT \"public\".\"items_changes\"(?::json)");
            assertThat(sent.get(2)).as("positions and watermark, together, one statement outside a transaction")
                    .startsWith(ADVANCE).contains(UPDATE_POSITIONS_IN_ONE).contains(UPDATE_WATERMARK_IN_ONE);
        }
    }

    @Test
    void a_cycle_finding_nothing_new_at_the_stored_version_reads_once_calls_once_and_writes_nothing() {
        database.execute("""
                CREATE FUNCTION public.still_changes(payload json) RETURNS json LANGUAGE sql AS $$
                  SELECT '{"Metadata":{"Sync":{"Version":5,"Type":"Diff","ReasonCode":0}},"Data":[]}'::json
                $$""");
        StatementLog log = new StatementLog(database.dataSource());
        try (SyncEngine engine = engine(log, TrackedObject.of("Still", "public.still_changes"))) {
            engine.runOnce("Still"); // stores version 5 and the destination's position

            log.start();
            Outcome outcome = engine.runOnce("Still").outcome();
            List<String> sent = log.stop();

            assertThat(outcome).isEqualTo(Outcome.NO_CHANGES);
            assertThat(sent).satisfiesExactly(
                    read -> assertThat(read).startsWith(READ),
                    call -> assertThat(call).isEqualTo("SELECT \"public\".\"still_changes\"(?::json)"));
        }
    }

    /**
     * While changes flow, the poller's cycles start from the state the engine stored itself: each delivery costs the
     * call and one write transaction, the store is read at most once a second, and the cycles between deliveries,
     * which find nothing new, write nothing although the outbox's version (its horizon) moved.
     */
    @Test
    void polled_cycles_while_changes_flow_call_and_write_and_read_the_store_at_most_once_a_second() throws Exception {
        database.execute("CREATE TABLE public.flowing (id bigint PRIMARY KEY, note text NOT NULL)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.flowing").build();
        outbox.install(database.dataSource());
        StatementLog log = new StatementLog(database.dataSource());
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = SyncEngine.builder()
                .name("flowing")
                .provider(PostgresProvider.builder(log).listen(false).build())
                .watermarks(JdbcWatermarkStore.create(log))
                .track(outbox.track("Flowing").initialSync(InitialSync.INCREMENTAL).pollInterval(POLL))
                .destination("out", out)
                .build()) {
            engine.runOnce("Flowing"); // seeds
            log.start();
            long started = System.nanoTime();
            engine.start();
            for (int i = 1; i <= DELIVERIES; i++) {
                database.execute("INSERT INTO public.flowing VALUES (" + i + ", 'row')");
                assertThat(out.awaitOffered(i, Duration.ofSeconds(30))).isEqualTo(i);
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (writes(log.recorded()) < DELIVERIES) { // the last delivery's write follows it
                assertThat(System.nanoTime()).as("the last delivery is stored").isLessThan(deadline);
                Thread.sleep(10);
            }
            List<String> sent = log.stop();
            long seconds = Duration.ofNanos(System.nanoTime() - started).toSeconds();

            long calls = count(sent, "SELECT \"public\".\"flowing_changes\"(?::json)");
            assertThat(calls).as("a call per delivery at least").isGreaterThanOrEqualTo(DELIVERIES);
            assertThat(count(sent, READ)).as("store reads in %d s and %d cycles", seconds, calls)
                    .isLessThanOrEqualTo(seconds + 1);
            assertThat(writes(sent)).as("one write per delivery: the cycles between them wrote"
                    + " nothing (unless one came 10 s after the last write)").isBetween((long) DELIVERIES,
                    DELIVERIES + seconds / 10);
            assertThat(count(sent, ADVANCE)).as("writes in one statement: all but a write that stores a"
                    + " destination's first position").isGreaterThanOrEqualTo(DELIVERIES - 1);
            assertThat(count(sent, "BEGIN")).isEqualTo(count(sent, UPDATE_WATERMARK));
        }
    }

    /**
     * An engine with nothing to read, once it armed the outbox's wake-up and confirmed it, sends nothing until a
     * notification or its poll interval: it only waits on its LISTEN connection. Each poll then calls the function
     * and, while this engine wrote the object less than 10 s ago, writes nothing although the version (the horizon)
     * moved. A poll 10 s or more after the last write stores the moved version; that write is itself a transaction,
     * which moves the horizon, so the next such poll finds the version moved again: an idle object of a generated
     * outbox writes once per poll interval when that is 10 s or more (once per 10 s when it is shorter). The test's
     * clock stands still unless the test moves it, so that the polls (woken by hand) fall where it says.
     */
    @Test
    void an_idle_engine_sends_nothing_while_it_waits() throws Exception {
        database.execute("CREATE TABLE public.idle (id bigint PRIMARY KEY, note text NOT NULL)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.idle").build();
        outbox.install(database.dataSource());
        StatementLog log = new StatementLog(database.dataSource());
        MutableClock clock = new MutableClock(Instant.parse("2026-03-04T05:06:07Z"));
        BlockingQueue<ObjectReport> reports = new LinkedBlockingQueue<>();
        try (SyncEngine engine = SyncEngine.builder()
                .name("idle")
                .provider(PostgresProvider.create(log)) // LISTEN, as by default
                .watermarks(JdbcWatermarkStore.create(log))
                .track(outbox.track("Idle").initialSync(InitialSync.INCREMENTAL))
                .destination("out", new RecordingDestination())
                .clock(clock)
                .listener(new SyncListener() {
                    @Override
                    public void onReport(ObjectReport report) {
                        reports.add(report);
                    }
                })
                .build()) {
            engine.runOnce("Idle"); // seeds
            database.execute("INSERT INTO public.idle VALUES (1, 'wakes it')");
            log.start();
            engine.start();
            // Settled: it delivered, found nothing new, armed the flag and sent nothing for a while.
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            List<String> seen = List.of("not yet");
            while (!(armed("public.idle_outbox_wakeup") && log.recorded().equals(seen))) {
                List<String> tail = seen.subList(Math.max(0, seen.size() - 12), seen.size());
                assertThat(System.nanoTime()).as("the engine settles; it sent last: %s", tail).isLessThan(deadline);
                seen = log.recorded();
                Thread.sleep(300);
            }
            log.stop();

            log.start();
            Thread.sleep(1_000); // the window observed, not a wait for a condition
            assertThat(log.stop()).as("between polls").isEmpty();

            String call = "SELECT \"public\".\"idle_changes\"(?::json)";
            List<String> poll = poll(engine, "Idle", log, reports);
            assertThat(count(poll, call)).isEqualTo(1);
            assertThat(poll).as("a poll within 10 s of the last write writes nothing").noneMatch(s -> s.equals("BEGIN")
                    || s.startsWith(UPDATE_WATERMARK) || s.startsWith(ADVANCE)
                    || s.startsWith("SELECT \"public\".\"idle_outbox_arm\""));

            for (int i = 1; i <= 2; i++) {
                clock.advance(Duration.ofSeconds(10)); // the engine's interval for storing a version moved idle
                poll = poll(engine, "Idle", log, reports);
                assertThat(count(poll, call)).isEqualTo(1);
                assertThat(count(poll, ADVANCE)).as("poll %d, 10 s after the last write: the version"
                        + " moved (the engine's own last write moved the horizon) and is stored", i).isEqualTo(1);
                assertThat(count(poll, "BEGIN")).as("in one statement").isZero();
            }
        }
    }

    /** Wakes the object and returns what its cycle sent, once its report arrived. */
    private static List<String> poll(SyncEngine engine, String object, StatementLog log,
                                     BlockingQueue<ObjectReport> reports) throws InterruptedException {
        reports.clear();
        log.start();
        engine.wake(object);
        ObjectReport report = reports.poll(30, TimeUnit.SECONDS);
        List<String> sent = log.stop();
        assertThat(report).as("the woken cycle's report").isNotNull();
        assertThat(report.outcome()).isEqualTo(Outcome.NO_CHANGES);
        return sent;
    }

    /**
     * A destination that refuses while another accepts: the cycles succeed (one destination moved on), and the
     * refusing one's read returns the same pending changes every time. Those reads do not count as changes
     * flowing, so the object is not read again on the short wait of a flow: it waits as an object with nothing
     * new does, and a later commit's notification brings the next read, which delivers everything once the
     * destination accepts. The poll interval is an hour: every read here came from a wake-up.
     */
    @Test
    void a_destination_that_refuses_while_changes_are_pending_is_not_read_again_in_a_tight_loop() throws Exception {
        database.execute("CREATE TABLE public.lagging (id bigint PRIMARY KEY, note text NOT NULL)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.lagging").build();
        outbox.install(database.dataSource());
        StatementLog log = new StatementLog(database.dataSource());
        RecordingDestination accepting = new RecordingDestination();
        RecordingDestination refusing = new RecordingDestination().refuseAll();
        try (SyncEngine engine = SyncEngine.builder()
                .name("lagging")
                .provider(PostgresProvider.create(log)) // LISTEN, as by default
                .watermarks(JdbcWatermarkStore.create(log))
                .track(outbox.track("Lagging").initialSync(InitialSync.INCREMENTAL).pollInterval(Duration.ofHours(1)))
                .destination("accepting", accepting)
                .destination("refusing", refusing)
                .build()) {
            engine.runOnce("Lagging"); // seeds
            database.execute("INSERT INTO public.lagging VALUES (1, 'pending for one')");
            engine.start();
            assertThat(accepting.awaitChanges(1, Duration.ofSeconds(30))).hasSize(1);
            assertThat(refusing.awaitOffered(1, Duration.ofSeconds(30))).isGreaterThanOrEqualTo(1);

            log.start();
            int offeredBefore = refusing.offered();
            Thread.sleep(3_000); // the window observed, not a wait for a condition
            List<String> sent = log.stop();
            long calls = count(sent, "SELECT \"public\".\"lagging_changes\"(?::json)");
            // Settling takes two or three cycles of two calls each; re-read on the flow's wait, it was 16 a second
            // on a loaded machine, and more the faster the machine.
            assertThat(calls).as("change function calls in 3 s while a destination refuses").isLessThanOrEqualTo(10);
            assertThat(refusing.offered() - offeredBefore).isLessThanOrEqualTo(5);

            refusing.acceptAll();
            database.execute("INSERT INTO public.lagging VALUES (2, 'wakes it')");
            assertThat(refusing.awaitChanges(2, Duration.ofSeconds(30))).as("both, after the notification")
                    .hasSize(2);
            assertThat(accepting.awaitChanges(2, Duration.ofSeconds(30))).hasSize(2);
        }
    }

    private static final Duration POLL = Duration.ofMillis(20);
    private static final int DELIVERIES = 10;

    /** Writes of the watermark: in one statement, or in a transaction. */
    private static long writes(List<String> sent) {
        return count(sent, ADVANCE) + count(sent, UPDATE_WATERMARK);
    }

    private static long count(List<String> sent, String prefix) {
        return sent.stream().filter(s -> s.startsWith(prefix)).count();
    }

    private boolean armed(String flagTable) throws Exception {
        try (var c = database.dataSource().getConnection(); var s = c.createStatement();
             var rs = s.executeQuery("SELECT armed FROM " + flagTable)) {
            return rs.next() && rs.getBoolean(1);
        }
    }

    private static SyncEngine engine(StatementLog log, TrackedObject object) {
        return SyncEngine.builder()
                .name("statements")
                .provider(PostgresProvider.builder(log).listen(false).build())
                .watermarks(JdbcWatermarkStore.create(log))
                .track(object)
                .destination("out", new RecordingDestination())
                .build();
    }
}
