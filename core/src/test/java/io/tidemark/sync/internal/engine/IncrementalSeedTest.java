package io.tidemark.sync.internal.engine;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.testkit.ScriptedProvider;
import org.junit.jupiter.api.Test;

import static io.tidemark.sync.testkit.Responses.response;
import static io.tidemark.sync.testkit.Responses.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The first position of an INCREMENTAL object, as the engine and the Kafka Connect source connector take it. */
class IncrementalSeedTest {

    private static final TrackedObject ITEMS = TrackedObject.of("Items", "dbo.ItemsChanges");

    @Test
    void the_providers_current_version_is_taken_without_calling_the_procedure() {
        ScriptedProvider provider = new ScriptedProvider();
        provider.object("Items").currentVersion(500);

        IncrementalSeed.Seeded seeded = IncrementalSeed.seed(ITEMS, provider, CallContext.none());

        assertThat(seeded.version()).isEqualTo(500);
        assertThat(seeded.seedResponse()).isEmpty();
        assertThat(seeded.discardWarning()).isEmpty();
        assertThat(provider.calls("Items")).isEmpty();
    }

    @Test
    void without_one_a_seed_call_gives_its_metadata_version_and_its_rows_are_only_warned_about() {
        ScriptedProvider provider = new ScriptedProvider();
        provider.object("Items").thenReturn(response(41, "Diff", 0, row("I", 40, "\"Id\":1"), row("I", 41, "\"Id\":2")));

        IncrementalSeed.Seeded seeded = IncrementalSeed.seed(ITEMS, provider, CallContext.none());

        assertThat(provider.calls("Items")).containsExactly("{\"fromVersion\":0,\"mode\":\"seed\"}");
        assertThat(seeded.version()).as("the metadata version, not the rows'").isEqualTo(41);
        assertThat(seeded.seedResponse()).hasValueSatisfying(s -> assertThat(s.rowCount()).isEqualTo(2));
        assertThat(seeded.discardWarning()).contains("returned 2 rows during an incremental seed; discarding them");
    }

    @Test
    void a_seed_response_without_rows_warns_about_nothing() {
        ScriptedProvider provider = new ScriptedProvider();
        provider.object("Items").thenReturn(response(7, "Diff", 0));

        IncrementalSeed.Seeded seeded = IncrementalSeed.seed(ITEMS, provider, CallContext.none());

        assertThat(seeded.version()).isEqualTo(7);
        assertThat(seeded.discardWarning()).isEmpty();
    }

    @Test
    void a_seed_response_that_breaks_the_contract_fails_naming_the_object() {
        ScriptedProvider provider = new ScriptedProvider();
        provider.object("Items").thenReturn("{\"Data\":[]}");

        assertThatThrownBy(() -> IncrementalSeed.seed(ITEMS, provider, CallContext.none()))
                .isInstanceOfSatisfying(TidemarkException.class, e -> {
                    assertThat(e.code()).isNotEqualTo(ErrorCode.INTERNAL);
                    assertThat(e.getMessage()).contains("Items");
                });
    }
}
