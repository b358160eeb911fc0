package io.tidemark.postgres.internal.outbox;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.sync.internal.jdbc.SqlContext;

import javax.sql.DataSource;
import java.util.List;

/**
 * The version that covers every change committed so far, for handing a table over from the outbox to another
 * capture. A change's version is {@code GREATEST(writer's id, xmax - 1 of a snapshot taken after the row changed)}
 * (see {@link OutboxScript}); a transaction that committed before this query started before it, so its id is below
 * the query's {@code xmax}, and so was every snapshot it captured with: both parts of its versions are at most
 * {@code xmax - 1} of the query's snapshot.
 */
public final class OutboxHandOver {

    private static final String COVERING_VERSION = """
            SELECT pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::pg_catalog.text::bigint - 1""";

    private OutboxHandOver() {
    }

    public static long committedVersion(DataSource dataSource, OutboxNames names) {
        return Jdbc.readOnly(dataSource, SqlContext.of(dataSource, null, "reading the committed version of "
                        + names.outbox()), Jdbc.failures("", ErrorCode.DATABASE_ERROR),
                c -> Jdbc.query(c, COVERING_VERSION, rs -> rs.getLong(1)).get(0));
    }
}
