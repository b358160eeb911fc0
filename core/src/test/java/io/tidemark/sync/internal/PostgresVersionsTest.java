package io.tidemark.sync.internal;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PostgresVersionsTest {

    @Test
    void the_oldest_supported_major_and_newer_pass() {
        assertThatCode(() -> PostgresVersions.check(140_000, "14.0", "public.items", "the outbox"))
                .doesNotThrowAnyException();
        assertThatCode(() -> PostgresVersions.check(180_006, "18.6", "public.items", "the outbox"))
                .doesNotThrowAnyException();
    }

    @Test
    void an_older_server_is_refused_naming_the_version_needed_and_the_one_found() {
        assertThatThrownBy(() -> PostgresVersions.check(130_022, "13.22", "public.items", "the outbox"))
                .isInstanceOfSatisfying(TidemarkException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_UNSUPPORTED);
                    assertThat(e.objectName()).contains("public.items");
                })
                .hasMessage("[public.items] cannot install the outbox: it needs PostgreSQL 14 or later, and this"
                        + " server is PostgreSQL 13.22. Upgrade the server; nothing was installed.");
        assertThatThrownBy(() -> PostgresVersions.check(120_000, "12beta1", "public.items", "history"))
                .hasMessageContaining("needs PostgreSQL 14 or later")
                .hasMessageContaining("PostgreSQL 12beta1");
    }
}
