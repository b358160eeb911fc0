package io.tidemark.postgres.internal.logical;

import io.tidemark.postgres.PostgresLogicalCapture;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.sync.internal.jdbc.SqlContext;
import io.tidemark.sync.internal.jdbc.SqlErrors;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Installs, scripts and removes a logical capture: the tables' replica identities, the publication and the slot.
 * Every check runs before the first change, so a refused install changes nothing.
 */
public final class LogicalSetup {

    private static final String PUBLICATION = """
            -- The tables whose changes the slot streams. Inserts, updates, deletes and truncates are published.
            CREATE PUBLICATION {{publication}} FOR TABLE {{tables}}
              WITH (publish = 'insert, update, delete, truncate');
            """;

    private static final String SLOT = """
            -- The slot keeps the WAL from the position every reader has stored onwards; the stream confirms a position
            -- only once every reader has stored a watermark past it. Run outside a transaction block.
            SELECT pg_catalog.pg_create_logical_replication_slot({{slot}}, 'pgoutput');
            """;

    private static final String ADD_TABLE = """
            ALTER PUBLICATION {{publication}} ADD TABLE {{table}};
            """;

    private static final String DROP_PUBLICATION = """
            DROP PUBLICATION IF EXISTS {{publication}};
            """;

    private static final String REPLICA_IDENTITY = """
            -- Whole old rows in the WAL of every update and delete (oldRows): $changed, and deletes with the old row.
            ALTER TABLE {{table}} REPLICA IDENTITY FULL;
            """;

    private LogicalSetup() {
    }

    public static String script(PostgresLogicalCapture capture, List<PgName> tables) {
        StringBuilder sql = new StringBuilder();
        sql.append("-- Tidemark logical capture: slot ").append(capture.slot()).append(", publication ")
                .append(capture.publication()).append("\n")
                .append("-- Needs wal_level = logical, and a role that owns the tables and has the REPLICATION"
                        + " attribute.\n\n");
        if (capture.oldRows()) {
            for (PgName table : tables) {
                sql.append(SqlTemplate.of(REPLICA_IDENTITY).with("table", table.quoted()).render());
            }
            sql.append('\n');
        }
        sql.append(publication(capture, tables)).append('\n');
        sql.append(SqlTemplate.of(SLOT).with("slot", PgName.literal(capture.slot())).render());
        return sql.toString();
    }

