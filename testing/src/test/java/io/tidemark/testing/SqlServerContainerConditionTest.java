package io.tidemark.testing;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;

import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** When SQL Server container tests run, and the reason they give when they do not. Needs no Docker. */
class SqlServerContainerConditionTest {

    @Test
    void without_testcontainers_on_the_classpath_they_are_skipped_without_probing_docker() {
        AtomicInteger probes = new AtomicInteger();
        ConditionEvaluationResult result = SqlServerContainerExtension.evaluate(false, () -> {
            probes.incrementAndGet();
            return true;
        });
        assertThat(result.isDisabled()).isTrue();
        assertThat(result.getReason()).hasValueSatisfying(reason -> assertThat(reason)
                .startsWith("SQL Server container tests skipped:")
                .contains("org.testcontainers:testcontainers-mssqlserver")
                .contains("com.microsoft.sqlserver:mssql-jdbc"));
        assertThat(probes).hasValue(0);
    }

    @Test
    void without_docker_they_are_skipped_with_the_reason() {
        ConditionEvaluationResult result = SqlServerContainerExtension.evaluate(true, () -> false);
        assertThat(result.isDisabled()).isTrue();
        assertThat(result.getReason()).hasValueSatisfying(reason -> assertThat(reason)
                .startsWith("SQL Server container tests skipped: no Docker environment was found")
                .contains("DOCKER_HOST"));
    }

    @Test
    void with_docker_they_run() {
        ConditionEvaluationResult result = SqlServerContainerExtension.evaluate(true, () -> true);
        assertThat(result.isDisabled()).isFalse();
    }
}
