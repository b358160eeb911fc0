package io.tidemark.postgres.internal.logical;

import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.spi.ResponsePayload;

import java.io.IOException;
import java.io.Reader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;

/**
 * A table exported whole, at a version of the stream from which the changes that follow continue it without a gap:
 * the first cycle of an {@code InitialSync.FULL} object, and a reader whose position the stream no longer holds.
 *
 * <p>The rows are read in one snapshot. Its version is the stream's position {@code P} read just before the
 * snapshot was taken, and the table's log holds every change above {@code P} for this reader ({@link SlotReaders}
 * holds the table at the position until the reader stores one). A transaction the snapshot does not see commits
 * after it was taken, so its commit ends above {@code P} and reaches the reader in the changes that follow, with
 * one exception, which is checked: a transaction whose commit the stream had already decoded when the snapshot was
 * taken, but which had not yet become visible (PostgreSQL makes a commit visible a moment after writing it). Then the
 * snapshot is taken again. Transactions the snapshot sees and whose commit ends above {@code P} are delivered again
 * after the export: the changes that follow a {@code Full} answer may repeat some it already holds, never miss one.
 */
public final class FullExport {

    private static final int ATTEMPTS = 100;

    private FullExport() {
    }

    /** The answer, spooled (memory, then a temporary file) from a server-side cursor: memory stays flat. */
    public static ResponsePayload export(String jdbcUrl, Properties properties, PgName table, SlotStream stream,
                                  TableLog log, LongConsumer holdAt, int reasonCode)
            throws SQLException, IOException {
        for (int attempt = 1; ; attempt++) {
            long position = stream.position();
            holdAt.accept(position);
            try (Connection c = DriverManager.getConnection(jdbcUrl, cursorProperties(properties))) {
                c.setAutoCommit(false);
                c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                c.setReadOnly(true);
                try (Statement s = c.createStatement()) {
                    s.setFetchSize(1_000);
                    String snapshot = firstString(s, "SELECT pg_catalog.pg_current_snapshot()::text");
                    boolean invisible = decodedButInvisible(snapshot, stream, position);
                    if (invisible || log.floor() > position) {
                        // A commit caught between its WAL record and its visibility, or the table's changes above
                        // the position released before the hold took effect: take the snapshot again.
                        c.rollback();
                        if (attempt == ATTEMPTS) {
                            throw new SQLException("could not take a snapshot of " + table.quoted() + " consistent"
                                    + " with the replication stream in " + ATTEMPTS + " attempts: " + (invisible
                                    ? "a transaction the stream decoded is still not visible (waiting for a"
                                            + " synchronous standby?)"
                                    : "the table's log was released above the stream's position each time")
                                    + ". The export is tried again at the next cycle");
                        }
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
                        continue;
                    }
                    try (ResultSet rows = s.executeQuery("SELECT pg_catalog.row_to_json(t)::text FROM ONLY "
                            + table.quoted() + " AS t")) {
                        ResponsePayload payload = ResponsePayload.spool(new RowsReader(rows, position, reasonCode));
                        c.commit();
                        return payload;
                    }
                }
            }
        }
    }

    /**
     * Whether a transaction the snapshot ({@code xmin:xmax:xip,...}) does not see was already decoded with a commit
     * at or below {@code position}: one still listed as running ({@code xip}), or one at or above {@code xmax},
     * which a snapshot leaves out of the list (a transaction can be written to the WAL, and decoded, before it
     * becomes visible, for as long as a synchronous standby makes it wait).
     */
    static boolean decodedButInvisible(String snapshot, SlotStream stream, long position) {
        String[] parts = snapshot.split(":", 3);
        int xmax = (int) Long.parseLong(parts[1]);
        java.util.Set<Integer> running = new java.util.HashSet<>();
        if (parts.length == 3 && !parts[2].isEmpty()) {
            for (String xid : parts[2].split(",")) {
                running.add((int) Long.parseLong(xid));
            }
        }
        // Transaction ids are compared as PostgreSQL compares them: modulo 2^32, on their low 32 bits.
        return stream.anyDecodedCommit(position, xid -> running.contains(xid) || xid - xmax >= 0);
    }

    /** The connection's properties, with the extended protocol a cursor needs (simple mode reads rows all at once). */
    private static Properties cursorProperties(Properties properties) {
        Properties copy = new Properties();
        copy.putAll(properties);
        org.postgresql.PGProperty.PREFER_QUERY_MODE.set(copy, "extended");
        return copy;
    }

    private static String firstString(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** The answer's text, produced as the cursor yields rows. */
    private static final class RowsReader extends Reader {

        private final ResultSet rows;
        private String chunk;
        private int at;
        private boolean first = true;
        private boolean ended;

        RowsReader(ResultSet rows, long version, int reasonCode) {
            this.rows = rows;
            this.chunk = LogicalResponse.header(version, "Full", reasonCode);
        }

        @Override
        public int read(char[] buffer, int offset, int length) throws IOException {
            while (chunk == null || at == chunk.length()) {
                if (!next()) {
                    return -1;
                }
            }
            int n = Math.min(length, chunk.length() - at);
            chunk.getChars(at, at + n, buffer, offset);
            at += n;
            return n;
        }

        private boolean next() throws IOException {
            if (ended) {
                return false;
            }
            try {
                if (rows.next()) {
                    chunk = first ? rows.getString(1) : "," + rows.getString(1);
                    first = false;
                } else {
                    chunk = "]}";
                    ended = true;
                }
                at = 0;
                return true;
            } catch (SQLException e) {
                throw new IOException("reading the rows of the export failed: " + e.getMessage(), e);
            }
        }

        @Override
        public void close() {
            // The statement and its connection belong to the export, which closes them.
        }
    }
}
