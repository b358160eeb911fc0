package io.tidemark.sync;

import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import io.tidemark.sync.testkit.ScriptedProvider.PayloadForm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;
import java.util.stream.Stream;

import static io.tidemark.sync.testkit.Responses.inserts;
import static io.tidemark.sync.testkit.Responses.response;
import static io.tidemark.sync.testkit.Responses.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Rule 6: every malformed response fails the object's cycle with an error naming the object and the problem;
 * nothing is delivered and the watermark does not move. Each body is handed over in each form a real provider
 * uses (the driver's UTF-8 bytes, a String, a spooled stream), since each is read by its own payload class.
 */
class MalformedResponseTest {

    private static final String ITEMS = "Items";
    private static final String SYNC = "\"Metadata\":{\"Sync\":{\"Version\":9,\"Type\":\"Diff\",\"ReasonCode\":0}}";

    private final ScriptedProvider provider = new ScriptedProvider();
    private final WatermarkStore store = InMemoryWatermarkStore.create();

    static Stream<Arguments> malformed() {
        return Stream.of(
                arguments("Metadata missing", "{\"Data\":[]}", ErrorCode.INVALID_RESPONSE, "Metadata is missing"),
                arguments("Sync missing", "{\"Metadata\":{},\"Data\":[]}", ErrorCode.INVALID_RESPONSE, "Metadata.Sync is missing"),
                arguments("Version missing", "{\"Metadata\":{\"Sync\":{\"Type\":\"Diff\"}},\"Data\":[]}",
                        ErrorCode.INVALID_RESPONSE, "Metadata.Sync.Version is missing"),
                arguments("Version null", "{\"Metadata\":{\"Sync\":{\"Version\":null}}}", ErrorCode.INVALID_RESPONSE,
                        "Metadata.Sync.Version is null"),
                arguments("Version a string", "{\"Metadata\":{\"Sync\":{\"Version\":\"12\"}}}", ErrorCode.INVALID_RESPONSE,
                        "Metadata.Sync.Version must be a 64-bit integer, got the string \"12\""),
                arguments("Version a fraction", "{\"Metadata\":{\"Sync\":{\"Version\":12.5}}}", ErrorCode.INVALID_RESPONSE,
                        "Metadata.Sync.Version must be a 64-bit integer, got the number 12.5"),
                arguments("Version beyond 64 bits", "{\"Metadata\":{\"Sync\":{\"Version\":9223372036854775808}}}",
                        ErrorCode.INVALID_RESPONSE, "does not fit in a 64-bit integer"),
                arguments("Metadata not an object", "{\"Metadata\":[1]}", ErrorCode.INVALID_RESPONSE, "Metadata must be an object"),
                arguments("Type unknown", "{\"Metadata\":{\"Sync\":{\"Version\":9,\"Type\":\"Partial\"}}}",
                        ErrorCode.INVALID_RESPONSE, "Metadata.Sync.Type must be \"Full\" or \"Diff\""),
                arguments("ReasonCode not an integer", "{\"Metadata\":{\"Sync\":{\"Version\":9,\"ReasonCode\":\"1\"}}}",
                        ErrorCode.INVALID_RESPONSE, "Metadata.Sync.ReasonCode must be an integer"),
                arguments("Data an object", "{" + SYNC + ",\"Data\":{\"$version\":1}}", ErrorCode.INVALID_RESPONSE,
                        "Data must be an array, got an object"),
                arguments("Data a string", "{" + SYNC + ",\"Data\":\"[]\"}", ErrorCode.INVALID_RESPONSE,
                        "Data must be an array, got the string"),
                arguments("element not an object", "{" + SYNC + ",\"Data\":[{\"$version\":1},2]}",
                        ErrorCode.INVALID_RESPONSE, "Data[1] must be an object, got the number 2"),
                arguments("$version a string", "{" + SYNC + ",\"Data\":[{\"$version\":\"7\"}]}", ErrorCode.INVALID_RESPONSE,
                        "Data[0].$version must be a 64-bit integer, got the string \"7\""),
                arguments("$version a fraction", "{" + SYNC + ",\"Data\":[{\"$version\":7},{\"$version\":7.5}]}",
                        ErrorCode.INVALID_RESPONSE, "Data[1].$version must be a 64-bit integer, got the number 7.5"),
                arguments("$operation unknown", "{" + SYNC + ",\"Data\":[{\"$operation\":\"X\",\"$version\":1}]}",
                        ErrorCode.INVALID_RESPONSE, "Data[0].$operation must be \"I\", \"U\" or \"D\", got the string \"X\""),
                arguments("$operation spelled out", "{" + SYNC + ",\"Data\":[{\"$operation\":\"INSERT\"}]}",
                        ErrorCode.INVALID_RESPONSE, "Data[0].$operation must be"),
                arguments("$changed not an array", "{" + SYNC + ",\"Data\":[{\"$changed\":\"Name\"}]}",
                        ErrorCode.INVALID_RESPONSE, "Data[0].$changed must be an array"),
                arguments("not an object", "[1,2]", ErrorCode.INVALID_RESPONSE, "must be a JSON object, got an array"),
                arguments("two documents", "{" + SYNC + "} {" + SYNC + "}", ErrorCode.INVALID_RESPONSE,
                        "more after the JSON document"),
                arguments("NULL", null, ErrorCode.EMPTY_RESPONSE, "empty response"),
                arguments("empty string", "", ErrorCode.EMPTY_RESPONSE, "empty response"),
                arguments("blank", "  \n ", ErrorCode.EMPTY_RESPONSE, "empty response"),
                arguments("truncated", "{" + SYNC + ",\"Data\":[{\"$version\":1", ErrorCode.MALFORMED_JSON,
                        "malformed JSON"),
                arguments("not JSON", "ERROR: permission denied", ErrorCode.MALFORMED_JSON, "malformed JSON"));
    }

    /** Every malformed body, in every payload form. */
    static Stream<Arguments> malformedInEveryForm() {
        return Stream.of(PayloadForm.values()).flatMap(form -> malformed().map(a -> {
            Object[] args = a.get();
            return arguments(form, args[0], args[1], args[2], args[3]);
        }));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("malformedInEveryForm")
    void fails_closed(PayloadForm form, String label, String body, ErrorCode code, String problem) {
        provider.payloadForm(form).object(ITEMS).thenReturn(response(3, "Diff", 0, row("I", 3, "\"Id\":1"))).thenReturn(body);
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = engine(out)) {
            engine.runOnce();
            out.clear();

            ObjectReport report = engine.runOnce().get(ITEMS);

            assertThat(report.outcome()).isEqualTo(Outcome.FAILED);
            TidemarkException error = report.error().orElseThrow();
            assertThat(error.code()).isEqualTo(code);
            assertThat(error.objectName()).hasValue(ITEMS);
            assertThat(error.getMessage()).startsWith("[" + ITEMS + "]").contains(problem)
                    .contains("Nothing was delivered and the watermark did not move");
            assertThat(out.offered()).isZero();
            assertThat(store.load(ITEMS).orElseThrow().version()).isEqualTo(OptionalLong.of(3));
            assertThat(store.load(ITEMS).orElseThrow().lastError()).get().asString().startsWith(code.name());
        }
    }

    @ParameterizedTest
    @EnumSource(PayloadForm.class)
    void a_bad_row_at_the_very_end_stops_the_pages_before_it_from_being_delivered(PayloadForm form) {
        String[] rows = new String[3001];
        System.arraycopy(inserts(1, 3000), 0, rows, 0, 3000);
        rows[3000] = "{\"$operation\":\"I\",\"$version\":\"3001\"}";
        provider.payloadForm(form).object(ITEMS).thenReturn(response(3001, "Diff", 0, rows));
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = engine(out)) {
            ObjectReport report = engine.runOnce().get(ITEMS);

            assertThat(report.outcome()).isEqualTo(Outcome.FAILED);
            assertThat(report.error().orElseThrow().getMessage())
                    .contains("Data[3000].$version must be a 64-bit integer, got the string \"3001\"");
            assertThat(out.offered()).isZero();
            assertThat(store.load(ITEMS).map(s -> s.version()).orElse(OptionalLong.empty())).isEmpty();
        }
    }

    @ParameterizedTest
    @EnumSource(PayloadForm.class)
    void malformed_json_shows_the_payload_length_and_its_first_and_last_200_characters(PayloadForm form) {
        StringBuilder body = new StringBuilder("{" + SYNC + ",\"Data\":[");
        for (int i = 0; i < 100; i++) {
            body.append(row("I", i + 1, "\"Name\":\"ä-" + i + "\"")).append(',');
        }
        body.append("{\"$version\":101,\"Name\":\"unterminated}]}");
        String payload = body.toString();
        provider.payloadForm(form).object(ITEMS).thenReturn(payload);
        try (SyncEngine engine = engine(new RecordingDestination())) {
            TidemarkException error = engine.runOnce().get(ITEMS).error().orElseThrow();

            String length = form == PayloadForm.UTF8_BYTES
                    ? payload.getBytes(StandardCharsets.UTF_8).length + " bytes"
                    : payload.length() + " characters";
            assertThat(error.code()).isEqualTo(ErrorCode.MALFORMED_JSON);
            assertThat(error.getMessage())
                    .contains("Payload length: " + length)
                    .contains("first 200 characters: \"" + payload.substring(0, 200).replace("\"", "\\\"") + "\"")
                    .contains("last 200 characters: \"" + payload.substring(payload.length() - 200).replace("\"", "\\\"") + "\"");
        }
    }

    @Test
    void a_malformed_response_of_one_object_does_not_stop_the_others() {
        provider.object("Broken").thenReturn("{\"Metadata\":{\"Sync\":{\"Version\":\"x\"}}}");
        provider.object(ITEMS).thenReturn(response(4, "Diff", 0, row("I", 4, "\"Id\":1")));
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(provider)
                .watermarks(store)
                .track(TrackedObject.of("Broken", "public.broken_changes"))
                .track(TrackedObject.of(ITEMS, "public.items_changes"))
                .destination("out", out)
                .build()) {
            SyncReport report = engine.runOnce();

            assertThat(report.get("Broken").outcome()).isEqualTo(Outcome.FAILED);
            assertThat(report.get(ITEMS).outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(out.batches()).extracting(ChangeBatch::objectName).containsExactly(ITEMS);
            assertThat(store.load("Broken").orElseThrow().version()).isEmpty();
            assertThat(store.load(ITEMS).orElseThrow().version()).hasValue(4);
        }
    }

    private SyncEngine engine(RecordingDestination out) {
        return SyncEngine.builder()
                .provider(provider)
                .watermarks(store)
                .track(TrackedObject.of(ITEMS, "public.items_changes"))
                .destination("out", out)
                .build();
    }
}
