package io.tidemark.sync.internal.engine;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.contract.ResponseScanner;
import io.tidemark.sync.internal.contract.ResponseSummary;
import io.tidemark.sync.spi.ResponsePayload;
import org.junit.jupiter.api.Test;

import java.util.Optional;
import java.util.OptionalLong;

import static io.tidemark.sync.testkit.Responses.response;
import static io.tidemark.sync.testkit.Responses.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The rules of one call the engine and the Kafka Connect source connector share. */
class CallRulesTest {

    private static final TrackedObject ITEMS = TrackedObject.of("Items", "public.items_changes").maxRows(50);

    private static ResponseSummary scan(String body) {
        try (ResponsePayload payload = ResponsePayload.ofString(body)) {
            return ResponseScanner.scan("Items", payload);
        }
    }

    @Test
    void without_a_position_the_first_export_is_asked_for_and_a_stored_zero_is_a_position() {
        assertThat(CallRules.request(ITEMS, OptionalLong.empty()).toJson())
                .isEqualTo("{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true,\"maxRows\":50}");
        assertThat(CallRules.request(ITEMS, OptionalLong.of(0)).toJson())
                .isEqualTo("{\"fromVersion\":0,\"mode\":\"sync\",\"maxRows\":50}");
        assertThat(CallRules.request(ITEMS, OptionalLong.of(42)).toJson())
                .isEqualTo("{\"fromVersion\":42,\"mode\":\"sync\",\"maxRows\":50}");
    }

    @Test
    void the_version_to_store_is_the_highest_row_version_else_the_metadata_version() {
        assertThat(CallRules.versionToStore("Items", OptionalLong.of(5),
                scan(response(6, "Diff", 0, row("I", 7, "\"Id\":1"), row("U", 9, "\"Id\":2"))), "watermark", ""))
                .isEqualTo(9);
        assertThat(CallRules.versionToStore("Items", OptionalLong.of(5), scan(response(8, "Diff", 0)),
                "watermark", "")).isEqualTo(8);
        assertThat(CallRules.versionToStore("Items", OptionalLong.empty(), scan(response(1, "Full", 0)),
                "watermark", "")).isEqualTo(1);
    }

    @Test
    void a_response_below_the_position_is_refused_with_both_versions_and_the_callers_advice() {
        ResponseSummary behind = scan(response(3, "Diff", 0, row("I", 4, "\"Id\":1")));

        assertThatThrownBy(() -> CallRules.versionToStore("Items", OptionalLong.of(10), behind, "position",
                "Reset the offsets."))
                .isInstanceOfSatisfying(TidemarkException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.WATERMARK_REGRESSION);
                    assertThat(e.getMessage()).contains("[Items]")
                            .contains("would move the position back from 10 to 4 (highest $version 4,"
                                    + " Metadata.Sync.Version 3); refusing it")
                            .endsWith("Reset the offsets.");
                });
        assertThat(CallRules.versionToStore("Items", OptionalLong.of(4), behind, "position", "")).isEqualTo(4);
    }

    @Test
    void only_a_stored_identity_that_differs_is_a_source_change() {
        String now = "postgres:\"public\".\"items_changes\"";
        assertThat(CallRules.sourceChanged(OptionalLong.of(3), Optional.of("postgres:\"public\".\"old\""), now))
                .isTrue();
        assertThat(CallRules.sourceChanged(OptionalLong.of(3), Optional.of(now), now)).isFalse();
        assertThat(CallRules.sourceChanged(OptionalLong.of(3), Optional.empty(), now))
                .as("a position stored before identities were recorded").isFalse();
        assertThat(CallRules.sourceChanged(OptionalLong.empty(), Optional.of("other"), now)).isFalse();
    }
}
