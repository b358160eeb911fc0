package io.tidemark.history;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Test helpers for running SQL and reading rows back as maps. */
public final class Db {

    private Db() {
    }

    public static void exec(DataSource ds, String sql) {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage() + "\n" + sql, e);
        }
    }

    public static List<Map<String, Object>> rows(DataSource ds, String sql, Object... params) {
        try (Connection c = ds.getConnection()) {
            return rows(c, sql, params);
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage() + "\n" + sql, e);
        }
    }

    public static List<Map<String, Object>> rows(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setObject(i + 1, params[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                List<Map<String, Object>> rows = new ArrayList<>();
                int n = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    Map<String, Object> row = new LinkedHashMap<>();
                    for (int i = 1; i <= n; i++) {
                        row.put(rs.getMetaData().getColumnLabel(i), rs.getObject(i));
                    }
                    rows.add(row);
                }
                return rows;
            }
        }
    }

    public static Object scalar(DataSource ds, String sql, Object... params) {
        List<Map<String, Object>> rows = rows(ds, sql, params);
        return rows.isEmpty() ? null : rows.get(0).values().iterator().next();
    }

    public static long count(DataSource ds, String sql, Object... params) {
        return ((Number) scalar(ds, sql, params)).longValue();
    }
}
