package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Wake-ups through LISTEN/NOTIFY on the real server. Every engine here polls once an hour, so a change that arrives
 * within the test's timeout arrived because of a notification.
 */
@EmbeddedPostgresTest
class WakeUpTest {

    private static final Duration AN_HOUR = Duration.ofHours(1);
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private final TestDatabase database;

    WakeUpTest(TestDatabase database) {
        this.database = database;
    }

    /** The capture shape of every outbox this class installs; a subclass runs every test on another one. */
    CaptureShape shape() {
        return CaptureShape.FULL_IMAGE;
    }

    private SyncEngine engine(String name, PostgresProvider provider, TrackedObject object, RecordingDestination out,
                              CountDownLatch seeded) {
        return SyncEngine.builder()
                .name(name)
                .provider(provider)
                .watermarks(InMemoryWatermarkStore.create())
                .track(object.initialSync(InitialSync.INCREMENTAL).pollInterval(AN_HOUR))
                .destination("out", out)
                .listener(new SyncListener() {
                    @Override
                    public void onReport(ObjectReport report) {
                        if (report.outcome() == Outcome.SEEDED) {
                            seeded.countDown();
                        }
                    }
                })
                .build();
    }

    @Test
    void a_commit_wakes_the_object_at_once() throws Exception {
        OutboxTables t = OutboxTables.create(shape(), database, "wake", "id int PRIMARY KEY, name text");
        RecordingDestination out = new RecordingDestination();
        CountDownLatch seeded = new CountDownLatch(1);
        try (SyncEngine engine = engine("wake", PostgresProvider.create(database.dataSource()), t.outbox.track("Wake"),
                out, seeded)) {
            engine.start();
            assertThat(seeded.await(30, TimeUnit.SECONDS)).isTrue();
            awaitListeners(1);

            t.execute("INSERT INTO $T VALUES (1, 'a')");
            out.awaitChanges(1, PATIENCE);
            t.execute("UPDATE $T SET name = 'b'");
            out.awaitChanges(2, PATIENCE);
            t.execute("DELETE FROM $T");
            out.awaitChanges(3, PATIENCE);
        }
        assertThat(listenerThreads()).isEmpty();
        awaitListeners(0);
    }

    @Test
    void commits_do_not_retry_a_blocked_object_once_each_but_wake_does_and_then_commits_wake_it_again()
            throws Exception {
        OutboxTables t = OutboxTables.create(shape(), database, "wake_blocked", "id int PRIMARY KEY, name text");
        RecordingDestination out = new RecordingDestination().refuseAll();
        CountDownLatch seeded = new CountDownLatch(1);
        try (SyncEngine engine = engine("blocked", PostgresProvider.create(database.dataSource()),
                t.outbox.track("Blocked"), out, seeded)) {
            engine.start();
            assertThat(seeded.await(30, TimeUnit.SECONDS)).isTrue();
            awaitListeners(1);

            t.execute("INSERT INTO $T VALUES (1, 'refused')");
            assertThat(out.awaitOffered(1, PATIENCE)).isEqualTo(1);
            // Twenty more commits, each notifying: the blocked object waits for its next attempt (an hour away).
            for (int i = 2; i <= 21; i++) {
                t.execute("INSERT INTO $T VALUES (" + i + ", 'while blocked')");
            }
            assertThat(out.awaitOffered(2, Duration.ofMillis(500))).as("offers made while blocked").isEqualTo(1);

            out.acceptAll();
            engine.wake("Blocked");
            out.awaitChanges(21, PATIENCE);
            // Delivered again: a commit wakes it at once (the interval is an hour), so LISTEN was working throughout.
            t.execute("INSERT INTO $T VALUES (22, 'after the wake')");
            out.awaitChanges(22, PATIENCE);
        }
    }

    @Test
    void a_successful_run_once_ends_the_retry_wait_so_commits_wake_the_object_again() throws Exception {
        OutboxTables t = OutboxTables.create(shape(), database, "wake_manual", "id int PRIMARY KEY, name text");
        RecordingDestination out = new RecordingDestination().refuseAll();
        CountDownLatch seeded = new CountDownLatch(1);
        try (SyncEngine engine = engine("manual", PostgresProvider.create(database.dataSource()),
                t.outbox.track("Manual"), out, seeded)) {
            engine.start();
            assertThat(seeded.await(30, TimeUnit.SECONDS)).isTrue();
            awaitListeners(1);
            t.execute("INSERT INTO $T VALUES (1, 'refused')");
            assertThat(out.awaitOffered(1, PATIENCE)).isEqualTo(1);

            out.acceptAll();
            assertThat(engine.runOnce("Manual").outcome()).isEqualTo(Outcome.DELIVERED);
            t.execute("INSERT INTO $T VALUES (2, 'after the manual run')");
            out.awaitChanges(2, PATIENCE);
        }
    }

    @Test
    void the_listener_reconnects_after_its_connection_is_killed() throws Exception {
        OutboxTables t = OutboxTables.create(shape(), database, "wake_again", "id int PRIMARY KEY, name text");
        RecordingDestination out = new RecordingDestination();
        CountDownLatch seeded = new CountDownLatch(1);
        try (SyncEngine engine = engine("reconnect", PostgresProvider.create(database.dataSource()),
                t.outbox.track("Again"), out, seeded)) {
            engine.start();
            assertThat(seeded.await(30, TimeUnit.SECONDS)).isTrue();
            int first = awaitListeners(1).get(0);

            t.execute("SELECT pg_terminate_backend(" + first + ")");
            List<Integer> now = awaitListeners(1);
            while (now.contains(first)) {
                now = awaitListeners(1);
            }

            t.execute("INSERT INTO $T VALUES (1, 'after the reconnect')");
            out.awaitChanges(1, PATIENCE);
        }
        assertThat(listenerThreads()).isEmpty();
    }

