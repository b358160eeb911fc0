package io.tidemark.sqlserver;

import io.tidemark.sync.testsupport.Golden;
import io.tidemark.sqlserver.internal.TSqlScript;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LeastPrivilegeRoleTest {

    private static LeastPrivilegeRole role() {
        return LeastPrivilegeRole.named("tidemark_reader")
                .grantsFor(ChangeProcedureGeneratorTest.items(ChangeProcedureGenerator.Level.COLUMN))
                .procedure("sales.get_order_changes")
                .table("sales.Orders")
                .storeSchema("tidemark")
                .member("tidemark_app")
                .build();
    }

    @Test
    void matches_the_golden_file() {
        Golden.assertMatches("role.sql", role().script());
    }

    @Test
    void grants_execute_and_view_change_tracking_and_nothing_on_the_tables_data() {
        String script = role().script();
        assertThat(script)
                .contains("IF DATABASE_PRINCIPAL_ID(N'tidemark_reader') IS NULL\n    CREATE ROLE [tidemark_reader];")
                .contains("GRANT EXECUTE ON OBJECT::[dbo].[Items_changes] TO [tidemark_reader];")
                .contains("GRANT EXECUTE ON OBJECT::[sales].[get_order_changes] TO [tidemark_reader];")
                .contains("GRANT VIEW CHANGE TRACKING ON OBJECT::[dbo].[Items] TO [tidemark_reader];")
                .contains("GRANT VIEW CHANGE TRACKING ON OBJECT::[sales].[Orders] TO [tidemark_reader];")
                .contains("GRANT SELECT, INSERT, UPDATE, DELETE ON SCHEMA::[tidemark] TO [tidemark_reader];")
                .contains("ALTER ROLE [tidemark_reader] ADD MEMBER [tidemark_app];")
                .doesNotContain("GRANT SELECT ON")
                .doesNotContain("db_owner")
                .doesNotContain("VIEW DATABASE STATE");
        assertThat(TSqlScript.batches(script)).hasSize(3);
    }

    @Test
    void names_are_quoted_and_escaped() {
        String script = LeastPrivilegeRole.named("app]role").procedure("[p'x]").member("o'brien").build().script();
        assertThat(script).contains("CREATE ROLE [app]]role];")
                .contains("DATABASE_PRINCIPAL_ID(N'app]role')")
                .contains("GRANT EXECUTE ON OBJECT::[dbo].[p'x] TO [app]]role];")
                .contains("IS_ROLEMEMBER(N'app]role', N'o''brien')")
                .contains("ADD MEMBER [o'brien];");
    }

    @Test
    void refuses_a_role_that_grants_nothing_or_a_bad_name() {
        assertThatThrownBy(() -> LeastPrivilegeRole.named("r").build())
                .hasMessageContaining("grants nothing");
        assertThatThrownBy(() -> LeastPrivilegeRole.named("r\n").procedure("dbo.p").build())
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION));
    }

    /** Setters only store: build() reports every bad name at once, nulls included. */
    @Test
    void every_problem_is_reported_by_build() {
        LeastPrivilegeRole.Builder builder = LeastPrivilegeRole.named(null).procedure("a.b.c").table(null)
                .storeSchema("s\n").member("u;--").grantsFor(null);
        assertThatThrownBy(builder::build)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageStartingWith("LeastPrivilegeRole has 5 configuration problems:")
                .hasMessageContaining("more than two parts");
    }
}
