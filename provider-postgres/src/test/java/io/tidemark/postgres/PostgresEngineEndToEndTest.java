package io.tidemark.postgres;

import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcDeadLetterStore;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.SyncReport;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static io.tidemark.postgres.ScriptedFunction.response;
import static io.tidemark.postgres.ScriptedFunction.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * The engine end to end on PostgreSQL: real change functions called through the driver, the JDBC watermark and
 * dead-letter stores. One or more tests per rule family, for what only a real database shows: the request as
 * the function receives it, the driver's bytes, SQL NULL, a cancelled {@code pg_sleep}, the stores' rows. Every
 * rule is tested in full, in seconds, in core (io.tidemark.sync.VersionRulesTest, MalformedResponseTest,
 * EngineLifecycleTest, DeliveryPolicyTest, MultipleObjectsTest) against a scripted provider.
 */
@EmbeddedPostgresTest
class PostgresEngineEndToEndTest {

    private static final AtomicInteger FUNCTIONS = new AtomicInteger();
    private static final String SYNC = "\"Metadata\":{\"Sync\":{\"Version\":9,\"Type\":\"Diff\",\"ReasonCode\":0}}";

    private final TestDatabase database;
    private final JdbcWatermarkStore store;
    private final List<SyncEngine> engines = new ArrayList<>();

    PostgresEngineEndToEndTest(TestDatabase database) {
        this.database = database;
        this.store = JdbcWatermarkStore.create(database.dataSource());
    }

    @AfterEach
    void closeEngines() {
        engines.forEach(SyncEngine::close);
    }

    private ScriptedFunction function() {
        return ScriptedFunction.create(database, "e2e_fn_" + FUNCTIONS.incrementAndGet());
    }

    private RowsFunction rows() {
        return RowsFunction.create(database, "e2e_rows_" + FUNCTIONS.incrementAndGet(), true);
    }

    private SyncEngine.Builder builder(TrackedObject object) {
        return SyncEngine.builder()
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(store)
                .track(object);
    }

    private SyncEngine engine(TrackedObject object, RecordingDestination... destinations) {
        SyncEngine.Builder builder = builder(object);
        for (int i = 0; i < destinations.length; i++) {
            builder.destination("d" + i, destinations[i]);
        }
        SyncEngine engine = builder.build();
        engines.add(engine);
        return engine;
    }

    private OptionalLong stored(String object) {
        return store.load(object).map(s -> s.version()).orElse(OptionalLong.empty());
    }

    // The version rules.