    public static void install(PostgresLogicalCapture capture, List<PgName> tables, DataSource dataSource) {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            requireLogicalWal(c);
            for (PgName table : tables) {
                requireReplicaIdentity(c, table, capture.oldRows());
            }
            List<String> publicationProblems = publicationProblems(c, capture.publication(), tables);
            if (!publicationProblems.isEmpty()) {
                throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, String.join("; ", publicationProblems));
            }
            String slotPlugin = slotPlugin(c, capture.slot());
            if (slotPlugin != null && !slotPlugin.equals("pgoutput")) {
                throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, "the replication slot " + capture.slot()
                        + " exists with the plugin " + slotPlugin + ", not pgoutput: drop it or choose another slot"
                        + " name");
            }
            if (capture.oldRows()) {
                for (PgName table : tables) {
                    Jdbc.execute(c, SqlTemplate.of(REPLICA_IDENTITY).with("table", table.quoted()).render());
                }
            }
            List<PgName> missing = missingFromPublication(c, capture.publication(), tables);
            if (missing == null) {
                Jdbc.execute(c, publication(capture, tables));
            } else {
                for (PgName table : missing) {
                    Jdbc.execute(c, SqlTemplate.of(ADD_TABLE).with("publication", PgName.quote(capture.publication()))
                            .with("table", table.quoted()).render());
                }
            }
            if (slotPlugin == null) {
                Jdbc.query(c, "SELECT pg_catalog.pg_create_logical_replication_slot(?, 'pgoutput')", rs -> null,
                        capture.slot());
            }
        } catch (SQLException e) {
            throw failure(e, dataSource, "installing the logical capture " + capture.slot());
        }
    }

    public static void uninstall(PostgresLogicalCapture capture, DataSource dataSource) {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            if (slotPlugin(c, capture.slot()) != null) {
                awaitInactive(c, capture.slot());
                Jdbc.query(c, "SELECT pg_catalog.pg_drop_replication_slot(?)", rs -> null, capture.slot());
            }
            Jdbc.execute(c, SqlTemplate.of(DROP_PUBLICATION).with("publication", PgName.quote(capture.publication()))
                    .render());
        } catch (SQLException e) {
            throw failure(e, dataSource, "removing the logical capture " + capture.slot());
        }
    }

    /**
     * Waits up to 10 seconds for the slot's stream to end: a provider that has just closed leaves a WAL sender that
     * ends a moment later. A stream still connected after that belongs to a running provider.
     */
    private static void awaitInactive(Connection c, String slot) throws SQLException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            List<Integer> pids = Jdbc.query(c, "SELECT active_pid FROM pg_catalog.pg_replication_slots"
                    + " WHERE slot_name = ? AND database = pg_catalog.current_database() AND active",
                    rs -> rs.getInt(1), slot);
            if (pids.isEmpty()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new TidemarkException(ErrorCode.DATABASE_ERROR, "the replication slot " + slot
                        + " is streamed by the process " + pids.get(0) + ": close the provider (and its"
                        + " engine) reading it before uninstalling");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    /** The server's {@code wal_level} must be {@code logical}; it needs a restart to change. */
    public static void requireLogicalWal(Connection c) throws SQLException {
        String level = Jdbc.query(c, "SELECT pg_catalog.current_setting('wal_level')", rs -> rs.getString(1)).get(0);
        if (!"logical".equals(level)) {
            throw new TidemarkException(ErrorCode.LOGICAL_DECODING_DISABLED, "the server runs with wal_level = "
                    + level + "; logical capture needs wal_level = logical (ALTER SYSTEM SET wal_level = logical,"
                    + " then restart the server)");
        }
    }

    /** Whether the connected role may stream a replication slot ({@code REPLICATION}, or a superuser). */
    public static boolean canReplicate(Connection c) throws SQLException {
        return Jdbc.queryBoolean(c, "SELECT rolreplication OR rolsuper FROM pg_catalog.pg_roles"
                + " WHERE rolname = current_user");
    }

    /**
     * The plugin of this database's logical slot of that name, or null when the server has no slot of that name.
     * Slot names are the server's, not the database's: a slot of that name that is another database's (or a
     * physical one) is refused, since install would take it for this capture's and uninstall would drop it.
     */
    public static String slotPlugin(Connection c, String slot) throws SQLException {
        List<String[]> slots = Jdbc.query(c, """
                SELECT s.plugin, s.database::pg_catalog.text, pg_catalog.current_database()::pg_catalog.text
                  FROM pg_catalog.pg_replication_slots AS s
                 WHERE s.slot_name = ?""", rs -> new String[] {rs.getString(1), rs.getString(2), rs.getString(3)},
                slot);
        if (slots.isEmpty()) {
            return null;
        }
        String[] found = slots.get(0);
        if (found[1] == null || !found[1].equals(found[2])) {
            throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, "the replication slot " + slot + " belongs to "
                    + (found[1] == null ? "no database (a physical slot)" : "the database " + found[1])
                    + ", not " + found[2] + ": slot names are shared by every database of the server, so choose"
                    + " another slot name for this capture");
        }
        return found[0];
    }

    /**
     * The tables the publication lacks, or null when there is no publication. A published table without a replica
     * identity makes PostgreSQL refuse its updates and deletes: that is checked first, see
     * {@link #requireReplicaIdentity}.
     */
    public static List<PgName> missingFromPublication(Connection c, String publication, List<PgName> tables)
            throws SQLException {
        if (!Jdbc.queryBoolean(c, "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_publication WHERE pubname = ?)",
                publication)) {
            return null;
        }
        Set<PgName> published = new HashSet<>(Jdbc.query(c, "SELECT schemaname, tablename"
                + " FROM pg_catalog.pg_publication_tables WHERE pubname = ?",
                rs -> PgName.of(rs.getString(1), rs.getString(2)), publication));
        List<PgName> missing = new ArrayList<>(tables);
        missing.removeAll(published);
        return missing;
    }

    /**
     * The table exists and has a replica identity: its primary key, an index chosen with
     * {@code REPLICA IDENTITY USING INDEX}, or {@code FULL} (which {@code oldRows} sets).
     */
    static void requireReplicaIdentity(Connection c, PgName table, boolean oldRows) throws SQLException {
        List<String[]> found = Jdbc.query(c, """
                SELECT c.relkind::text, c.relreplident::text,
                       EXISTS (SELECT 1 FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid AND i.indisprimary)::text
                  FROM pg_catalog.pg_class c
                  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = ? AND c.relname = ?""",
                rs -> new String[] {rs.getString(1), rs.getString(2), rs.getString(3)},
                table.schema().orElseThrow(), table.name());
        if (found.isEmpty()) {
            throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, "the table " + table.quoted()
                    + " does not exist");
        }
        String kind = found.get(0)[0];
        if (kind.equals("p")) {
            // Its changes would be streamed under the names of its partitions, which nobody reads.
            throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, table.quoted() + " is a partitioned"
                    + " table; capture its partitions, each as a table of its own");
        }
        if (!kind.equals("r")) {
            throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, table.quoted() + " is not a table"
                    + " (relkind " + kind + "); only tables can be published");
        }
        String identity = found.get(0)[1];
        boolean primaryKey = found.get(0)[2].equals("true");
        if (oldRows || identity.equals("f") || identity.equals("d") && primaryKey) {
            return;
        }
        if (identity.equals("i")) {
            // The old key the stream sends is then the index's, not the primary key: a change of the
            // primary key could not be told from a change of the index's columns.
            throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, "the table " + table.quoted()
                    + " uses REPLICA IDENTITY USING INDEX, which the capture cannot read keys from: set"
                    + " REPLICA IDENTITY DEFAULT (its primary key), or capture with oldRows(true)"
                    + " (REPLICA IDENTITY FULL)");
        }
        throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, "the table " + table.quoted()
                + " has no replica identity (no primary key): once published, PostgreSQL would refuse"
                + " its UPDATEs and DELETEs. Add a primary key, or capture with oldRows(true)"
                + " (REPLICA IDENTITY FULL)");
    }

    /**
     * What is wrong with an existing publication for this capture, or an empty list: it must publish every kind of
     * change, not through a partition root, and (PostgreSQL 15 and later) without a row filter or a column list on
     * the captured tables. Any of those would make changes never reach the stream.
     */
    public static List<String> publicationProblems(Connection c, String publication, List<PgName> tables)
            throws SQLException {
        List<String> problems = new ArrayList<>();
        List<boolean[]> options = Jdbc.query(c, "SELECT pubinsert, pubupdate, pubdelete, pubtruncate, pubviaroot"
                + " FROM pg_catalog.pg_publication WHERE pubname = ?", rs -> new boolean[] {rs.getBoolean(1),
                rs.getBoolean(2), rs.getBoolean(3), rs.getBoolean(4), rs.getBoolean(5)}, publication);
        if (options.isEmpty()) {
            return problems;
        }
        List<String> missing = new ArrayList<>();
        String[] kinds = {"insert", "update", "delete", "truncate"};
        for (int i = 0; i < kinds.length; i++) {
            if (!options.get(0)[i]) {
                missing.add(kinds[i]);
            }
        }
        if (!missing.isEmpty()) {
            problems.add("the publication " + publication + " does not publish " + String.join(", ", missing)
                    + ": ALTER PUBLICATION " + PgName.quote(publication)
                    + " SET (publish = 'insert, update, delete, truncate')");
        }
        if (options.get(0)[4]) {
            problems.add("the publication " + publication + " publishes through partition roots"
                    + " (publish_via_partition_root): ALTER PUBLICATION " + PgName.quote(publication)
                    + " SET (publish_via_partition_root = false)");
        }
        if (c.getMetaData().getDatabaseMajorVersion() >= 15) {
            List<PgName> filtered = Jdbc.query(c, """
                    SELECT n.nspname, t.relname
                      FROM pg_catalog.pg_publication_rel r
                      JOIN pg_catalog.pg_publication p ON p.oid = r.prpubid
                      JOIN pg_catalog.pg_class t ON t.oid = r.prrelid
                      JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
                     WHERE p.pubname = ? AND (r.prqual IS NOT NULL OR r.prattrs IS NOT NULL)""",
                    rs -> PgName.of(rs.getString(1), rs.getString(2)), publication);
            for (PgName table : filtered) {
                if (tables.contains(table)) {
                    problems.add("the publication " + publication + " publishes " + table.quoted()
                            + " with a row filter or a column list: some of its changes would never be"
                            + " captured. Publish the table whole");
                }
            }
        }
        return problems;
    }

    private static String publication(PostgresLogicalCapture capture, List<PgName> tables) {
        List<String> names = new ArrayList<>();
        for (PgName table : tables) {
            names.add(table.quoted());
        }
        return SqlTemplate.of(PUBLICATION).with("publication", PgName.quote(capture.publication()))
                .with("tables", String.join(", ", names)).render();
    }


    private static TidemarkException failure(SQLException e, DataSource dataSource, String doing) {
        return SqlErrors.map(e, SqlContext.of(dataSource, null, doing), "A slot needs a role with the REPLICATION"
                + " attribute; a publication needs ownership of the tables.", ErrorCode.DATABASE_ERROR);
    }
}
