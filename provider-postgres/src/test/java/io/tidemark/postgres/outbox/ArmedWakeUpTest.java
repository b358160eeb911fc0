package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.OutboxDifference;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.Change;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Armed wake-ups: the capture notifies only while the outbox's wake-up flag is set, from the writer that clears it,
 * and the reader sets it before it waits and closes the gap of writers that read it unset. Every notification is
 * counted on a LISTEN connection of the test's own; every engine polls once an hour, so a change delivered within the
 * test's patience came from a notification or from the provider's confirming reads.
 */
@EmbeddedPostgresTest
class ArmedWakeUpTest {

    private static final Duration AN_HOUR = Duration.ofHours(1);
    private static final Duration PATIENCE = Duration.ofSeconds(30);
    /** How long a notification that is not expected is waited for. */
    private static final int QUIET_MILLIS = 300;


    private final TestDatabase database;
    private Connection listening;

    ArmedWakeUpTest(TestDatabase database) {
        this.database = database;
    }

    /** The capture shape of every outbox this class installs; a subclass runs every test on another one. */
    CaptureShape shape() {
        return CaptureShape.FULL_IMAGE;
    }

    @BeforeEach
    void listen() throws SQLException {
        listening = database.dataSource().getConnection();
        listening.setAutoCommit(true);
        try (Statement s = listening.createStatement()) {
            s.execute("LISTEN tidemark");
        }
    }

    @AfterEach
    void unlisten() throws SQLException {
        listening.close();
    }

    @Test
    void a_write_notifies_while_the_flag_is_set_and_clears_it_then_writes_do_not_notify_until_it_is_armed()
            throws Exception {
        OutboxTables t = OutboxTables.create(shape(), database, "armed", "id int PRIMARY KEY, name text");
        assertThat(armed(t)).as("set at install").isTrue();

        t.execute("INSERT INTO $T VALUES (1, 'a')");
        assertThat(notifications(PATIENCE.toMillis())).containsExactly("public." + t.table + "_changes");
        assertThat(armed(t)).isFalse();

        t.execute("INSERT INTO $T VALUES (2, 'b')");
        t.execute("UPDATE $T SET name = 'c'");
        t.execute("DELETE FROM $T WHERE id = 1");
        assertThat(notifications(QUIET_MILLIS)).as("writes while the flag is clear").isEmpty();

        t.execute("SELECT public." + t.table + "_outbox_arm()");
        assertThat(armed(t)).isTrue();
        t.execute("DELETE FROM $T");
        assertThat(notifications(PATIENCE.toMillis())).hasSize(1);
        assertThat(armed(t)).isFalse();
        assertThat(t.outboxRows()).isEqualTo(6); // the update changed two rows
    }

    @Test
    void arming_puts_back_a_flag_row_deleted_by_hand_and_writers_notify_again() throws Exception {
        OutboxTables t = OutboxTables.create(shape(), database, "armed_row", "id int PRIMARY KEY, name text");
        t.execute("DELETE FROM public." + t.table + "_outbox_wakeup");
        t.execute("INSERT INTO $T VALUES (1, 'a')");
        assertThat(notifications(QUIET_MILLIS)).as("no flag row, no notification").isEmpty();

        t.execute("SELECT public." + t.table + "_outbox_arm()");
        t.execute("SELECT public." + t.table + "_outbox_arm()"); // a set flag is left as it is: still one row
        assertThat(armed(t)).isTrue();
        t.execute("INSERT INTO $T VALUES (2, 'b')");
        assertThat(notifications(PATIENCE.toMillis())).containsExactly("public." + t.table + "_changes");
        assertThat(armed(t)).isFalse();
    }

    @Test
    void writers_at_read_uncommitted_run_at_read_committed_and_take_the_armed_path() throws Exception {
        OutboxTables t = OutboxTables.create(shape(), database, "armed_ru", "id int PRIMARY KEY, name text");
        t.execute("BEGIN ISOLATION LEVEL READ UNCOMMITTED; INSERT INTO $T VALUES (1, 'a'); COMMIT");
        assertThat(notifications(PATIENCE.toMillis())).hasSize(1);
        assertThat(armed(t)).as("cleared by the writer that notified").isFalse();
        t.execute("BEGIN ISOLATION LEVEL READ UNCOMMITTED; INSERT INTO $T VALUES (2, 'b'); COMMIT");
        assertThat(notifications(QUIET_MILLIS)).as("the flag is clear").isEmpty();
    }