    @Test
    void rules_1_and_2_an_incremental_object_is_seeded_by_the_function_and_a_stored_zero_stays_a_watermark() {
        ScriptedFunction fn = function();
        fn.thenReturn(response(0, "Diff", 0, row("I", 0, "\"Id\":9")))
          .thenReturn(response(0, "Diff", 0))
          .thenReturn(response(1, "Diff", 0, row("I", 1, "\"Id\":1")));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()).initialSync(InitialSync.INCREMENTAL), out);

        ObjectReport seed = engine.runOnce().get(fn.name());
        assertThat(seed.outcome()).isEqualTo(Outcome.SEEDED);
        assertThat(seed.warnings()).containsExactly("returned 1 rows during an incremental seed; discarding them");
        assertThat(stored(fn.name())).hasValue(0);
        assertThat(engine.runOnce().get(fn.name()).outcome()).isEqualTo(Outcome.NO_CHANGES);
        assertThat(engine.runOnce().get(fn.name()).outcome()).isEqualTo(Outcome.DELIVERED);

        assertThat(fn.calls()).containsExactly(
                "{\"fromVersion\":0,\"mode\":\"seed\"}",
                "{\"fromVersion\":0,\"mode\":\"sync\"}",
                "{\"fromVersion\":0,\"mode\":\"sync\"}");
        assertThat(out.changes()).hasSize(1);
        assertThat(stored(fn.name())).hasValue(1);
    }

    @Test
    void rules_2_3_and_8_a_full_first_export_from_the_driver_is_paged_and_its_highest_row_version_stored() {
        ScriptedFunction fn = function();
        String[] rows = new String[2500];
        for (int i = 0; i < rows.length; i++) {
            rows[i] = row("I", 1000 + i, "\"Id\":" + i + ",\"Price\":12.50");
        }
        fn.thenReturn(response(5000, "Full", 1, rows));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()).pageSize(1000), out);

        ObjectReport report = engine.runOnce().get(fn.name());

        assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(fn.calls()).containsExactly("{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}");
        assertThat(out.batches()).extracting(b -> b.changes().size()).containsExactly(1000, 1000, 500);
        assertThat(out.batches()).allSatisfy(b -> assertThat(b.reasonCode()).isEqualTo(1));
        Change last = out.changes().get(2499);
        assertThat(last.version()).hasValue(3499);
        assertThat(last.field("Price").orElseThrow().decimalValue().scale()).isEqualTo(2);
        assertThat(stored(fn.name())).hasValue(3499);
    }

    @Test
    void rules_4_and_5_a_refusing_destination_or_a_lower_version_leaves_the_stored_watermark_where_it_was() {
        ScriptedFunction fn = function();
        String rows = response(8, "Diff", 0, row("I", 7, "\"Id\":1"), row("U", 8, "\"Id\":1"));
        fn.thenReturn(response(5, "Diff", 0, row("I", 5, "\"Id\":0"))).thenReturn(rows).thenReturn(response(4, "Diff", 0))
          .thenReturn(rows);
        RecordingDestination refusing = new RecordingDestination();
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()), refusing);
        engine.runOnce();
        refusing.refuseAll();

        ObjectReport blocked = engine.runOnce().get(fn.name());
        assertThat(blocked.outcome()).isEqualTo(Outcome.BLOCKED);
        assertThat(stored(fn.name())).hasValue(5);
        assertThat(store.load(fn.name()).orElseThrow().lastError()).get().asString().startsWith("DESTINATION_FAILED");

        refusing.acceptAll();
        ObjectReport lower = engine.runOnce().get(fn.name());
        assertThat(lower.error()).get().extracting(TidemarkException::code).isEqualTo(ErrorCode.WATERMARK_REGRESSION);
        assertThat(stored(fn.name())).hasValue(5);

        assertThat(engine.runOnce().get(fn.name()).outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(refusing.changes()).extracting(Change::rawJson).containsExactly(
                "{\"$operation\":\"I\",\"$version\":5,\"Id\":0}",
                "{\"$operation\":\"I\",\"$version\":7,\"Id\":1}",
                "{\"$operation\":\"U\",\"$version\":8,\"Id\":1}");
        assertThat(stored(fn.name())).hasValue(8);
        assertThat(store.load(fn.name()).orElseThrow().lastError()).isEmpty();
    }

    // Rule 6: malformed responses, through a real function returning text byte for byte.

    static Stream<Arguments> malformed() {
        return Stream.of(
                arguments("NULL", null, ErrorCode.EMPTY_RESPONSE, "empty response"),
                arguments("empty string", "", ErrorCode.EMPTY_RESPONSE, "empty response"),
                arguments("not JSON", "ERROR: permission denied", ErrorCode.MALFORMED_JSON, "malformed JSON"),
                arguments("truncated", "{" + SYNC + ",\"Data\":[{\"$version\":1", ErrorCode.MALFORMED_JSON, "malformed JSON"),
                arguments("Version a string", "{\"Metadata\":{\"Sync\":{\"Version\":\"12\"}}}", ErrorCode.INVALID_RESPONSE,
                        "Metadata.Sync.Version must be a 64-bit integer, got the string \"12\""),
                arguments("$operation unknown", "{" + SYNC + ",\"Data\":[{\"$operation\":\"X\",\"$version\":1}]}",
                        ErrorCode.INVALID_RESPONSE, "Data[0].$operation must be \"I\", \"U\" or \"D\", got the string \"X\""));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void rule6_a_malformed_response_fails_closed(String label, String body, ErrorCode code, String problem) {
        ScriptedFunction fn = function();
        fn.thenReturn(response(3, "Diff", 0, row("I", 3, "\"Id\":1"))).thenReturn(body);
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()), out);
        engine.runOnce();
        out.clear();

        ObjectReport report = engine.runOnce().get(fn.name());

        assertThat(report.outcome()).isEqualTo(Outcome.FAILED);
        TidemarkException error = report.error().orElseThrow();
        assertThat(error.code()).isEqualTo(code);
        assertThat(error.getMessage()).startsWith("[" + fn.name() + "]").contains(problem)
                .contains("Nothing was delivered and the watermark did not move");
        assertThat(out.offered()).isZero();
        assertThat(stored(fn.name())).hasValue(3);
        assertThat(store.load(fn.name()).orElseThrow().lastError()).get().asString().startsWith(code.name());
    }

    @Test
    void rule6_a_bad_row_at_the_very_end_stops_the_pages_before_it_from_being_delivered() {
        ScriptedFunction fn = function();
        String[] rows = new String[3001];
        for (int i = 0; i < 3000; i++) {
            rows[i] = row("I", i + 1, "\"Id\":" + i);
        }
        rows[3000] = "{\"$operation\":\"I\",\"$version\":\"3001\"}";
        fn.thenReturn(response(3001, "Diff", 0, rows));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()), out);

        ObjectReport report = engine.runOnce().get(fn.name());

        assertThat(report.outcome()).isEqualTo(Outcome.FAILED);
        assertThat(report.error().orElseThrow().getMessage()).contains("Data[3000].$version");
        assertThat(out.offered()).isZero();
        assertThat(stored(fn.name())).isEmpty();
    }

    @Test
    void rule6_malformed_json_shows_the_driver_payloads_length_in_bytes_and_its_first_and_last_200_characters() {
        ScriptedFunction fn = function();
        StringBuilder body = new StringBuilder("{" + SYNC + ",\"Data\":[");
        for (int i = 0; i < 100; i++) {
            body.append(row("I", i + 1, "\"Name\":\"ä-" + i + "\"")).append(',');
        }
        body.append("{\"$version\":101,\"Name\":\"unterminated}]}");
        String payload = body.toString();
        fn.thenReturn(payload);
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()), new RecordingDestination());

        TidemarkException error = engine.runOnce().get(fn.name()).error().orElseThrow();

        assertThat(error.code()).isEqualTo(ErrorCode.MALFORMED_JSON);
        assertThat(error.getMessage())
                .contains("Payload length: " + payload.getBytes(StandardCharsets.UTF_8).length + " bytes")
                .contains("first 200 characters: \"" + payload.substring(0, 200).replace("\"", "\\\"") + "\"")
                .contains("last 200 characters: \"" + payload.substring(payload.length() - 200).replace("\"", "\\\"") + "\"");
    }

    // Lifecycle.

    @Test
    void close_cancels_a_running_pg_sleep_call_and_keeps_the_watermark() throws Exception {
        database.execute("CREATE FUNCTION public.slow_changes(payload json) RETURNS json LANGUAGE sql AS $$"
                + " SELECT json_build_object('Metadata', json_build_object('Sync', json_build_object('Version', 99 + 0 * extract(epoch FROM clock_timestamp()) + 0 * length(pg_sleep(300)::text)))) $$");
        WatermarkStore watermarks = InMemoryWatermarkStore.create();
        SyncEngine engine = SyncEngine.builder()
                .name("slow")
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(watermarks)
                .track(TrackedObject.of("slow", "public.slow_changes"))
                .destination("out", new RecordingDestination())
                .shutdownTimeout(Duration.ofMillis(200))
                .build();
        engine.start();
        awaitQuery("slow_changes", true);

        long started = System.nanoTime();
        engine.close();

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
        assertThat(pollerThreads("slow-")).isEmpty();
        assertThat(watermarks.load("slow").map(s -> s.version()).orElse(OptionalLong.empty())).isEmpty();
        assertThat(watermarks.load("slow").orElseThrow().lastError()).get().asString().startsWith("ENGINE_STATE");
        awaitQuery("slow_changes", false);
    }

    @Test
    void a_pause_is_stored_in_the_database_and_seen_by_another_engine_with_its_own_store() {
        RowsFunction fn = rows().insert(1, 2);
        TrackedObject object = TrackedObject.of(fn.name(), fn.name());
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine first = builder(object).name("pauser").destination("out", out).build();
             SyncEngine second = SyncEngine.builder().name("other")
                     .provider(PostgresProvider.create(database.dataSource()))
                     .watermarks(JdbcWatermarkStore.create(database.dataSource()))
                     .track(object).destination("out", out).build()) {
            first.pause(fn.name());

            ObjectReport report = second.runOnce().get(fn.name());

            assertThat(report.outcome()).isEqualTo(Outcome.PAUSED);
            assertThat(fn.calls()).isEmpty();
            assertThat(out.offered()).isZero();

            second.resume(fn.name());
            assertThat(first.runOnce().get(fn.name()).outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(out.changes()).hasSize(2);
        }
    }

    @Test
    void a_backlog_drains_through_a_real_function_in_max_rows_steps() throws Exception {
        RowsFunction fn = rows().insert(1, 300);
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = builder(TrackedObject.of(fn.name(), fn.name()).maxRows(100).pollInterval(Duration.ofHours(1)))
                .name("drain").destination("out", out).build()) {
            engine.start();

            out.awaitChanges(300, Duration.ofSeconds(60));

            assertThat(out.batches()).extracting(b -> b.changes().size()).containsExactly(100, 100, 100);
            assertThat(fn.calls().subList(0, 3)).containsExactly(
                    "{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true,\"maxRows\":100}",
                    "{\"fromVersion\":100,\"mode\":\"sync\",\"maxRows\":100}",
                    "{\"fromVersion\":200,\"mode\":\"sync\",\"maxRows\":100}");
        }
    }

    // Delivery policy and several objects.

    @Test
    void a_dead_lettered_page_is_kept_in_the_database_and_the_watermark_moves_on() {
        RowsFunction fn = rows().insert(1, 5);
        JdbcDeadLetterStore deadLetters = JdbcDeadLetterStore.create(database.dataSource());
        RecordingDestination healthy = new RecordingDestination();
        try (SyncEngine engine = builder(TrackedObject.of(fn.name(), fn.name()).pageSize(2))
                .deadLetters(deadLetters)
                .destination("healthy", healthy)
                .destination("broken", batch -> {
                    if (batch.pageNumber() == 2) {
                        throw new IllegalArgumentException("cannot map row");
                    }
                }, DeliveryPolicy.deadLetterAfter(2, Duration.ZERO))
                .build()) {

            ObjectReport report = engine.runOnce().get(fn.name());

            assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(report.deadLetteredPages()).isEqualTo(1);
            assertThat(stored(fn.name())).hasValue(5);
            assertThat(healthy.changes()).hasSize(5);
            List<DeadLetter> letters = deadLetters.list(fn.name());
            assertThat(letters).singleElement().satisfies(letter -> {
                assertThat(letter.destination()).isEqualTo("broken");
                assertThat(letter.pageNumber()).isEqualTo(2);
                assertThat(letter.changeCount()).isEqualTo(2);
                assertThat(letter.batchId()).isEqualTo(fn.name() + ":0-5");
                assertThat(letter.lastError()).contains("cannot map row");
                assertThat(letter.envelope()).endsWith("\"changes\":["
                        + "{\"$operation\" : \"I\", \"$version\" : 3, \"Body\" : \"row 3\"},"
                        + "{\"$operation\" : \"I\", \"$version\" : 4, \"Body\" : \"row 4\"}]}");
            });
            assertThat(deadLetters.delete(letters.get(0).id())).isTrue();
            assertThat(deadLetters.list(fn.name())).isEmpty();
        }
    }

    @Test
    void a_missing_function_fails_only_its_object_and_every_destination_gets_every_other_object() {
        RowsFunction orders = RowsFunction.create(database, "multi_orders", true).insert(1, 3);
        RowsFunction items = RowsFunction.create(database, "multi_items", true).insert(10, 11);
        RecordingDestination audit = new RecordingDestination();
        RecordingDestination search = new RecordingDestination();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(store)
                .track(TrackedObject.of("Orders", orders.name()))
                .track(TrackedObject.of("Broken", "public.does_not_exist"))
                .track(TrackedObject.of("Items", items.name()).pollInterval(Duration.ofMinutes(5)))
                .destination("audit", audit)
                .destination("search", search)
                .build()) {

            SyncReport report = engine.runOnce();

            assertThat(report.objects()).extracting(ObjectReport::objectName).containsExactly("Orders", "Broken", "Items");
            assertThat(report.get("Orders").outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(report.get("Items").outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(report.get("Broken").outcome()).isEqualTo(Outcome.FAILED);
            assertThat(report.get("Broken").error().orElseThrow().code()).isEqualTo(ErrorCode.PROCEDURE_NOT_FOUND);
            for (RecordingDestination d : List.of(audit, search)) {
                assertThat(d.batches()).extracting(ChangeBatch::objectName).containsExactly("Orders", "Items");
            }
            assertThat(store.load("Orders").orElseThrow().version()).hasValue(3);
            assertThat(store.load("Items").orElseThrow().version()).hasValue(11);
            assertThat(store.load("Broken").orElseThrow().version()).isEmpty();
            assertThat(store.load("Broken").orElseThrow().lastError()).get().asString().startsWith("PROCEDURE_NOT_FOUND");

            items.insert(12, 12);
            assertThat(engine.runOnce("Items").changeCount()).isEqualTo(1);
            assertThat(engine.status("Items").stored().version()).hasValue(12);
        }
    }

    private static List<String> pollerThreads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .filter(n -> n.startsWith(prefix))
                .toList();
    }

    private void awaitQuery(String fragment, boolean active) throws Exception {
        ActiveQueries.await(database.dataSource(), fragment, active);
    }
}
