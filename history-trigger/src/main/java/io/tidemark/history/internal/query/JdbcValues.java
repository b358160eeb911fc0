package io.tidemark.history.internal.query;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.Arrays;

/** Reads a column into an immutable-friendly Java value: java.time for times, Object[] for arrays, text for driver objects. */
final class JdbcValues {

    private JdbcValues() {
    }

    /** The driver's type names of every column, read once per result set rather than once per value. */
    static String[] typeNames(ResultSet rs) throws SQLException {
        var meta = rs.getMetaData();
        String[] names = new String[meta.getColumnCount() + 1];
        for (int i = 1; i < names.length; i++) {
            names[i] = meta.getColumnTypeName(i);
        }
        return names;
    }

    static Object read(ResultSet rs, int column, String type) throws SQLException {
        switch (type) {
            case "timestamptz":
                return rs.getObject(column, OffsetDateTime.class);
            case "timestamp":
                return rs.getObject(column, LocalDateTime.class);
            case "date":
                return rs.getObject(column, LocalDate.class);
            case "time":
                return rs.getObject(column, LocalTime.class);
            default:
                break;
        }
        Object value = rs.getObject(column);
        if (value instanceof Array) {
            Object elements = ((Array) value).getArray();
            return elements instanceof Object[] ? Arrays.copyOf((Object[]) elements, ((Object[]) elements).length)
                    : elements;
        }
        if (value instanceof java.sql.Timestamp || value instanceof java.sql.Date || value instanceof java.sql.Time) {
            return value.toString();
        }
        if (value != null && value.getClass().getName().startsWith("org.postgresql.")) {
            // PGobject (json, xml, point, enums, ...), PGInterval, ...: their text form, which is immutable.
            return rs.getString(column);
        }
        return value;
    }
}