    @Test
    void a_writer_that_cannot_take_the_lock_leaves_the_notification_to_the_holder_and_a_rollback_leaves_it_set()
            throws Exception {
        OutboxTables t = OutboxTables.create(shape(), database, "armed_lock", "id int PRIMARY KEY, name text");
        try (OpenTransaction holder = OpenTransaction.begin(database.dataSource())) {
            holder.execute("INSERT INTO public." + t.table + " VALUES (1, 'holder')");
            t.execute("INSERT INTO $T VALUES (2, 'other')"); // does not wait for the holder, does not notify
            assertThat(notifications(QUIET_MILLIS)).isEmpty();
            holder.commit();
        }
        assertThat(notifications(PATIENCE.toMillis())).hasSize(1);
        assertThat(armed(t)).isFalse();

        t.execute("SELECT public." + t.table + "_outbox_arm()");
        try (OpenTransaction holder = OpenTransaction.begin(database.dataSource())) {
            holder.execute("INSERT INTO public." + t.table + " VALUES (3, 'rolled back')");
            holder.rollback();
        }
        assertThat(notifications(QUIET_MILLIS)).isEmpty();
        assertThat(armed(t)).as("the clearing rolled back with its writer").isTrue();
        t.execute("INSERT INTO $T VALUES (4, 'next')");
        assertThat(notifications(PATIENCE.toMillis())).hasSize(1);
    }

    @Test
    void writers_at_repeatable_read_or_serializable_notify_every_time_and_leave_the_flag_alone() throws Exception {
        OutboxTables t = OutboxTables.create(shape(), database, "armed_rr", "id int PRIMARY KEY, name text");
        t.execute("INSERT INTO $T VALUES (0, 'clears the flag')");
        assertThat(notifications(PATIENCE.toMillis())).hasSize(1);

        for (String isolation : List.of("REPEATABLE READ", "SERIALIZABLE")) {
            try (OpenTransaction w = OpenTransaction.begin(database.dataSource())) {
                w.execute("SET TRANSACTION ISOLATION LEVEL " + isolation);
                w.execute("INSERT INTO public." + t.table + " VALUES (" + isolation.length() + ", 'x')");
                w.commit();
            }
            assertThat(notifications(PATIENCE.toMillis())).as(isolation).hasSize(1);
            assertThat(armed(t)).isFalse();
        }
    }

    @Test
    void with_notifications_off_there_is_no_flag_and_upgrading_to_them_off_drops_it() throws Exception {
        OutboxTables quiet = OutboxTables.create(shape(), database, "armed_off", "id int PRIMARY KEY, name text",
                b -> b.notifications(false));
        assertThat(quiet.scalar("SELECT count(*) FROM pg_class WHERE relname = '" + quiet.table + "_outbox_wakeup'"))
                .isZero();
        assertThat(quiet.scalar("SELECT count(*) FROM pg_proc WHERE proname = '" + quiet.table + "_outbox_arm'"))
                .isZero();
        assertThat(quiet.scalar("SELECT count(*) FROM pg_proc WHERE proname = '" + quiet.table + "_outbox_capture'"
                + " AND prosrc LIKE '%wakeup%'")).as("the capture reads no flag").isZero();
        quiet.execute("INSERT INTO $T VALUES (1, 'a')");
        assertThat(notifications(QUIET_MILLIS)).isEmpty();

        OutboxTables t = OutboxTables.create(shape(), database, "armed_on", "id int PRIMARY KEY, name text");
        PostgresOutbox off = PostgresOutbox.forTable("public." + t.table).capture(shape()).notifications(false).build();
        off.upgrade(database.dataSource());
        assertThat(off.differences(database.dataSource())).isEmpty();
        assertThat(t.scalar("SELECT count(*) FROM pg_class WHERE relname = '" + t.table + "_outbox_wakeup'"))
                .isZero();
        assertThat(t.scalar("SELECT count(*) FROM pg_proc WHERE proname = '" + t.table + "_outbox_arm'")).isZero();

        t.outbox.upgrade(database.dataSource());
        assertThat(armed(t)).isTrue();
        t.outbox.uninstall(database.dataSource());
        assertThat(t.scalar("SELECT count(*) FROM pg_class WHERE relname = '" + t.table + "_outbox_wakeup'"))
                .as("uninstall drops the flag").isZero();
    }

