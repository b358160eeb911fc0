package io.tidemark.cli.internal;

import io.tidemark.postgres.PostgresLogicalCapture;
import io.tidemark.postgres.internal.logical.LogicalSetup;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.sync.internal.jdbc.SqlContext;
import io.tidemark.sync.internal.sql.PgName;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a DBA checks of a logical capture on the server: {@code wal_level}, the publication and the tables it
 * publishes, the slot, how far its reader has confirmed and how much WAL it keeps. Read in one transaction; the
 * slot's and the publication's names are bound values, never SQL text.
 *
 * @param keyOnly the published tables whose updates and deletes log less than the whole old row
 * @param slot    null when there is no slot of that name
 */
record CaptureStatus(String walLevel, String database, boolean publicationExists, List<PgName> published,
                     List<PgName> keyOnly, List<String> publicationProblems, Slot slot) {

    /**
     * The slot's row of {@code pg_replication_slots}.
     *
     * @param activePid     the WAL sender streaming it, or null
     * @param retainedBytes the WAL from its {@code confirmed_flush_lsn} to the server's position; null before the
     *                      slot has one
     */
    record Slot(String plugin, String database, Integer activePid, String confirmedFlushLsn, String walStatus,
                Long retainedBytes, String retained) {
    }

    private static final String SERVER_AND_SLOT = """
            SELECT pg_catalog.current_setting('wal_level'), pg_catalog.current_database(),
                   EXISTS (SELECT 1 FROM pg_catalog.pg_publication WHERE pubname = ?),
                   s.slot_name IS NOT NULL, s.plugin, s.database, s.active_pid, s.confirmed_flush_lsn::text,
                   s.wal_status, (w.lsn - s.confirmed_flush_lsn)::bigint,
                   pg_catalog.pg_size_pretty(w.lsn - s.confirmed_flush_lsn)
              -- A standby writes no WAL of its own: there the slot keeps what lies below the replayed position.
              FROM (SELECT CASE WHEN pg_catalog.pg_is_in_recovery() THEN pg_catalog.pg_last_wal_replay_lsn()
                                ELSE pg_catalog.pg_current_wal_lsn() END AS lsn) w
              LEFT JOIN pg_catalog.pg_replication_slots s ON s.slot_name = ?
            """;

    private static final String PUBLISHED = """
            SELECT t.schemaname, t.tablename, c.relreplident = 'f'
              FROM pg_catalog.pg_publication_tables t
              JOIN pg_catalog.pg_namespace n ON n.nspname = t.schemaname
              JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = t.tablename
             WHERE t.pubname = ?
             ORDER BY t.schemaname, t.tablename
            """;

    static CaptureStatus read(DataSource dataSource, PostgresLogicalCapture capture) {
        return Jdbc.readOnly(dataSource, SqlContext.of(dataSource, null, "reading the status of the logical capture "
                        + capture.slot()), Jdbc.failures("Reading the status needs no privilege beyond CONNECT.",
                        ErrorCode.DATABASE_ERROR), c -> read(c, capture));
    }

    private static CaptureStatus read(Connection c, PostgresLogicalCapture capture) throws SQLException {
        CaptureStatus server = Jdbc.query(c, SERVER_AND_SLOT, rs -> new CaptureStatus(rs.getString(1),
                rs.getString(2), rs.getBoolean(3), List.of(), List.of(), List.of(), !rs.getBoolean(4) ? null
                : new Slot(rs.getString(5), rs.getString(6), (Integer) rs.getObject(7), rs.getString(8),
                rs.getString(9), (Long) rs.getObject(10), rs.getString(11))),
                capture.publication(), capture.slot()).get(0);
        if (!server.publicationExists()) {
            return server;
        }
        record Published(PgName table, boolean fullIdentity) {
        }
        List<Published> rows = Jdbc.query(c, PUBLISHED, rs -> new Published(PgName.of(rs.getString(1),
                rs.getString(2)), rs.getBoolean(3)), capture.publication());
        List<PgName> published = rows.stream().map(Published::table).toList();
        List<PgName> keyOnly = rows.stream().filter(r -> !r.fullIdentity()).map(Published::table).toList();
        return new CaptureStatus(server.walLevel(), server.database(), true, published, keyOnly,
                LogicalSetup.publicationProblems(c, capture.publication(), tables(capture)), server.slot());
    }

    /** The database the logical slot belongs to when it is not this one (slot names are the server's). */
    Optional<String> slotOfAnotherDatabase() {
        return slot == null || slot.plugin() == null || database.equals(slot.database()) ? Optional.empty()
                : Optional.of(slot.database());
    }

    /** What the capture lacks on this server to stream its tables, each with what to do; empty when nothing. */
    List<String> problems(PostgresLogicalCapture capture) {
        List<String> problems = new ArrayList<>();
        if (!"logical".equals(walLevel)) {
            problems.add("the server runs with wal_level = " + walLevel + "; logical capture needs wal_level ="
                    + " logical (ALTER SYSTEM SET wal_level = logical, then restart the server)");
        }
        if (!publicationExists) {
            problems.add("the publication " + capture.publication() + " does not exist: run tidemark logical install");
        } else {
            List<PgName> missing = new ArrayList<>(tables(capture));
            missing.removeAll(published);
            if (!missing.isEmpty()) {
                problems.add("the publication " + capture.publication() + " does not publish " + text(missing)
                        + ": run tidemark logical install, which adds them");
            }
            if (capture.oldRows()) {
                List<PgName> lacking = new ArrayList<>(tables(capture));
                lacking.retainAll(keyOnly);
                if (!lacking.isEmpty()) {
                    problems.add("REPLICA IDENTITY is not FULL on " + text(lacking) + ": their updates and deletes"
                            + " log less than the whole old row, so updates come without $changed; run tidemark"
                            + " logical install --old-rows");
                }
            }
            problems.addAll(publicationProblems);
        }
        if (slot == null) {
            problems.add("the replication slot " + capture.slot() + " does not exist: run tidemark logical install");
            return problems;
        }
        if (slot.plugin() == null) {
            problems.add("the replication slot " + capture.slot() + " is a physical slot: choose another --slot");
            return problems;
        }
        if (!"pgoutput".equals(slot.plugin())) {
            problems.add("the replication slot " + capture.slot() + " uses the plugin " + slot.plugin()
                    + ", not pgoutput: drop it or choose another --slot");
        }
        // Slot names are the server's, publications the database's: this database's changes never reach it.
        slotOfAnotherDatabase().ifPresent(other -> problems.add(elsewhere(capture, other)));
        if ("lost".equals(slot.walStatus())) {
            problems.add("the replication slot " + capture.slot() + " has lost WAL it needed (wal_status lost,"
                    + " see max_slot_wal_keep_size): uninstall, install and reset the tracked objects");
        }
        return problems;
    }

    /** Says that the slot belongs to the database {@code other}. */
    String elsewhere(PostgresLogicalCapture capture, String other) {
        return "the replication slot " + capture.slot() + " belongs to the database " + other + ", not " + database
                + ": slot names are shared by the server's databases; choose another --slot here, or manage that"
                + " one from " + other;
    }

    /** The report, one {@code name: value} line each. */
    List<String> lines(PostgresLogicalCapture capture) {
        List<String> lines = new ArrayList<>();
        lines.add("database:             " + database);
        lines.add("wal_level:            " + walLevel);
        lines.add("publication:          " + capture.publication() + (publicationExists ? "" : ", missing"));
        if (publicationExists) {
            lines.add("published tables:     " + (published.isEmpty() ? "none" : text(published)));
        }
        if (slot == null) {
            lines.add("slot:                 " + capture.slot() + ", missing");
            return lines;
        }
        lines.add("slot:                 " + capture.slot() + (slot.plugin() == null ? ", physical"
                : ", plugin " + slot.plugin() + ", database " + slot.database()));
        lines.add("active:               " + (slot.activePid() == null ? "no" : "yes, pid " + slot.activePid()));
        lines.add("confirmed_flush_lsn:  " + (slot.confirmedFlushLsn() == null ? "none" : slot.confirmedFlushLsn()));
        lines.add("WAL retained:         " + (slot.retainedBytes() == null ? "unknown"
                : slot.retained() + " (" + slot.retainedBytes() + " bytes)"));
        lines.add("wal_status:           " + slot.walStatus());
        return lines;
    }

    /** The capture's tables, {@code schema.name} as a DBA writes them. */
    static List<String> names(PostgresLogicalCapture capture) {
        return tables(capture).stream().map(PgName::toString).toList();
    }

    private static List<PgName> tables(PostgresLogicalCapture capture) {
        return capture.tables().stream().map(t -> PgName.parse(t, "table")).toList();
    }

    private static String text(List<PgName> tables) {
        return String.join(", ", tables.stream().map(PgName::toString).toList());
    }
}
