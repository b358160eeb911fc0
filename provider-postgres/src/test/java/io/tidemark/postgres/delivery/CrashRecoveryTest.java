package io.tidemark.postgres.delivery;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.sync.SyncEngine;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The crash test: a child JVM running the engine ({@link CrashChild}) is killed with SIGKILL at random moments
 * while rows keep being written, and started again. Afterwards, for each destination, what it accepted (one line
 * per page, with the page's idempotency key) shows no missing change and no page accepted without the one before
 * it; a change accepted twice was either re-offered under the same key or in flight when the process died, at most
 * one page per destination and kill; and no stored position (sampled all along) ever went down.
 *
 * <p>The suite kills 3 times; {@code -Dtidemark.crash.full=true} runs the judged 50 kills.
 */
@EmbeddedPostgresTest
class CrashRecoveryTest {

    private static final boolean FULL = Boolean.getBoolean("tidemark.crash.full");
    private static final int KILLS = FULL ? 50 : 3;
    private static final int ROWS_PER_STATEMENT = 10;
    /** Changes per second the writer commits. */
    private static final int RATE = 1_000;

    private final TestDatabase database;

    CrashRecoveryTest(TestDatabase database) {
        this.database = database;
    }

    @Test
    void a_process_killed_at_random_moments_loses_no_page_and_redelivers_only_pages_in_flight(@TempDir Path folder)
            throws Exception {
        database.execute("CREATE TABLE " + CrashChild.TABLE + " (id bigint PRIMARY KEY, n int NOT NULL)");
        PostgresOutbox.forTable(CrashChild.TABLE).build().install(database.dataSource());
        // Seed in this process: the stream starts at the seeded version for both destinations.
        try (SyncEngine seed = CrashChild.engine(database.dataSource(), folder, 0).build()) {
            assertThat(seed.runOnce(CrashChild.OBJECT).outcome().name()).isEqualTo("SEEDED");
        }

        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicLong written = new AtomicLong();
        Thread writer = new Thread(() -> write(writing, written), "crash-writer");
        PositionSampler sampler = new PositionSampler();
        Thread sampling = new Thread(sampler, "crash-sampler");
        writer.start();
        sampling.start();

        Random random = new Random(50);
        long started = System.nanoTime();
        for (int run = 1; run <= KILLS; run++) {
            Process child = launch(folder, run);
            awaitStarted(folder, run);
            // A random moment: usually while it drains what was written since the last kill, or polling.
            Thread.sleep(random.nextInt(3_000));
            child.destroyForcibly(); // SIGKILL
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
        writing.set(false);
        writer.join();
        long total = written.get();
        Process last = launch(folder, KILLS + 1);
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        Map<String, List<AcceptedPage>> accepted = read(folder);
        while (!complete(accepted, total) && System.nanoTime() < deadline) {
            Thread.sleep(200);
            accepted = read(folder);
        }
        last.destroy();
        last.waitFor(30, TimeUnit.SECONDS);
        sampler.stop.set(true);
        sampling.join();

        System.out.printf("Crash test: %d SIGKILLs over %.1f s, %,d changes written, %,d position samples, %d runs"
                        + " that accepted pages before their kill%n", KILLS, (System.nanoTime() - started) / 1e9, total,
                sampler.samples.get(), accepted.get("a").stream().filter(p -> p.run() <= KILLS)
                        .map(AcceptedPage::run).distinct().count());
        List<DeliveryAudit> audits = new ArrayList<>();
        for (String destination : CrashChild.DESTINATIONS) {
            DeliveryAudit audit = DeliveryAudit.of(destination, accepted.get(destination), total);
            audits.add(audit);
            long maxPerRun = audit.redeliveredAfterRestart.values().stream().mapToLong(Long::longValue).max()
                    .orElse(0);
            System.out.println("  " + audit + "; kills followed by re-deliveries: " + audit.redeliveredAfterRestart.size()
                    + ", most changes re-delivered after one kill: " + maxPerRun);
        }
        assertThat(sampler.problems).isEmpty();
        assertThat(sampler.samples.get()).isPositive();
        for (DeliveryAudit audit : audits) {
            assertThat(audit.problems).as(audit.destination).isEmpty();
            // Only the page in flight when the process died comes again: one page per destination and kill.
            assertThat(audit.redeliveredAfterRestart.values()).as(audit.destination)
                    .allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(CrashChild.PAGE_SIZE));
        }
    }

    private Process launch(Path folder, int run) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return new ProcessBuilder(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), CrashChild.class.getName(), database.jdbcUrl(),
                Integer.toString(run), folder.toString())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(folder.resolve("child.out").toFile()))
                .start();
    }

    /** Waits until the child's engine started (its first cycle runs at once). */
    private static void awaitStarted(Path folder, int run) throws IOException, InterruptedException {
        Path out = folder.resolve("child.out");
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            if (Files.exists(out) && Files.readString(out).contains("run " + run + " started")) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("run " + run + " did not start within 60 s:\n" + Files.readString(out));
    }

    private void write(AtomicBoolean writing, AtomicLong written) {
        long started = System.nanoTime();
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
            long next = 1;
            while (writing.get()) {
                long due = started + next * 1_000_000_000L / RATE;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000);
                }
                long last = next + ROWS_PER_STATEMENT - 1;
                s.execute("INSERT INTO " + CrashChild.TABLE + " SELECT g, 0 FROM generate_series(" + next + ", "
                        + last + ") g");
                written.set(last);
                next = last + 1;
            }
        } catch (Exception e) {
            throw new IllegalStateException("the writer failed", e);
        }
    }

    /** Reads every position and the watermark every few milliseconds; none may ever go down. */
    private final class PositionSampler implements Runnable {
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicInteger samples = new AtomicInteger();
        final List<String> problems = new CopyOnWriteArrayList<>();
        private final Map<String, Long> highest = new HashMap<>();

        @Override
        public void run() {
            try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
                while (!stop.get()) {
                    try (ResultSet rs = s.executeQuery("SELECT destination, version FROM tidemark.sync_state_positions"
                            + " WHERE object_name = '" + CrashChild.OBJECT + "' UNION ALL SELECT '(watermark)', version"
                            + " FROM tidemark.sync_state WHERE object_name = '" + CrashChild.OBJECT + "'")) {
                        while (rs.next()) {
                            String name = rs.getString(1);
                            long version = rs.getLong(2);
                            Long before = highest.put(name, version);
                            if (before != null && version < before) {
                                problems.add(name + " went down from " + before + " to " + version);
                            }
                        }
                    }
                    samples.incrementAndGet();
                    Thread.sleep(5);
                }
            } catch (Exception e) {
                problems.add("sampling failed: " + e);
            }
        }
    }

    /** Each destination's accepted pages, in order; a last line without its newline was never accepted. */
    private static Map<String, List<AcceptedPage>> read(Path folder) throws IOException {
        Map<String, List<AcceptedPage>> pages = new HashMap<>();
        for (String destination : CrashChild.DESTINATIONS) {
            Path file = folder.resolve(destination + ".log");
            List<AcceptedPage> list = new ArrayList<>();
            if (Files.exists(file)) {
                String text = Files.readString(file, StandardCharsets.US_ASCII);
                int end = text.lastIndexOf('\n');
                if (end >= 0) {
                    for (String line : text.substring(0, end).split("\n")) {
                        list.add(AcceptedPage.parse(line));
                    }
                }
            }
            pages.put(destination, list);
        }
        return pages;
    }

    private static boolean complete(Map<String, List<AcceptedPage>> accepted, long total) {
        for (List<AcceptedPage> pages : accepted.values()) {
            long distinct = pages.stream().flatMap(p -> p.ids().stream()).distinct().count();
            if (distinct < total) {
                return false;
            }
        }
        return true;
    }
}
