package io.tidemark.sync;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

    @Test
    void refuses_bad_settings_with_the_object_name() {
        TrackedObject items = TrackedObject.of("Items", "p");
        assertThatThrownBy(() -> items.maxRows(0)).hasMessageContaining("[Items] maxRows must be at least 1");
        assertThatThrownBy(() -> items.pageSize(-1)).hasMessageContaining("pageSize");
        assertThatThrownBy(() -> items.pollInterval(Duration.ZERO)).hasMessageContaining("pollInterval");
        assertThatThrownBy(() -> TrackedObject.of(" ", "p")).hasMessageContaining("non-blank name");
        assertThatThrownBy(() -> TrackedObject.of("A\nB", "p")).hasMessageContaining("control character");
        assertThatThrownBy(() -> TrackedObject.of("Items", "")).hasMessageContaining("[Items]");
    }
}
