package io.tidemark.postgres;

import com.fasterxml.jackson.databind.JsonNode;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A transaction larger than the log-based provider holds ({@code maxTransactionChanges}, {@code maxTransactionBytes}):
 * the table being written when it passes a limit is let go and read whole after the commit, the tables written before
 * keep their changes, and a reader reading all the while misses nothing, also around a truncate.
 */
@EmbeddedPostgresTest
class PostgresLogicalLargeTransactionTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final TestDatabase database;
    private final WatermarkStore store;
    private final LogicalCaptures captures;

    PostgresLogicalLargeTransactionTest(TestDatabase database) {
        this.database = database;
        this.store = JdbcWatermarkStore.create(database.dataSource());
        this.captures = new LogicalCaptures(database, store);
    }

    @AfterEach
    void dropSlots() throws Exception {
        captures.close();
    }

    private void table(String name) {
        database.execute("CREATE TABLE public." + name + " (id int PRIMARY KEY, tag text)");
    }

    @Test
    void the_table_written_past_the_limit_is_read_whole_after_the_commit_and_the_table_written_before_keeps_its_changes()
            throws Exception {
        table("lt_huge");
        table("lt_before");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables("public.lt_huge",
                "public.lt_before"));
        RecordingDestination out = new RecordingDestination();
        // The slot moves only every ten minutes, so that the next provider decodes the transaction again.
        PostgresLogicalProvider first = captures.provider(captures.builder(capture).maxTransactionChanges(1_000)
                .acknowledgeEvery(Duration.ofMinutes(10)));
        SyncEngine engine = captures.closeLater(engine("lt-1", first, capture, out));
        engine.runOnce(); // both seeded
        database.execute("INSERT INTO public.lt_huge (id, tag) VALUES (1, 'a')"); // held, then dropped with the next
        database.execute("""
                INSERT INTO public.lt_before (id) SELECT g FROM generate_series(1, 600) g;
                INSERT INTO public.lt_huge (id, tag) SELECT g, 'bulk' FROM generate_series(2, 1501) g;
                UPDATE public.lt_huge SET tag = 'b' WHERE id = 1;
                """); // 600 + 1,501 changes in one transaction, lt_huge's past the limit
        first.awaitCaughtUp(WAIT);
        until("both objects read the transaction", () -> {
            engine.runOnce();
            return out.batches().stream().anyMatch(b -> b.objectName().equals("Before"))
                    && out.batches().stream().anyMatch(b -> b.objectName().equals("Huge") && b.isLastPage());
        });
        database.execute("INSERT INTO public.lt_huge (id, tag) VALUES (5000, 'after')");
        until("the insert after the export arrives", () -> {
            engine.runOnce();
            return out.changes().stream().anyMatch(c -> c.fields().get("id").asInt() == 5000);
        });

        List<ChangeBatch> huge = batchesOf(out, "Huge");
        int pages = huge.get(0).pageCount();
        List<ChangeBatch> whole = huge.subList(0, pages);
        assertThat(whole).as("its changes were not kept: the table whole replaces them, in pages").allSatisfy(b -> {
            assertThat(b.syncType()).isEqualTo(SyncType.FULL);
            assertThat(b.reasonCode()).isEqualTo(PostgresLogicalCapture.OVERSIZED_TRANSACTION_REASON_CODE);
        });
        List<Change> rows = whole.stream().flatMap(b -> b.changes().stream()).toList();
        assertThat(rows).extracting(c -> c.fields().get("id").asInt()).doesNotHaveDuplicates().hasSize(1_501)
                .contains(1, 2, 1501);
        assertThat(rows).filteredOn(c -> c.fields().get("id").asInt() == 1)
                .extracting(c -> c.fields().get("tag").asText()).containsExactly("b");
        assertThat(huge.subList(pages, huge.size())).extracting(b -> b.syncType() + ":" + b.reasonCode() + ":"
                        + b.changes().stream().map(c -> c.fields().get("id").asText()).toList())
                .as("after it, changes again").containsExactly("DIFF:0:[5000]");
        assertThat(batchesOf(out, "Before")).as("the table written before the limit keeps its changes")
                .allSatisfy(b -> assertThat(b.syncType()).isEqualTo(SyncType.DIFF))
                .flatExtracting(ChangeBatch::changes).hasSize(600)
                .allSatisfy(c -> assertThat(c.operation().orElseThrow().code()).isEqualTo("I"));

        // A new stream decodes the transaction again from the slot, which stands below it: the readers stored past
        // it, so neither reads a table whole a second time.
        long large = batchesOf(out, "Before").get(0).changes().get(0).version().orElseThrow();
        engine.close();
        first.close();
        assertThat(captures.slotPosition(capture)).as("the slot stands below the large transaction")
                .isLessThan(large);
        out.clear();
        SyncEngine second = captures.closeLater(engine("lt-2",
                captures.provider(captures.builder(capture).maxTransactionChanges(1_000)), capture, out));
        database.execute("INSERT INTO public.lt_huge (id, tag) VALUES (6000, 'later')");
        until("the insert after the restart arrives", () -> {
            second.runOnce();
            return !out.changes().isEmpty();
        });
        assertThat(out.batches()).extracting(b -> b.objectName() + ":" + b.syncType() + ":"
                + b.changes().stream().map(c -> c.fields().get("id").asText()).toList())
                .containsExactly("Huge:DIFF:[6000]");
    }

    @Test
    void wide_rows_are_let_go_by_their_bytes_before_their_number() throws Exception {
        table("lt_wide");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables("public.lt_wide"));
        PostgresLogicalProvider provider = captures.provider(captures.builder(capture).maxTransactionBytes(1L << 20));
        TrackedObject wide = capture.track("Wide").initialSync(InitialSync.INCREMENTAL);
        long seed = seed(provider, wide);
        insertWideRows("public.lt_wide", 1, 300, 157); // 1.5 MB of values, far under 200,000 changes
        provider.awaitCaughtUp(WAIT);
        JsonNode answer = json(provider.invoke(wide, ChangeRequest.sync(seed), CallContext.none()));
        assertThat(sync(answer)).isEqualTo("Full/" + PostgresLogicalCapture.OVERSIZED_TRANSACTION_REASON_CODE);
        assertThat(answer.get("Data")).hasSize(300);
        assertThat(answer.get("Data").get(0).get("tag").asText()).hasSize(5_024);
    }

    @Test
    void readers_reading_through_the_commits_of_transactions_too_large_to_hold_miss_nothing() throws Exception {
        table("lt_race");
        table("lt_beside");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables("public.lt_race",
                "public.lt_beside"));
        PostgresLogicalProvider provider = captures.provider(captures.builder(capture).maxTransactionChanges(1_000));
        TrackedObject race = capture.track("Race", "public.lt_race").initialSync(InitialSync.INCREMENTAL);
        TrackedObject beside = capture.track("Beside", "public.lt_beside").initialSync(InitialSync.INCREMENTAL);
        Set<Integer> raceSeen = new HashSet<>();
        List<String> raceAnswers = new ArrayList<>();
        Set<Integer> besideSeen = new HashSet<>();
        List<String> besideAnswers = new ArrayList<>();
        try (Reader raceReader = new Reader(provider, race, seed(provider, race), raceSeen, raceAnswers);
             Reader besideReader = new Reader(provider, beside, seed(provider, beside), besideSeen, besideAnswers)) {
            for (int round = 0; round < 5; round++) {
                database.execute("INSERT INTO public.lt_race (id) SELECT g FROM generate_series("
                        + (round * 10_000 + 1) + ", " + (round * 10_000 + 2_000) + ") g");
                database.execute("INSERT INTO public.lt_beside (id) VALUES (" + round + ")");
            }
            provider.awaitCaughtUp(WAIT);
            raceReader.readOnceMore();
            besideReader.readOnceMore();
        }
        assertThat(raceAnswers).as("the table let go is read whole")
                .anyMatch(a -> a.startsWith("Full/" + PostgresLogicalCapture.OVERSIZED_TRANSACTION_REASON_CODE));
        assertThat(raceSeen).as("every row of every round").hasSize(5 * 2_000);
        assertThat(besideAnswers).as("the table beside it, written between the large transactions, never let go:"
                + " every commit a change").allMatch(a -> a.startsWith("Diff/0/"));
        assertThat(besideSeen).containsExactlyInAnyOrder(0, 1, 2, 3, 4);
    }

    @Test
    void the_stream_stops_reading_at_max_buffered_bytes_and_loses_nothing() throws Exception {
        table("lt_heavy");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables("public.lt_heavy"));
        PostgresLogicalProvider provider = captures.provider(captures.builder(capture).maxBufferedBytes(1L << 20));
        TrackedObject heavy = capture.track("Heavy").initialSync(InitialSync.INCREMENTAL);
        long seed = seed(provider, heavy);
        // 40 transactions of 10 rows of about 10 kB: 4 MB of changes, four times what the logs may hold.
        for (int t = 0; t < 40; t++) {
            insertWideRows("public.lt_heavy", t * 10 + 1, t * 10 + 10, 320);
        }
        Thread.sleep(1_000); // the stream reads until the logs hold 1 MiB, then waits
        long from = seed;
        OptionalLong stored = OptionalLong.empty();
        int firstRead = -1;
        Set<Integer> seen = new HashSet<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (seen.size() < 400) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(seen.size() + " of 400 rows read within " + WAIT);
            }
            JsonNode answer = json(provider.invoke(heavy, ChangeRequest.sync(from), CallContext.none()));
            if (firstRead < 0) {
                firstRead = answer.get("Data").size();
            }
            answer.get("Data").forEach(r -> seen.add(r.get("id").asInt()));
            from = answer.get("Metadata").get("Sync").get("Version").asLong();
            // As the engine does: store the watermark, so that the provider releases what was read.
            store.advance("Heavy", provider.sourceIdentity(heavy), stored, from, Instant.now());
            stored = OptionalLong.of(from);
        }
        assertThat(firstRead).as("the first read found the logs stopped near 1 MiB, not all 400 rows")
                .isBetween(90, 200);
        assertThat(seen).hasSize(400);
    }

    @Test
    void a_truncate_and_the_reload_of_its_transaction_are_never_read_apart() throws Exception {
        table("lt_reload");
        database.execute("INSERT INTO public.lt_reload SELECT g, 'old' FROM generate_series(1, 10) g");
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables("public.lt_reload"));
        PostgresLogicalProvider provider = captures.provider(capture);
        TrackedObject reload = capture.track("Reload").initialSync(InitialSync.INCREMENTAL);
        Set<Integer> seen = new HashSet<>();
        List<String> answers = new ArrayList<>();
        try (Reader reader = new Reader(provider, reload, seed(provider, reload), seen, answers)) {
            database.execute("TRUNCATE public.lt_reload; INSERT INTO public.lt_reload"
                    + " SELECT g, 'tag ' || g FROM generate_series(1, 150000) g");
            provider.awaitCaughtUp(WAIT);
            reader.readOnceMore();
        }
        assertThat(answers).as("the truncate's answer holds the reload").first().asString()
                .startsWith("Full/" + PostgresLogicalCapture.TRUNCATE_REASON_CODE + "/");
        assertThat(seen).hasSize(150_000);
    }

    /**
     * Reads the object without pause on a thread of its own, from its seed, as an engine would with every answer
     * stored: rows seen (emptied by a {@code Full} answer), and each answer with rows or of type {@code Full}.
     */
    private static final class Reader implements AutoCloseable {
        private final PostgresLogicalProvider provider;
        private final TrackedObject object;
        private final Set<Integer> seen;
        private final List<String> answers;
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Thread thread;
        private long from;

        Reader(PostgresLogicalProvider provider, TrackedObject object, long seed, Set<Integer> seen,
               List<String> answers) {
            this.provider = provider;
            this.object = object;
            this.seen = seen;
            this.answers = answers;
            this.from = seed;
            this.thread = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        readOnce();
                    }
                } catch (Throwable e) {
                    failure.set(e);
                }
            }, "test-reader");
            thread.start();
        }

        private void readOnce() throws Exception {
            JsonNode answer = json(provider.invoke(object, ChangeRequest.sync(from), CallContext.none()));
            JsonNode data = answer.get("Data");
            if (sync(answer).startsWith("Full")) {
                seen.clear();
            }
            if (data.size() > 0 || sync(answer).startsWith("Full")) {
                answers.add(sync(answer) + "/" + data.size());
            }
            data.forEach(r -> seen.add(r.get("id").asInt()));
            from = answer.get("Metadata").get("Sync").get("Version").asLong();
        }

        /** Stops the thread and reads once more: everything committed before is in the answers then. */
        void readOnceMore() throws Exception {
            stop.set(true);
            thread.join();
            if (failure.get() != null) {
                throw new AssertionError("the reader failed", failure.get());
            }
            readOnce();
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            thread.join();
        }
    }

    /**
     * Rows {@code first} to {@code last} in one transaction, each tagged with {@code md5s} times 32 characters of
     * hashes: text that does not compress, so each row's WAL and change carry all of it.
     */
    private void insertWideRows(String table, int first, int last, int md5s) {
        database.execute("INSERT INTO " + table + " SELECT g, (SELECT string_agg(md5(g::text || i::text), '')"
                + " FROM generate_series(1, " + md5s + ") i) FROM generate_series(" + first + ", " + last + ") g");
    }

    private SyncEngine engine(String name, PostgresLogicalProvider provider, PostgresLogicalCapture capture,
                              RecordingDestination out) {
        return SyncEngine.builder().name(name).provider(provider).watermarks(store)
                .track(capture.track("Huge", "public.lt_huge").initialSync(InitialSync.INCREMENTAL))
                .track(capture.track("Before", "public.lt_before").initialSync(InitialSync.INCREMENTAL))
                .destination("out", out).build();
    }

    private static List<ChangeBatch> batchesOf(RecordingDestination out, String object) {
        return out.batches().stream().filter(b -> b.objectName().equals(object)).toList();
    }

    private static long seed(PostgresLogicalProvider provider, TrackedObject object) throws Exception {
        provider.validate(object);
        return json(provider.invoke(object, ChangeRequest.seed(), CallContext.none())).get("Metadata").get("Sync")
                .get("Version").asLong();
    }

    private static String sync(JsonNode answer) {
        JsonNode sync = answer.get("Metadata").get("Sync");
        return sync.get("Type").asText() + "/" + sync.get("ReasonCode").asInt();
    }

    private static JsonNode json(ResponsePayload payload) throws Exception {
        return LogicalCaptures.json(payload);
    }

    private static void until(String what, Callable<Boolean> condition) throws Exception {
        LogicalCaptures.until(what, WAIT, condition);
    }
}
