package io.tidemark.destinations.jdbc;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.spi.DeliveryException;
import io.tidemark.testing.SqlServerContainerTest;
import io.tidemark.testing.SqlServerDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.tidemark.destinations.jdbc.Changes.diff;
import static io.tidemark.destinations.jdbc.Changes.full;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The JDBC table destination on SQL Server (its SQL is checked without a server by the golden files of
 * {@code JdbcTableDialectGoldenTest}). Skipped where there is no Docker.
 */
@SqlServerContainerTest
class JdbcTableSqlServerContainerTest {

    private final SqlServerDatabase db;

    JdbcTableSqlServerContainerTest(SqlServerDatabase db) {
        this.db = db;
    }

    @BeforeEach
    void tables() {
        db.execute("""
                IF OBJECT_ID(N'dbo.items', N'U') IS NOT NULL DROP TABLE dbo.items;
                IF OBJECT_ID(N'dbo.tidemark_destination_position', N'U') IS NOT NULL
                    DROP TABLE dbo.tidemark_destination_position;
                IF OBJECT_ID(N'dbo.tidemark_destination_stage', N'U') IS NOT NULL
                    DROP TABLE dbo.tidemark_destination_stage;
                CREATE TABLE dbo.items (
                    id BIGINT PRIMARY KEY, name NVARCHAR(100) NOT NULL, price DECIMAL(12, 2) NULL,
                    active BIT NULL, seen_at DATETIMEOFFSET NULL, note NVARCHAR(20) NULL DEFAULT N'none');""");
    }

    private JdbcTableDestination copy(javax.sql.DataSource dataSource) {
        return JdbcTableDestination.sqlServer(dataSource, "dbo.items").name("items-copy")
                .columns("id", "name", "price", "active", "seen_at", "note").keyColumns("id").build();
    }

    @Test
    void inserts_partial_updates_deletes_and_a_page_offered_again() {
        JdbcTableDestination copy = copy(db.dataSource());
        ChangeBatch first = diff("Items", 0, 10, 1, 1,
                "{\"$operation\":\"I\",\"id\":1,\"name\":\"a\",\"price\":12.50,\"active\":true,"
                        + "\"seen_at\":\"2026-12-01T10:00:00Z\",\"note\":\"n1\"}",
                "{\"$operation\":\"I\",\"id\":2,\"name\":\"b\",\"price\":0.10,\"active\":null}",
                "{\"$operation\":\"I\",\"id\":3,\"name\":\"c\"}");
        copy.deliver(first);
        copy.deliver(diff("Items", 10, 20, 1, 1,
                "{\"$operation\":\"U\",\"$changed\":[\"price\",\"note\"],\"id\":1,\"price\":1.50}",
                "{\"$operation\":\"D\",\"id\":3}"));
        copy.deliver(first); // older than the position: skipped, nothing rolled back

        assertThat(rows()).containsExactly("1|a|1.50|1|null", "2|b|0.10|null|none");
    }

    @Test
    void a_full_export_over_pages_and_a_crash_before_its_commit() {
        CrashingDataSource crashing = CrashingDataSource.sqlServer(db.dataSource());
        JdbcTableDestination copy = copy(crashing);
        copy.deliver(diff("Items", 0, 10, 1, 1, "{\"$operation\":\"I\",\"id\":1,\"name\":\"old\"}"));
        copy.deliver(full("Items", 30, 1, 2, "{\"id\":5,\"name\":\"new5\"}"));
        ChangeBatch last = full("Items", 30, 2, 2, "{\"id\":6,\"name\":\"new6\"}");

        crashing.crashNextCommit();
        assertThatThrownBy(() -> copy.deliver(last)).isInstanceOfSatisfying(DeliveryException.class,
                e -> assertThat(e.isRetryable()).as(e.getMessage()).isTrue());
        assertThat(rows()).containsExactly("1|old|null|null|none");

        copy.deliver(last);
        copy.deliver(last);
        assertThat(rows()).containsExactly("5|new5|null|null|none", "6|new6|null|null|none");
    }

    private List<String> rows() {
        String sql = """
                SELECT CONCAT(id, '|', name, '|', COALESCE(CAST(price AS NVARCHAR(20)), 'null'), '|',
                       COALESCE(CAST(active AS NVARCHAR(1)), 'null'), '|', COALESCE(note, 'null'))
                  FROM dbo.items ORDER BY id""";
        return Rows.query(db.dataSource(), sql);
    }
}
