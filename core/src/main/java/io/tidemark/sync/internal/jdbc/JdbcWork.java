package io.tidemark.sync.internal.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/** Work that runs on one connection and may fail with what the driver throws. */
@FunctionalInterface
public interface JdbcWork<T> {
    T run(Connection connection) throws SQLException;
}
