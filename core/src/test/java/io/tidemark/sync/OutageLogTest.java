package io.tidemark.sync;

import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static io.tidemark.sync.testkit.Responses.response;
import static io.tidemark.sync.testkit.Responses.row;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The log of one outage as an operator reads it, from the first failed cycle to the recovery: one WARN with the cause
 * and the next attempt, the repeats summarised, one INFO on recovery, the object named once per line.
 */
class OutageLogTest {

    private static final String REFUSED = "could not reach the database to call public.items_changes: Connection to"
            + " db.example:5432 refused (SQLState 08001)";

    @Test
    void one_outage_from_the_first_failure_to_the_recovery() throws Exception {
        ScriptedProvider provider = new ScriptedProvider();
        ScriptedProvider.ObjectScript items = provider.object("Items").thenReturn(response(1, "Full", 0));
        for (int i = 0; i < 12; i++) {
            items.thenFail(TidemarkException.forObject(ErrorCode.CONNECTION_FAILED, "Items", REFUSED));
        }
        items.thenFail(TidemarkException.forObject(ErrorCode.CONNECTION_FAILED, "Items",
                "could not reach the database to call public.items_changes: FATAL: the database system is starting up"
                        + " (SQLState 57P03)"));
        items.thenReturn(response(3, "Diff", 0, row("I", 2, "\"Id\":1"), row("I", 3, "\"Id\":2")));
        BlockingQueue<ObjectReport> reports = new LinkedBlockingQueue<>();

        List<String> lines;
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try (SyncEngine engine = SyncEngine.builder()
                .name("log")
                .provider(provider)
                .watermarks(InMemoryWatermarkStore.create())
                .track(TrackedObject.of("Items", "public.items_changes").pollInterval(Duration.ofHours(1)))
                .destination("out", new RecordingDestination())
                .listener(new SyncListener() {
                    @Override
                    public void onReport(ObjectReport report) {
                        reports.add(report);
                    }
                })
                .build()) {
            engine.start();
            assertThat(reports.poll(10, TimeUnit.SECONDS).isSuccess()).as("the first cycle").isTrue();
            for (int i = 0; i < 14; i++) {
                engine.wake("Items");
                assertThat(reports.poll(10, TimeUnit.SECONDS)).as("cycle " + (i + 2)).isNotNull();
                Thread.sleep(20); // the poller logs after the report is out
            }
        } finally {
            System.setErr(original);
        }
        lines = Arrays.stream(captured.toString(StandardCharsets.UTF_8).split("\\R"))
                .filter(l -> l.contains("[Items]"))
                .toList();
        original.println(String.join(System.lineSeparator(), lines));

        assertThat(lines).hasSize(4);
        assertThat(lines.get(0)).contains("WARN", "[Items] cycle failed: CONNECTION_FAILED: " + REFUSED,
                "next attempt at ", "(in 60 min 0 s), or as soon as the database answers again");
        assertThat(lines.get(1)).contains("WARN", "[Items] cycle failed again, 10 times in a row since ",
                "(the same failure 10 times)", "db.example:5432 refused", "next attempt at ");
        assertThat(lines.get(2)).contains("WARN", "[Items] cycle failed (13th in a row): CONNECTION_FAILED:",
                "the database system is starting up");
        assertThat(lines.get(3)).contains("INFO", "[Items] recovered after failing for ", "(13 failed cycles):"
                + " delivered 2 changes");
        assertThat(lines).allSatisfy(l -> assertThat(l.split("\\[Items]", -1)).as("the name once: " + l).hasSize(2));
        assertThat(lines).noneMatch(l -> l.contains("could not record"));
    }
}