    /**
     * The gap armed wake-ups must close, on real connections: a writer captures while the flag is clear (so it will
     * not notify) and stays open while the reader reads and sets the flag; then it commits. No notification comes,
     * the poll interval is an hour, and the change is delivered: the reader kept reading until the horizon passed
     * every writer that could have missed the flag.
     */
    @Test
    void a_writer_that_read_the_flag_clear_and_commits_after_the_readers_read_is_delivered_without_a_notification()
            throws Exception {
        OutboxTables t = OutboxTables.create(shape(), database, "armed_gap", "id int PRIMARY KEY, name text");
        List<Change> delivered = new CopyOnWriteArrayList<>();
        List<Outcome> outcomes = new CopyOnWriteArrayList<>();
        CountDownLatch seeded = new CountDownLatch(1);
        try (SyncEngine engine = SyncEngine.builder()
                .name("gap")
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(InMemoryWatermarkStore.create())
                .track(t.outbox.track("Gap").initialSync(InitialSync.INCREMENTAL).pollInterval(AN_HOUR))
                .destination("out", batch -> delivered.addAll(batch.changes()))
                .listener(new SyncListener() {
                    @Override
                    public void onReport(ObjectReport report) {
                        outcomes.add(report.outcome());
                        if (report.outcome() == Outcome.SEEDED) {
                            seeded.countDown();
                        }
                    }
                })
                .build()) {
            engine.start();
            assertThat(seeded.await(30, TimeUnit.SECONDS)).isTrue();
            awaitArmed(t);

            try (OpenTransaction readsWait = OpenTransaction.begin(database.dataSource());
                 OpenTransaction writer = OpenTransaction.begin(database.dataSource())) {
                // Every read of the change function now waits for this lock; writes do not touch the state table.
                readsWait.execute("LOCK TABLE public." + t.table + "_outbox_state IN ACCESS EXCLUSIVE MODE");
                // A first write clears the flag and notifies; the reader's read of it waits.
                t.execute("INSERT INTO $T VALUES (1, 'clears the flag')");
                assertThat(armed(t)).isFalse();
                writer.execute("INSERT INTO public." + t.table + " VALUES (2, 'read the flag clear')");
                notifications(0); // drop the first write's notification
                readsWait.commit();
                // The reader reads the first write (the writer is open), sets the flag, and reads again: nothing.
                awaitNothingNewAfterADelivery(outcomes);
                assertThat(armed(t)).isTrue();
                writer.commit();
            }
            long deadline = System.nanoTime() + PATIENCE.toNanos();
            while (delivered.size() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(delivered).extracting(c -> c.fields().get("id").asInt()).containsExactly(1, 2);
            assertThat(notifications(0)).as("the late writer did not notify").isEmpty();
            assertThat(armed(t)).as("and left the flag set").isTrue();
        }
    }

    @Test
    void an_outbox_that_notifies_on_every_write_is_refused_by_install_naming_upgrade_which_migrates_it()
            throws Exception {
        database.execute("CREATE SCHEMA notifying; CREATE TABLE notifying.items (item_code text PRIMARY KEY,"
                + " description text, attrs json, price numeric)");
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute(Files.readString(OutboxUpgradeTest.PREVIOUS_SCRIPT, StandardCharsets.UTF_8)
                    .replace("sales", "notifying"));
            c.commit();
        }
        database.execute("INSERT INTO notifying.items VALUES ('A-1', 'before', '{}', 1)");
        PostgresOutbox items = PostgresOutbox.forTable("notifying.items").key("item_code")
                .columns("description", "attrs").payloadKey("item_code", "ItemCode")
                .payloadKey("description", "Description").payloadKey("attrs", "Attributes").build();

        assertThat(items.differences(database.dataSource())).extracting(OutboxDifference::option)
                .containsExactly("generated SQL", "table notifying.items_outbox_wakeup");
        assertThatThrownBy(() -> items.install(database.dataSource()))
                .hasMessageContaining("generated SQL")
                .hasMessageContaining("PostgresOutbox.upgrade(dataSource)")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
        assertThat(scalar("SELECT count(*) FROM pg_class WHERE relname = 'items_outbox_wakeup'"
                + " AND relnamespace = 'notifying'::regnamespace")).as("install changed nothing").isZero();

        items.upgrade(database.dataSource());
        assertThat(items.differences(database.dataSource())).isEmpty();
        notifications(0);
        database.execute("INSERT INTO notifying.items VALUES ('A-2', 'after', '{}', 1)");
        assertThat(notifications(PATIENCE.toMillis())).containsExactly("notifying.items_changes");
        database.execute("INSERT INTO notifying.items VALUES ('A-3', 'flag clear', '{}', 1)");
        assertThat(notifications(QUIET_MILLIS)).isEmpty();
        long from = scalar("SELECT trimmed_through FROM notifying.items_outbox_state");
        assertThat(OutboxTables.call(database.dataSource(), "notifying.items_changes", "{\"fromVersion\":" + from + "}")
                .get("Data").size()).as("the change captured before the upgrade is kept").isEqualTo(3);
    }