    @Test
    void a_commit_made_before_the_first_listen_is_delivered_once_the_listener_connects() throws Exception {
        OutboxTables t = OutboxTables.create(shape(), database, "wake_early", "id int PRIMARY KEY, name text");
        RecordingDestination out = new RecordingDestination();
        CountDownLatch seeded = new CountDownLatch(1);
        CountDownLatch listenerMayConnect = new CountDownLatch(1);
        DataSource slowToListen = heldForListener(database.dataSource(), listenerMayConnect);
        try (SyncEngine engine = engine("early", PostgresProvider.create(slowToListen), t.outbox.track("Early"), out,
                seeded)) {
            engine.start();
            assertThat(seeded.await(30, TimeUnit.SECONDS)).isTrue();
            // Committed after the engine's first poll but before LISTEN: its notification reaches nobody.
            t.execute("INSERT INTO $T VALUES (1, 'before listen')");
            listenerMayConnect.countDown();
            out.awaitChanges(1, PATIENCE);
        }
    }

    /** A data source whose connections for the notification listener wait until {@code open} is released. */
    private static DataSource heldForListener(DataSource target, CountDownLatch open) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")
                            && Thread.currentThread().getName().startsWith("tidemark-listen-")) {
                        open.await();
                    }
                    try {
                        return method.invoke(target, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void listen_false_opens_no_connection_and_starts_no_thread() throws Exception {
        OutboxTables t = OutboxTables.create(shape(), database, "no_wake", "id int PRIMARY KEY, name text");
        CountDownLatch seeded = new CountDownLatch(1);
        try (SyncEngine engine = engine("quiet", PostgresProvider.builder(database.dataSource()).listen(false).build(),
                t.outbox.track("Quiet"), new RecordingDestination(), seeded)) {
            engine.start();
            assertThat(seeded.await(30, TimeUnit.SECONDS)).isTrue();

            assertThat(listenerPids()).isEmpty();
            assertThat(listenerThreads()).isEmpty();
        }
    }

    @Test
    void a_notification_wakes_exactly_the_objects_calling_the_function_it_names() throws Exception {
        BlockingQueue<String> woken = new LinkedBlockingQueue<>();
        List<TrackedObject> objects = List.of(
                TrackedObject.of("Qualified", "public.items_changes"),
                TrackedObject.of("Unqualified", "items_changes"),
                TrackedObject.of("Quoted", "\"Sales\".\"Items_changes\""),
                TrackedObject.of("Other", "public.orders_changes"));
        PostgresProvider provider = PostgresProvider.builder(database.dataSource()).channel("wake_test").build();
        try (AutoCloseable subscription = provider.subscribe(objects, woken::add)) {
            awaitListeners(1, "LISTEN \"wake_test\"");
            // Once LISTEN is in place every object is woken once, for commits made before it.
            assertThat(take(woken, 4)).containsExactlyInAnyOrder("Qualified", "Unqualified", "Quoted", "Other");

            notify("wake_test", "public.items_changes");
            assertThat(take(woken, 2)).containsExactlyInAnyOrder("Qualified", "Unqualified");
            notify("wake_test", "\"Sales\".\"Items_changes\"");
            assertThat(take(woken, 1)).containsExactly("Quoted");
            notify("wake_test", "not a function name!");
            notify("wake_test", "");
            assertThat(take(woken, 4)).containsExactlyInAnyOrder("Qualified", "Unqualified", "Quoted", "Other");
            assertThat(woken).isEmpty();
        }
    }

    private void notify(String channel, String payload) {
        database.execute("SELECT pg_notify('" + channel + "', '" + payload.replace("'", "''") + "')");
    }

    private static List<String> take(BlockingQueue<String> queue, int count) throws InterruptedException {
        List<String> taken = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String name = queue.poll(30, TimeUnit.SECONDS);
            assertThat(name).as("wake-up %d of %d; got %s", i + 1, count, taken).isNotNull();
            taken.add(name);
        }
        return taken;
    }

    private static List<String> listenerThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith("tidemark-listen-")).toList();
    }

    private List<Integer> awaitListeners(int count) throws SQLException {
        return awaitListeners(count, "LISTEN \"tidemark\"");
    }

    /** Waits (on pg_stat_activity, the server's own view) until {@code count} sessions of this database listen. */
    private List<Integer> awaitListeners(int count, String query) throws SQLException {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            List<Integer> pids = listenerPids(query);
            if (pids.size() == count) {
                return pids;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("expected " + count + " listening sessions, found " + pids);
            }
            Thread.onSpinWait();
        }
    }

    private List<Integer> listenerPids() throws SQLException {
        return listenerPids("LISTEN \"tidemark\"");
    }

    private List<Integer> listenerPids(String query) throws SQLException {
        List<Integer> pids = new ArrayList<>();
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                     + " AND query = '" + query.replace("'", "''") + "' AND pid <> pg_backend_pid()")) {
            while (rs.next()) {
                pids.add(rs.getInt(1));
            }
        }
        return pids;
    }
}
