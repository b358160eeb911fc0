package io.tidemark.postgres.internal.horizon;

import io.tidemark.sync.Diagnostic;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Finds the transaction that holds the horizon back (the running transaction whose id is the horizon) in
 * {@code pg_stat_activity}, and describes it as a {@link Diagnostic}. One short query, run only when the watch
 * decides it is worth it.
 */
public final class HorizonHolder {

    /** The code of the diagnostic. */
    public static final String CODE = "HORIZON_HELD_BACK";

    private static final String FIND = """
            SELECT a.pid, a.datname, a.usename, a.application_name, a.state, a.xact_start, a.query_start,
                   extract(epoch FROM clock_timestamp() - a.xact_start)
              FROM pg_catalog.pg_stat_activity AS a
             WHERE a.backend_xid::text = ?""";

    private static final String PRIVILEGED = """
            SELECT pg_catalog.pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER')
            OR (SELECT r.rolsuper FROM pg_catalog.pg_roles AS r WHERE r.rolname = current_user), current_user""";

    private HorizonHolder() {
    }

    /**
     * @param horizon   the xid8 of the oldest running transaction, as a number
     * @param heldSince when the watch first saw changes held back at this horizon
     */
    public static Diagnostic describe(DataSource dataSource, long horizon, Instant heldSince) {
        Map<String, String> details = new LinkedHashMap<>();
        details.put("horizon", Long.toString(horizon));
        details.put("held_since", heldSince.toString());
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(true); // a diagnostic query must not leave a transaction open
            try {
                return lookUp(c, horizon, details);
            } finally {
                c.setAutoCommit(autoCommit); // the connection goes back to the pool as it came
            }
        } catch (SQLException e) {
            details.put("error", e.getMessage());
            return new Diagnostic(Diagnostic.Severity.WARNING, CODE, "committed changes are held back by transaction "
                    + horizon + ", which is still running; looking it up in pg_stat_activity failed: "
                    + e.getMessage(), details);
        }
    }

    private static Diagnostic lookUp(Connection c, long horizon, Map<String, String> details) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(FIND)) {
            // pg_stat_activity shows the 32-bit xid; the horizon is the epoch-extended xid8.
            s.setString(1, Long.toString(horizon & 0xFFFF_FFFFL));
            try (ResultSet rs = s.executeQuery()) {
                if (rs.next()) {
                    Diagnostic d = found(rs, horizon, details);
                    // Without pg_read_all_stats the session is found but its state and times are hidden.
                    return details.containsKey("state") ? d : withHint(c, d);
                }
            }
        }
        return notFound(c, horizon, details);
    }

    private static Diagnostic found(ResultSet rs, long horizon, Map<String, String> details) throws SQLException {
        int pid = rs.getInt(1);
        String database = rs.getString(2);
        String user = rs.getString(3);
        String application = rs.getString(4);
        String state = rs.getString(5);
        OffsetDateTime xactStart = rs.getObject(6, OffsetDateTime.class);
        OffsetDateTime queryStart = rs.getObject(7, OffsetDateTime.class);
        double ageSeconds = rs.getDouble(8);
        Duration age = rs.wasNull() ? null : Duration.ofMillis(Math.round(ageSeconds * 1000));
        details.put("pid", Integer.toString(pid));
        putIfPresent(details, "database", database);
        putIfPresent(details, "user", user);
        putIfPresent(details, "application_name", application);
        putIfPresent(details, "state", state);
        putIfPresent(details, "xact_start", xactStart == null ? null : xactStart.toInstant().toString());
        putIfPresent(details, "transaction_age", age == null ? null : age.toString());
        putIfPresent(details, "query_start", queryStart == null ? null : queryStart.toInstant().toString());
        String message = "committed changes are held back by transaction " + horizon + " (pid " + pid
                + ", application '" + (application == null ? "" : application) + "'"
                + (user == null ? "" : ", user " + user) + (database == null ? "" : ", database " + database)
                + ", state '" + (state == null ? "unknown" : state) + "'"
                + (age == null ? "" : ", open for " + human(age))
                + (queryStart == null ? "" : ", last query started " + queryStart.toInstant()) + ")."
                + " Changes committed after it started are delivered only once it ends: commit or roll it back,"
                + " or end it with SELECT pg_terminate_backend(" + pid + ").";
        return new Diagnostic(Diagnostic.Severity.WARNING, CODE, message, details);
    }

    private static Diagnostic notFound(Connection c, long horizon, Map<String, String> details) throws SQLException {
        String role = unprivilegedRole(c);
        String why = role == null
                ? "no session shows it in pg_stat_activity: it may be a prepared transaction (see pg_prepared_xacts)"
                : "role " + role + " cannot see other roles' sessions in pg_stat_activity: GRANT pg_read_all_stats TO "
                        + role + " to have the session named here";
        return new Diagnostic(Diagnostic.Severity.WARNING, CODE, "committed changes are held back by transaction "
                + horizon + ", which is still running; " + why + ".", details);
    }

    private static Diagnostic withHint(Connection c, Diagnostic d) throws SQLException {
        String role = unprivilegedRole(c);
        if (role == null) {
            return d;
        }
        return new Diagnostic(d.severity(), d.code(), d.message() + " Role " + role + " cannot see the state and"
                + " times of other roles' sessions: GRANT pg_read_all_stats TO " + role + ".", d.details());
    }

    /** The current role when it may not read other roles' activity, else null. */
    private static String unprivilegedRole(Connection c) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(PRIVILEGED); ResultSet rs = s.executeQuery()) {
            rs.next();
            return rs.getBoolean(1) ? null : rs.getString(2);
        }
    }

    private static void putIfPresent(Map<String, String> details, String key, String value) {
        if (value != null) {
            details.put(key, value);
        }
    }

    /** {@code 1 h 2 min 3 s}. */
    static String human(Duration d) {
        long s = d.getSeconds();
        if (s < 60) {
            return s + " s";
        }
        if (s < 3600) {
            return s / 60 + " min " + s % 60 + " s";
        }
        return s / 3600 + " h " + s % 3600 / 60 + " min";
    }
}
