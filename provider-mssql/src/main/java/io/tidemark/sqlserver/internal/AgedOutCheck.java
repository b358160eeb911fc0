package io.tidemark.sqlserver.internal;

import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.jdbc.ConnectionWatchdog;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The per-cycle check that a watermark is still inside the window Change Tracking keeps for the object's table:
 * a version below {@code CHANGE_TRACKING_MIN_VALID_VERSION(OBJECT_ID(table))} means the changes after it were
 * cleaned up (retention, {@code TRUNCATE TABLE}, Change Tracking switched off and on), and the procedure has to
 * re-initialise with a full snapshot.
 *
 * <p>It looks at two versions: the one the cycle asked the procedure for (remembered by {@link #requested}), and
 * the one stored after the cycle. The first catches the cycle in which a correct procedure re-initialised (its
 * FULL batch with ReasonCode 1 went out and the stored version is valid again); the second catches an object
 * stuck behind the window, for example because a destination refuses the full batch.
 *
 * <p>Version 0 is not checked: a procedure reads it as "export everything", which needs no history.
 */
public final class AgedOutCheck {

    public static final String AGED_OUT = ErrorCode.WATERMARK_AGED_OUT.name();
    public static final String NOT_TRACKED = ErrorCode.CHANGE_TRACKING_DISABLED.name();
    public static final String CHECK_FAILED = "DIAGNOSTICS_FAILED";

    private static final String QUERY =
            "SELECT CHANGE_TRACKING_MIN_VALID_VERSION(OBJECT_ID(?)), CHANGE_TRACKING_CURRENT_VERSION()";

    private final DataSource dataSource;
    private final int timeoutSeconds;
    private final Map<String, Long> requested = new ConcurrentHashMap<>();

    public AgedOutCheck(DataSource dataSource, int timeoutSeconds) {
        this.dataSource = dataSource;
        this.timeoutSeconds = timeoutSeconds;
    }

    /** Remembers the version a sync call asked for, until the cycle's {@link #diagnose}. */
    public void requested(TrackedObject object, long fromVersion) {
        requested.put(object.name(), fromVersion);
    }

    /** @param quotedTable the object's table, bracket-quoted */
    @SuppressWarnings("try") // the watch is held for the query's duration, never read
    public List<Diagnostic> diagnose(TrackedObject object, String quotedTable, OptionalLong stored) {
        Long asked = requested.remove(object.name());
        long oldest = Long.MAX_VALUE;
        if (asked != null && asked > 0) {
            oldest = asked;
        }
        if (stored.isPresent() && stored.getAsLong() > 0) {
            oldest = Math.min(oldest, stored.getAsLong());
        }
        if (oldest == Long.MAX_VALUE) {
            return List.of();
        }
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(QUERY);
             ConnectionWatchdog.Guard ignored = ConnectionWatchdog.watch(c, Duration.ofSeconds(timeoutSeconds))) {
            ps.setQueryTimeout(timeoutSeconds);
            ps.setNString(1, quotedTable);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long minValid = rs.getLong(1);
                if (rs.wasNull()) {
                    return List.of(new Diagnostic(Diagnostic.Severity.WARNING, NOT_TRACKED, "Change Tracking is not"
                            + " enabled on table " + quotedTable + ", or the login cannot see it (it needs VIEW CHANGE"
                            + " TRACKING on the table): the aged-out check cannot run",
                            Map.of("table", quotedTable)));
                }
                long current = rs.getLong(2);
                if (oldest >= minValid) {
                    return List.of();
                }
                Map<String, String> details = new LinkedHashMap<>();
                details.put("table", quotedTable);
                details.put("watermark", Long.toString(oldest));
                details.put("minValidVersion", Long.toString(minValid));
                details.put("currentVersion", Long.toString(current));
                return List.of(new Diagnostic(Diagnostic.Severity.WARNING, AGED_OUT, "the watermark " + oldest
                        + " is older than the oldest version Change Tracking still keeps for " + quotedTable + " ("
                        + minValid + "): the changes in between were cleaned up (retention too short for the gap,"
                        + " TRUNCATE TABLE, or Change Tracking switched off and on). The procedure has to re-initialise:"
                        + " the generated one returns a FULL batch with ReasonCode 1, after which consumers should"
                        + " replace what they hold. If this repeats, raise CHANGE_RETENTION above the longest pause",
                        details));
            }
        } catch (SQLException e) {
            return List.of(new Diagnostic(Diagnostic.Severity.WARNING, CHECK_FAILED, "could not check the Change"
                    + " Tracking window of " + quotedTable + ": " + SqlServerErrors.detail(e),
                    Map.of("table", quotedTable)));
        }
    }
}
