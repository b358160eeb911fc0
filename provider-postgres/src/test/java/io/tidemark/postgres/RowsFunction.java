package io.tidemark.postgres;

import io.tidemark.testing.TestDatabase;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * A change function over a plain table of versioned rows ({@code v} is the version): returns the rows after
 * {@code fromVersion}, at most {@code maxRows} of them when asked (or all, when told to ignore the hint), and
 * logs every request. The simplest honest implementation of the contract, for engine behaviour tests.
 */
final class RowsFunction {

    private final TestDatabase database;
    private final String name;

    private RowsFunction(TestDatabase database, String name) {
        this.database = database;
        this.name = name;
    }

    static RowsFunction create(TestDatabase database, String name, boolean honourMaxRows) {
        String limit = honourMaxRows ? "(payload ->> 'maxRows')::int" : "NULL";
        database.execute("CREATE TABLE " + name + "_rows (v bigint PRIMARY KEY, body text NOT NULL);\n"
                + "CREATE TABLE " + name + "_calls (id bigserial PRIMARY KEY, payload json NOT NULL);\n"
                + "CREATE FUNCTION public." + name + "(payload json) RETURNS json LANGUAGE plpgsql AS $fn$\n"
                + "DECLARE\n"
                + "  from_version bigint := COALESCE((payload ->> 'fromVersion')::bigint, 0);\n"
                + "  rows_json json; top bigint;\n"
                + "BEGIN\n"
                + "  INSERT INTO " + name + "_calls (payload) VALUES (payload);\n"
                + "  SELECT json_agg(json_build_object('$operation', 'I', '$version', r.v, 'Body', r.body) ORDER BY r.v), max(r.v)\n"
                + "    INTO rows_json, top\n"
                + "    FROM (SELECT v, body FROM " + name + "_rows WHERE v > from_version ORDER BY v LIMIT " + limit + ") r;\n"
                + "  RETURN json_build_object('Metadata', json_build_object('Sync', json_build_object(\n"
                + "           'Version', COALESCE(top, (SELECT COALESCE(max(v), 0) FROM " + name + "_rows)), 'Type', 'Diff', 'ReasonCode', 0)),\n"
                + "         'Data', COALESCE(rows_json, '[]'::json));\n"
                + "END $fn$;");
        return new RowsFunction(database, name);
    }

    String name() {
        return "public." + name;
    }

    /** Inserts rows with versions {@code from..to}. */
    RowsFunction insert(long from, long to) {
        database.execute("INSERT INTO " + name + "_rows SELECT g, 'row ' || g FROM generate_series(" + from + ", " + to + ") g");
        return this;
    }

    List<String> calls() {
        List<String> calls = new ArrayList<>();
        DataSource ds = database.dataSource();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT payload::text FROM " + name + "_calls ORDER BY id")) {
            while (rs.next()) {
                calls.add(rs.getString(1));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return calls;
    }
}