    @Test
    void a_dropped_flag_is_a_difference_and_upgrade_creates_it_again() {
        OutboxTables t = OutboxTables.create(shape(), database, "armed_drop", "id int PRIMARY KEY, name text");
        t.execute("DROP TABLE public." + t.table + "_outbox_wakeup");

        assertThat(t.outbox.differences(database.dataSource())).extracting(OutboxDifference::toString)
                .containsExactly("table public." + t.table + "_outbox_wakeup: installed missing, requested present"
                        + " (the capture reads it to decide whether to notify)");
        t.outbox.upgrade(database.dataSource());
        assertThat(t.outbox.differences(database.dataSource())).isEmpty();
        t.execute("INSERT INTO $T VALUES (1, 'a')");
        assertThat(t.outboxRows()).isEqualTo(1);
    }

    /** Waits until a cycle found nothing new after one delivered. */
    private static void awaitNothingNewAfterADelivery(List<Outcome> outcomes) throws InterruptedException {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            List<Outcome> now = List.copyOf(outcomes);
            int delivered = now.lastIndexOf(Outcome.DELIVERED);
            if (delivered >= 0 && now.subList(delivered, now.size()).contains(Outcome.NO_CHANGES)) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no cycle found nothing new after a delivery: " + now);
            }
            Thread.sleep(1);
        }
    }

    private void awaitArmed(OutboxTables t) throws Exception {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (!armed(t)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the reader did not arm the wake-up flag of " + t.table);
            }
            Thread.sleep(5);
        }
    }

    private long scalar(String sql) throws SQLException {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            assertThat(rs.next()).isTrue();
            return rs.getLong(1);
        }
    }

    private boolean armed(OutboxTables t) throws SQLException {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT armed FROM public." + t.table + "_outbox_wakeup")) {
            assertThat(rs.next()).isTrue();
            return rs.getBoolean(1);
        }
    }

    /** The payloads of the notifications received within {@code millis} of the first (or none). */
    private List<String> notifications(long millis) throws SQLException {
        List<String> payloads = new ArrayList<>();
        PGConnection pg = listening.unwrap(PGConnection.class);
        PGNotification[] first = pg.getNotifications(millis <= 0 ? -1 : (int) millis);
        if (first == null || first.length == 0) {
            // getNotifications(-1) does not read the socket: ask the server once.
            try (Statement s = listening.createStatement()) {
                s.execute("SELECT 1");
            }
            first = pg.getNotifications(-1);
        }
        if (first != null) {
            for (PGNotification n : first) {
                payloads.add(n.getParameter());
            }
        }
        // Others sent by the same commits arrive together; a short wait catches any straggler.
        PGNotification[] more = pg.getNotifications(50);
        if (more != null) {
            for (PGNotification n : more) {
                payloads.add(n.getParameter());
            }
        }
        return payloads;
    }
}
