package io.tidemark.sqlserver;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.SqlServerName;

import java.util.Objects;

/**
 * The query that reads the server's current version when an {@link io.tidemark.sync.InitialSync#INCREMENTAL}
 * object has its first cycle: the value stored as its starting watermark. It returns one row with one integer.
 *
 * <p>The default, {@link #changeTracking()}, is {@code SELECT CHANGE_TRACKING_CURRENT_VERSION()}: right for
 * procedures that read {@code CHANGETABLE}. Procedures whose versions come from something else need the matching
 * query, or the first incremental cycle stores a number from the wrong sequence.
 */
public final class WatermarkQuery {

    private static final WatermarkQuery CHANGE_TRACKING = new WatermarkQuery(
            "SELECT CHANGE_TRACKING_CURRENT_VERSION()", "Change Tracking");

    /*
     * MIN_ACTIVE_ROWVERSION() is the lowest rowversion of any transaction still open (or the next one to be handed
     * out): everything below it is committed, so "minus one" is the highest version that can safely be stored.
     * @@DBTS would include versions of transactions still in flight, and skip them when they commit.
     */
    private static final WatermarkQuery ROWVERSION = new WatermarkQuery(
            "SELECT CAST(MIN_ACTIVE_ROWVERSION() AS BIGINT) - 1", "rowversion");

    private final String sql;
    private final String description;
    private WatermarkQuery(String sql, String description) {
        this.sql = sql;
        this.description = description;
    }

    /** {@code SELECT CHANGE_TRACKING_CURRENT_VERSION()}; NULL means Change Tracking is off for the database. */
    public static WatermarkQuery changeTracking() {
        return CHANGE_TRACKING;
    }

    /**
     * For procedures whose {@code $version} is a {@code rowversion} column:
     * {@code SELECT CAST(MIN_ACTIVE_ROWVERSION() AS BIGINT) - 1}, the highest version no open transaction can
     * still produce.
     */
    public static WatermarkQuery rowversion() {
        return ROWVERSION;
    }

    /**
     * For procedures whose {@code $version} comes from a sequence: the sequence's current value.
     *
     * <p>A sequence hands out numbers when rows are written, not when they commit: a transaction still open can
     * hold a lower number than the current value. Use this only with a procedure that excludes in-flight work
     * (see the procedure contract), or the rows of such a transaction are skipped.
     */
    public static WatermarkQuery sequence(String sequenceName) {
        String quoted = SqlServerName.parse(sequenceName, "sequence").quoted();
        return new WatermarkQuery("SELECT CAST(s.current_value AS BIGINT) FROM sys.sequences AS s WHERE s.object_id = "
                + "OBJECT_ID(" + SqlServerName.literal(quoted) + ", N'SO')", "sequence " + quoted);
    }

    /**
     * For procedures whose {@code $version} is an outbox table's identity column: {@code IDENT_CURRENT}. The same
     * caution as for {@link #sequence(String)} applies: identities are taken at insert time, not at commit.
     */
    public static WatermarkQuery identity(String tableName) {
        String quoted = SqlServerName.parse(tableName, "table").quoted();
        return new WatermarkQuery("SELECT CAST(IDENT_CURRENT(" + SqlServerName.literal(quoted) + ") AS BIGINT)",
                "identity of " + quoted);
    }

    /**
     * Any query returning one row with one integer (a {@code BIGINT} or anything that converts to it). It is run
     * as given, so it must come from configuration, never from user input.
     */
    public static WatermarkQuery sql(String sql) {
        if (sql == null || sql.isBlank()) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "A watermark query must not be blank");
        }
        return new WatermarkQuery(sql.strip(), "custom query");
    }

    /** The SQL that is run. */
    public String sql() {
        return sql;
    }

    /** Whether this is {@link #changeTracking()}, whose NULL means "Change Tracking is not enabled". */
    public boolean isChangeTracking() {
        // The one instance, not an equal query: only changeTracking() is known to read Change Tracking's counter.
        return this == CHANGE_TRACKING;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WatermarkQuery && ((WatermarkQuery) o).sql.equals(sql);
    }

    @Override
    public int hashCode() {
        return Objects.hash(sql);
    }

    @Override
    public String toString() {
        return description + " (" + sql + ")";
    }
}
