package io.tidemark.postgres;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.concurrent.TimeUnit;

/** Waits on pg_stat_activity, the server's own view of what runs, instead of sleeping and hoping. */
public final class ActiveQueries {

    private ActiveQueries() {
    }

    /** Polls until a query containing {@code fragment} is active ({@code active}) or no longer is, for 30 s. */
    public static void await(DataSource dataSource, String fragment, boolean active) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try (Connection c = dataSource.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE state = 'active'"
                     + " AND query LIKE '%' || ? || '%' AND pid <> pg_backend_pid()")) {
            s.setString(1, fragment);
            while (true) {
                try (ResultSet rs = s.executeQuery()) {
                    rs.next();
                    if ((rs.getInt(1) > 0) == active) {
                        return;
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("query " + fragment + (active ? " never became active" : " is still active"));
                }
            }
        }
    }
}
