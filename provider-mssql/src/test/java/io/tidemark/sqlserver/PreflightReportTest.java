package io.tidemark.sqlserver;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PreflightReportTest {

    private final PreflightReport report = new PreflightReport(List.of(
            PreflightCheck.ok(null, "login", "connected as login app"),
            PreflightCheck.warning(null, "change tracking retention", "retention 2 HOURS"),
            PreflightCheck.failed(null, "snapshot isolation", ErrorCode.SNAPSHOT_ISOLATION_DISABLED,
                    "ALLOW_SNAPSHOT_ISOLATION is OFF"),
            PreflightCheck.ok("Items", "procedure", "ok"),
            PreflightCheck.failed("Items", "execute permission", ErrorCode.PERMISSION_DENIED, "may not execute")));

    @Test
    void sorts_checks_by_outcome_and_object() {
        assertThat(report.isOk()).isFalse();
        assertThat(report.failures()).extracting(PreflightCheck::check)
                .containsExactly("snapshot isolation", "execute permission");
        assertThat(report.warnings()).extracting(PreflightCheck::check).containsExactly("change tracking retention");
        assertThat(report.forObject("Items")).extracting(PreflightCheck::check)
                .containsExactly("procedure", "execute permission");
        assertThat(report.checks()).hasSize(5);
    }

    @Test
    void throw_if_failed_carries_the_first_failures_code_and_every_failure() {
        assertThatThrownBy(report::throwIfFailed)
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code())
                        .isEqualTo(ErrorCode.SNAPSHOT_ISOLATION_DISABLED))
                .hasMessageContaining("SQL Server preflight found 2 problems:")
                .hasMessageContaining("FAILED snapshot isolation: ALLOW_SNAPSHOT_ISOLATION is OFF")
                .hasMessageContaining("FAILED [Items] execute permission: may not execute");
    }

    @Test
    void a_report_without_failures_passes() {
        PreflightReport good = new PreflightReport(List.of(PreflightCheck.warning("Items", "x", "y")));
        assertThat(good.isOk()).isTrue();
        assertThat(good.throwIfFailed()).isSameAs(good);
        assertThat(good).hasToString("SQL Server preflight: ready, 1 warning\n  WARNING [Items] x: y");
    }

    @Test
    void prints_one_line_per_check() {
        assertThat(report.toString()).startsWith("SQL Server preflight: 2 failed, 1 warning\n")
                .contains("  OK login: connected as login app\n")
                .contains("  FAILED [Items] execute permission: may not execute");
    }
}
