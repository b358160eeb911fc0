package io.tidemark.sync.internal.contract;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.ResponsePayload;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The checking pass on its own (the same rules run end to end against PostgreSQL in tidemark-postgres). */
class ResponseScannerTest {

    private static ResponseSummary scan(String json) {
        return ResponseScanner.scan("Items", ResponsePayload.ofUtf8(json.getBytes(StandardCharsets.UTF_8)));
    }

    private static TidemarkException failure(String json) {
        try {
            scan(json);
        } catch (TidemarkException e) {
            return e;
        }
        throw new AssertionError("expected a failure for " + json);
    }

    @Test
    void summarises_a_valid_response() {
        ResponseSummary summary = scan("{\"Metadata\":{\"Sync\":{\"Version\":50,\"Type\":\"Full\",\"ReasonCode\":1}},"
                + "\"Data\":[{\"$operation\":\"I\",\"$version\":7,\"A\":{\"nested\":[1,2]}},{\"$version\":9},{\"X\":null}]}");

        assertThat(summary.metadataVersion()).isEqualTo(50);
        assertThat(summary.syncType()).isEqualTo(SyncType.FULL);
        assertThat(summary.reasonCode()).isEqualTo(1);
        assertThat(summary.rowCount()).isEqualTo(3);
        assertThat(summary.highestRowVersion()).hasValue(9);
        assertThat(summary.versionToStore()).isEqualTo(9);
    }

    @Test
    void data_may_come_before_metadata_be_null_or_be_absent() {
        assertThat(scan("{\"Data\":[{\"$version\":3}],\"Metadata\":{\"Sync\":{\"Version\":4}}}").rowCount()).isEqualTo(1);
        assertThat(scan("{\"Metadata\":{\"Sync\":{\"Version\":4}},\"Data\":null}").rowCount()).isZero();
        ResponseSummary absent = scan("{\"Metadata\":{\"Sync\":{\"Version\":4}}}");
        assertThat(absent.rowCount()).isZero();
        assertThat(absent.versionToStore()).isEqualTo(4);
        assertThat(absent.syncType()).isEqualTo(SyncType.DIFF);
        assertThat(absent.reasonCode()).isZero();
    }

    @Test
    void envelope_keys_are_matched_without_regard_to_case_and_unknown_keys_are_ignored() {
        ResponseSummary summary = scan("{\"metadata\":{\"sync\":{\"version\":8,\"type\":\"diff\",\"reasoncode\":0,\"Extra\":[1]}},"
                + "\"DATA\":[],\"Debug\":{\"x\":1}}");
        assertThat(summary.metadataVersion()).isEqualTo(8);
    }

    @Test
    void version_zero_and_negative_versions_are_integers_like_any_other() {
        assertThat(scan("{\"Metadata\":{\"Sync\":{\"Version\":0}}}").versionToStore()).isZero();
        assertThat(scan("{\"Metadata\":{\"Sync\":{\"Version\":-5}}}").versionToStore()).isEqualTo(-5);
        assertThat(scan("{\"Metadata\":{\"Sync\":{\"Version\":9223372036854775807}}}").versionToStore()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void every_contract_breach_names_the_object_and_the_place() {
        assertThat(failure("{\"Metadata\":{\"Sync\":{}}}").getMessage())
                .startsWith("[Items] ").contains("Metadata.Sync.Version is missing");
        assertThat(failure("{\"Metadata\":{\"Sync\":{\"Version\":1}},\"Data\":[{},{},{\"$version\":true}]}").getMessage())
                .contains("Data[2].$version must be a 64-bit integer, got the boolean true");
        assertThat(failure("{\"Metadata\":{\"Sync\":{\"Version\":1}},\"Data\":[{\"$changed\":[\"A\",3]}]}").getMessage())
                .contains("Data[0].$changed must hold only column names");
        assertThat(failure("{\"Metadata\":{\"Sync\":{\"Version\":1,\"version\":2}}}").getMessage())
                .contains("Metadata.Sync.Version appears twice");
        assertThat(failure("{\"Metadata\":{\"Sync\":{\"Version\":1}},\"Data\":[],\"data\":[]}").getMessage())
                .contains("Data appears twice");
        assertThat(failure("{\"Metadata\":{\"Sync\":{\"Version\":1}},\"Data\":[{\"$operation\":7}]}").code())
                .isEqualTo(ErrorCode.INVALID_RESPONSE);
        assertThat(failure("\"just a string\"").getMessage()).contains("must be a JSON object, got the string");
    }

    @Test
    void null_operation_and_version_mean_absent() {
        ResponseSummary summary = scan("{\"Metadata\":{\"Sync\":{\"Version\":5}},\"Data\":[{\"$operation\":null,\"$version\":null,\"$changed\":null}]}");
        assertThat(summary.highestRowVersion()).isEmpty();
        assertThat(summary.versionToStore()).isEqualTo(5);
    }

    @Test
    void malformed_json_reports_length_head_and_tail_of_a_streamed_payload_too() throws IOException {
        StringBuilder body = new StringBuilder("{\"Metadata\":{\"Sync\":{\"Version\":5}},\"Data\":[");
        for (int i = 0; i < 500; i++) {
            body.append("{\"$version\":").append(i).append(",\"Name\":\"n").append(i).append("\"},");
        }
        body.append("{\"oops\" 1}]}");
        String text = body.toString();
        try (ResponsePayload spooled = ResponsePayload.spool(new StringReader(text))) {
            assertThatThrownBy(() -> ResponseScanner.scan("Items", spooled))
                    .isInstanceOf(TidemarkException.class)
                    .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.MALFORMED_JSON))
                    .hasMessageContaining("Payload length: " + text.length() + " characters")
                    .hasMessageContaining(text.substring(0, 200).replace("\"", "\\\""))
                    .hasMessageContaining(text.substring(text.length() - 200).replace("\"", "\\\""));
        }
    }

    @Test
    void a_blank_payload_is_an_empty_response() {
        assertThat(failure(" \r\n\t").code()).isEqualTo(ErrorCode.EMPTY_RESPONSE);
        assertThat(failure("").getMessage()).contains("no row, NULL or an empty string");
    }
}
