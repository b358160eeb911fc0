package io.tidemark.sync.internal.sql;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SqlTemplateTest {

    @Test
    void fills_every_placeholder_verbatim() {
        String sql = SqlTemplate.of("""
                SELECT {{column}} FROM {{table}} WHERE {{column}} > {{limit}}
                """).with("column", "\"a$b\"").with("table", "\"s\".\"t\"").with("limit", 5).render();
        assertThat(sql).isEqualTo("SELECT \"a$b\" FROM \"s\".\"t\" WHERE \"a$b\" > 5\n");
    }

    @Test
    void an_unbound_placeholder_fails() {
        assertThatThrownBy(() -> SqlTemplate.of("SELECT {{x}}").render())
                .hasMessageContaining("unbound placeholder {{x}}");
    }

    @Test
    void an_unused_binding_fails() {
        assertThatThrownBy(() -> SqlTemplate.of("SELECT 1").with("x", "2").render())
                .hasMessageContaining("unused bindings: [x]");
    }

    @Test
    void a_binding_given_twice_fails() {
        assertThatThrownBy(() -> SqlTemplate.of("SELECT {{x}}").with("x", "1").with("x", "2"))
                .hasMessageContaining("bound twice: x");
    }
}
