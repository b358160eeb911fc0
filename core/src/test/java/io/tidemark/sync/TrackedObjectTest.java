package io.tidemark.sync;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class TrackedObjectTest {

    @Test
    void is_immutable_and_defaults_to_a_full_first_sync() {
        TrackedObject base = TrackedObject.of("Items", " public.get_item_changes ");
        TrackedObject tuned = base.initialSync(InitialSync.INCREMENTAL).maxRows(100).pageSize(50)
                .pollInterval(Duration.ofSeconds(5)).table("public.items");

        assertThat(base.initialSync()).isEqualTo(InitialSync.FULL);
        assertThat(base.maxRows()).isEmpty();
        assertThat(base.procedure()).isEqualTo("public.get_item_changes");
        assertThat(tuned.initialSync()).isEqualTo(InitialSync.INCREMENTAL);
        assertThat(tuned.maxRows()).hasValue(100);
        assertThat(tuned.pageSize()).hasValue(50);
        assertThat(tuned.pollInterval()).hasValue(Duration.ofSeconds(5));
        assertThat(tuned.table()).hasValue("public.items");
        assertThat(tuned).isNotEqualTo(base).isEqualTo(base.initialSync(InitialSync.INCREMENTAL).maxRows(100)
                .pageSize(50).pollInterval(Duration.ofSeconds(5)).table("public.items"));
    }

    /** Setters only store: the engine's build() reports every problem (see EngineConfigTest). */
    @Test
    void bad_settings_are_stored_not_thrown() {
        TrackedObject odd = TrackedObject.of(null, null).maxRows(0).pageSize(-1).pollInterval(Duration.ZERO)
                .initialSync(null).table(" ");
        assertThat(odd.maxRows()).hasValue(0);
        assertThat(odd.pageSize()).hasValue(-1);
        assertThat(odd.initialSync()).isNull();
        assertThat(odd).isEqualTo(TrackedObject.of(null, null).maxRows(0).pageSize(-1).pollInterval(Duration.ZERO)
                .initialSync(null).table(" "));
        assertThat(TrackedObject.of("Items", "p").table(null).table()).isEmpty();
    }
}
