package io.tidemark.sync;

import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.OptionalLong;

import static io.tidemark.sync.testkit.Responses.response;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The advice of a WATERMARK_REGRESSION is safe to follow: it names the two likely causes, and never advises a reset
 * that skips changes without saying so.
 */
class RegressionAdviceTest {

    private static final Instant T = Instant.parse("2026-01-01T00:00:00Z");

    @Test
    void a_response_below_the_stored_watermark_names_both_causes_and_the_safe_ways_out() {
        ScriptedProvider provider = new ScriptedProvider();
        provider.object("Items").thenReturn(response(10, "Full", 0)).thenReturn(response(7, "Diff", 0));
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = SyncEngine.builder().provider(provider).watermarks(InMemoryWatermarkStore.create())
                .track(TrackedObject.of("Items", "items_changes"))
                .destination("out", out).build()) {
            engine.runOnce();
            ObjectReport report = engine.runOnce("Items");

            TidemarkException e = report.error().orElseThrow();
            assertThat(e.code()).isEqualTo(ErrorCode.WATERMARK_REGRESSION);
            assertThat(e.getMessage()).contains("another engine", "restored", "InitialSync.FULL",
                    "skips every change made since the restore", "only if that loss is accepted");
            assertThat(e.getMessage()).doesNotContain("to start it again");
        }
    }

    @Test
    void losing_a_race_with_another_engine_says_nothing_is_lost_and_not_to_reset() {
        WatermarkStore store = InMemoryWatermarkStore.create();
        store.advance("Items", "p:items", OptionalLong.empty(), 10, T);
        store.advance("Items", "p:items", OptionalLong.of(10), 20, T); // the other engine

        TidemarkException e = catchThrowableOfType(TidemarkException.class,
                () -> store.advance("Items", "p:items", OptionalLong.of(10), 15, T));

        assertThat(e.code()).isEqualTo(ErrorCode.WATERMARK_REGRESSION);
        assertThat(e.getMessage()).contains("another writer stored 20", "nothing is lost", "Do not reset");
    }
}
