package io.tidemark.sync.internal;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The PostgreSQL versions Tidemark's generated SQL runs on, checked before anything is installed: an older server
 * would accept some of the functions (PL/pgSQL bodies are not resolved at creation) and fail only at the first
 * write to a table.
 */
public final class PostgresVersions {

    /**
     * The oldest major the generated SQL is tested on. The outbox and history use {@code xid8},
     * {@code pg_current_xact_id()} and {@code pg_current_snapshot()}, which exist from 13; 13 is out of support
     * and not tested.
     */
    public static final int MINIMUM_MAJOR = 14;

    private PostgresVersions() {
    }

    /**
     * Fails with {@link ErrorCode#SCHEMA_UNSUPPORTED} when the server of {@code connection} is older than
     * {@link #MINIMUM_MAJOR}.
     *
     * @param object what is being installed, named in the error (such as the table)
     * @param what   what is being installed, in words (such as "the outbox")
     */
    public static void requireSupported(Connection connection, String object, String what) throws SQLException {
        try (Statement s = connection.createStatement();
             ResultSet rs = s.executeQuery("SELECT pg_catalog.current_setting('server_version_num'),"
                     + " pg_catalog.current_setting('server_version')")) {
            rs.next();
            check(Integer.parseInt(rs.getString(1)), rs.getString(2), object, what);
        }
    }

    /** The check itself, on the server's {@code server_version_num} and {@code server_version}. */
    static void check(int versionNum, String version, String object, String what) {
        if (versionNum < MINIMUM_MAJOR * 10_000) {
            throw TidemarkException.forObject(ErrorCode.SCHEMA_UNSUPPORTED, object, "cannot install " + what
                    + ": it needs PostgreSQL " + MINIMUM_MAJOR + " or later, and this server is PostgreSQL "
                    + version + ". Upgrade the server; nothing was installed.");
        }
    }
}
