package io.tidemark.kafka.connect.internal;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.testkit.ScriptedProvider;
import org.junit.jupiter.api.Test;

import java.util.OptionalLong;

import static io.tidemark.sync.testkit.Responses.response;
import static io.tidemark.sync.testkit.Responses.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The cursor's use of core's version rules, against a scripted provider (no database). */
class ObjectCursorRulesTest {

    private static final TrackedObject ITEMS = TrackedObject.of("Items", "dbo.ItemsChanges")
            .initialSync(InitialSync.INCREMENTAL);

    @Test
    void an_incremental_object_starts_from_the_providers_current_version_without_calling_the_procedure() {
        // SQL Server's provider knows the Change Tracking version; the seed call is only for providers that do not.
        ScriptedProvider provider = new ScriptedProvider();
        provider.object("Items").currentVersion(500)
                .thenReturn(response(501, "Diff", 0, row("I", 501, "\"ItemCode\":\"I1\"")));
        ObjectCursor cursor = new ObjectCursor(ITEMS, provider, CallContext.none(), 10, OptionalLong.empty());

        ObjectCursor.Step seeded = cursor.next();
        assertThat(seeded.positionOnly()).hasValue(500);
        assertThat(provider.calls("Items")).isEmpty();

        ObjectCursor.Step changes = cursor.next();
        assertThat(provider.calls("Items")).containsExactly("{\"fromVersion\":500,\"mode\":\"sync\"}");
        assertThat(changes.changes()).singleElement().satisfies(e -> assertThat(e.offsetVersion()).hasValue(501));
        assertThat(cursor.position()).hasValue(501);
    }

    @Test
    void seed_rows_are_discarded_and_the_metadata_version_is_the_start() {
        ScriptedProvider provider = new ScriptedProvider();
        provider.object("Items").thenReturn(response(41, "Diff", 0, row("I", 40, "\"ItemCode\":\"I1\"")))
                .thenReturn(response(41, "Diff", 0));
        ObjectCursor cursor = new ObjectCursor(ITEMS, provider, CallContext.none(), 10, OptionalLong.empty());

        assertThat(cursor.next().positionOnly()).hasValue(41);
        assertThat(cursor.next().isIdle()).isTrue();
        assertThat(provider.calls("Items")).containsExactly("{\"fromVersion\":0,\"mode\":\"seed\"}",
                "{\"fromVersion\":41,\"mode\":\"sync\"}");
    }

    @Test
    void a_response_below_the_committed_offset_is_refused_with_advice_in_connects_terms() {
        ScriptedProvider provider = new ScriptedProvider();
        provider.object("Items").thenReturn(response(4, "Diff", 0, row("I", 4, "\"ItemCode\":\"I1\"")));
        ObjectCursor cursor = new ObjectCursor(ITEMS, provider, CallContext.none(), 10, OptionalLong.of(10));

        assertThatThrownBy(cursor::next).isInstanceOfSatisfying(TidemarkException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.WATERMARK_REGRESSION);
            assertThat(e.getMessage()).contains("[Items]")
                    .contains("would move the position back from 10 to 4")
                    .contains("Nothing of it was handed to Connect")
                    .contains("DELETE /connectors/<name>/offsets")
                    .contains("object.Items.initial.sync=FULL")
                    .doesNotContain("SyncEngine");
        });
        assertThat(cursor.position()).hasValue(10);
        assertThat(cursor.inResponse()).isFalse();
    }
}
