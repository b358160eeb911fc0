package io.tidemark.postgres;

import io.tidemark.testing.TestDatabase;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * A real PostgreSQL change function whose answers a test queues up: each call logs the request it received
 * and returns the next queued body as text, byte for byte. Lets a test drive the engine through every shape of
 * response, valid or not, over the real driver.
 */
final class ScriptedFunction {

    private final TestDatabase database;
    private final String name;

    private ScriptedFunction(TestDatabase database, String name) {
        this.database = database;
        this.name = name;
    }

    /** Creates {@code public.<name>(payload json) RETURNS text} with its own queue and call log. */
    static ScriptedFunction create(TestDatabase database, String name) {
        database.execute("CREATE TABLE " + name + "_responses (id bigserial PRIMARY KEY, body text, taken boolean NOT NULL DEFAULT false);\n"
                + "CREATE TABLE " + name + "_calls (id bigserial PRIMARY KEY, payload json NOT NULL);\n"
                + "CREATE FUNCTION public." + name + "(payload json) RETURNS text LANGUAGE plpgsql AS $fn$\n"
                + "DECLARE r record;\n"
                + "BEGIN\n"
                + "  INSERT INTO " + name + "_calls (payload) VALUES (payload);\n"
                + "  SELECT id, body INTO r FROM " + name + "_responses WHERE NOT taken ORDER BY id LIMIT 1;\n"
                + "  IF NOT FOUND THEN RAISE EXCEPTION 'no scripted response left for " + name + "'; END IF;\n"
                + "  UPDATE " + name + "_responses SET taken = true WHERE id = r.id;\n"
                + "  RETURN r.body;\n"
                + "END $fn$;");
        return new ScriptedFunction(database, name);
    }

    String name() {
        return "public." + name;
    }

    /** Queues one response body (null for a NULL result). */
    ScriptedFunction thenReturn(String body) {
        try (Connection c = database.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("INSERT INTO " + name + "_responses (body) VALUES (?)")) {
            ps.setString(1, body);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return this;
    }

    /** The requests the function received, in order, as JSON text. */
    List<String> calls() {
        List<String> calls = new ArrayList<>();
        DataSource ds = database.dataSource();
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT payload::text FROM " + name + "_calls ORDER BY id");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                calls.add(rs.getString(1));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return calls;
    }

    /** A valid response with rows given as JSON objects. */
    static String response(long version, String type, int reason, String... rows) {
        return "{\"Metadata\":{\"Sync\":{\"Version\":" + version + ",\"Type\":\"" + type + "\",\"ReasonCode\":" + reason
                + "}},\"Data\":[" + String.join(",", rows) + "]}";
    }

    static String row(String op, long version, String fields) {
        return "{\"$operation\":\"" + op + "\",\"$version\":" + version + (fields.isEmpty() ? "" : "," + fields) + "}";
    }
}
