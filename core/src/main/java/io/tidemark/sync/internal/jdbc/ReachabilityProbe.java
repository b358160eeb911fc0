package io.tidemark.sync.internal.jdbc;

import io.tidemark.sync.spi.ChangeProvider.Reachability;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * The providers' {@link io.tidemark.sync.spi.ChangeProvider#probe}: {@code SELECT 1} on a connection from the data
 * source. How long opening the connection may take is the data source's setting (its connect timeout); the
 * statement itself is bounded by the timeout given.
 */
public final class ReachabilityProbe {

    private ReachabilityProbe() {
    }

    public static Reachability selectOne(DataSource dataSource, Duration timeout) {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.setQueryTimeout((int) Math.max(1, (timeout.toMillis() + 999) / 1000));
            s.execute("SELECT 1");
            return Reachability.REACHABLE;
        } catch (SQLException | RuntimeException e) {
            return Reachability.UNREACHABLE;
        }
    }
}
