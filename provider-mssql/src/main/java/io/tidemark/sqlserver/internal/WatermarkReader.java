package io.tidemark.sqlserver.internal;

import io.tidemark.sqlserver.WatermarkQuery;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.jdbc.ConnectionWatchdog;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/** Runs an object's {@link WatermarkQuery} for its first incremental cycle. */
public final class WatermarkReader {

    private final DataSource dataSource;
    private final int timeoutSeconds;

    public WatermarkReader(DataSource dataSource, int timeoutSeconds) {
        this.dataSource = dataSource;
        this.timeoutSeconds = timeoutSeconds;
    }

    @SuppressWarnings("try") // the watch is held for the query's duration, never read
    public long read(TrackedObject object, WatermarkQuery query) {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement();
             ConnectionWatchdog.Guard ignored = ConnectionWatchdog.watch(connection, Duration.ofSeconds(timeoutSeconds))) {
            statement.setQueryTimeout(timeoutSeconds);
            try (ResultSet rs = statement.executeQuery(query.sql())) {
                if (!rs.next()) {
                    throw unavailable(object, "the watermark query " + query + " returned no row; it must return"
                            + " one row with one integer");
                }
                long version = rs.getLong(1);
                if (rs.wasNull()) {
                    throw nullVersion(object, query, connection.getCatalog());
                }
                return version;
            }
        } catch (SQLException e) {
            throw SqlServerErrors.mapWatermark(e, dataSource, object, query.toString(), false, timeoutSeconds);
        }
    }

    private static TidemarkException nullVersion(TrackedObject object, WatermarkQuery query, String database) {
        if (query.isChangeTracking()) {
            return TidemarkException.forObject(ErrorCode.CHANGE_TRACKING_DISABLED, object.name(),
                    "Change Tracking is not enabled on database " + database + ": CHANGE_TRACKING_CURRENT_VERSION()"
                            + " returned NULL, so there is no version to start from. Enable it with ALTER DATABASE"
                            + " CURRENT SET CHANGE_TRACKING = ON (the ChangeTrackingSetup script does it), or, if the"
                            + " procedure's versions are not Change Tracking versions, configure the matching"
                            + " WatermarkQuery. Nothing was stored.");
        }
        return unavailable(object, "the watermark query " + query + " returned NULL");
    }

    private static TidemarkException unavailable(TrackedObject object, String problem) {
        return TidemarkException.forObject(ErrorCode.WATERMARK_UNAVAILABLE, object.name(),
                "could not read a starting watermark: " + problem + ". Nothing was stored; the next cycle tries again.");
    }
}
