package io.tidemark.testing;

import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@EmbeddedPostgresTest
class PooledDataSourceTest {

    private final DataSource plain;

    PooledDataSourceTest(DataSource plain) {
        this.plain = plain;
    }

    private static int pid(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Test
    void a_returned_connection_is_reused_with_its_transaction_rolled_back() throws Exception {
        try (PooledDataSource pool = PooledDataSource.of(plain, 2)) {
            int first;
            try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
                first = pid(c);
                s.execute("CREATE TABLE IF NOT EXISTS pooled (id int)");
                c.setAutoCommit(false);
                s.execute("INSERT INTO pooled VALUES (1)");
            }
            try (Connection c = pool.getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT count(*) FROM pooled")) {
                assertThat(pid(c)).isEqualTo(first);
                assertThat(c.getAutoCommit()).isTrue();
                rs.next();
                assertThat(rs.getInt(1)).isZero();
            }
        }
    }

    @Test
    void a_borrower_waits_for_a_free_connection_and_an_aborted_one_is_dropped() throws Exception {
        try (PooledDataSource pool = PooledDataSource.of(plain, 1)) {
            Connection held = pool.getConnection();
            int heldPid = pid(held);
            CompletableFuture<Integer> waiting = CompletableFuture.supplyAsync(() -> {
                try (Connection c = pool.getConnection()) {
                    return pid(c);
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(waiting).isNotDone();

            held.abort(Runnable::run);

            assertThat(waiting.get(30, TimeUnit.SECONDS)).isNotEqualTo(heldPid);
            assertThat(held.isClosed()).isTrue();
            assertThatThrownBy(held::createStatement).isInstanceOf(SQLException.class);
        }
    }
}
