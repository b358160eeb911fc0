package io.tidemark.postgres.outbox;

import io.tidemark.testing.TestDatabase;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * What the catalog holds of the objects in one schema, as text to compare before and after: every function with
 * the transaction that last wrote it (CREATE OR REPLACE writes it even when nothing changes) and its body, every
 * trigger with its writer and state, every relation, and every comment. Equal snapshots mean nothing was written.
 */
final class CatalogSnapshot {

    private CatalogSnapshot() {
    }

    static String of(TestDatabase database, String schema) {
        String sql = """
                SELECT string_agg(line, E'\\n' ORDER BY line) FROM (
                    SELECT 'function ' || p.oid::regprocedure::text || ' xmin ' || p.xmin::text || ' body '
                           || md5(p.prosrc) AS line
                      FROM pg_proc p WHERE p.pronamespace = '%1$s'::regnamespace
                    UNION ALL
                    SELECT 'trigger ' || t.tgname || ' on ' || t.tgrelid::regclass::text || ' xmin ' || t.xmin::text
                           || ' enabled ' || t.tgenabled::text
                      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                     WHERE c.relnamespace = '%1$s'::regnamespace AND NOT t.tgisinternal
                    UNION ALL
                    SELECT 'relation ' || c.relname || ' ' || c.relkind::text
                      FROM pg_class c WHERE c.relnamespace = '%1$s'::regnamespace
                    UNION ALL
                    SELECT 'comment on ' || c.relname || ': ' || d.description
                      FROM pg_description d JOIN pg_class c ON c.oid = d.objoid
                     WHERE d.classoid = 'pg_class'::regclass AND c.relnamespace = '%1$s'::regnamespace
                ) AS s""".formatted(schema);
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
