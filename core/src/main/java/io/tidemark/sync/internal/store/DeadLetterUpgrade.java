package io.tidemark.sync.internal.store;

import com.fasterxml.jackson.core.JsonGenerator;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Envelope;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.internal.Json;
import io.tidemark.sync.internal.sql.SqlTemplate;
import io.tidemark.sync.spi.DeadLetter;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Brings a dead-letter table created by an earlier Tidemark (one row per refusal: {@code changes}, {@code error},
 * {@code created_at}) to the current layout, inside the store's creation transaction: adds the new columns,
 * fills them row by row (the idempotency key and the envelope are computed here, as the engine computes them),
 * merges rows that were the same page refused more than once into one letter, and drops the old columns.
 *
 * <p>The earlier layout did not keep a cycle's page count or total: upgraded letters carry 0 for both, and their
 * idempotency key is derived with a page count of 0. It stays the same on every replay, which is what a consumer
 * needs to drop duplicates.
 */
final class DeadLetterUpgrade {

    /**
     * The dialect's statements: add the columns (nullable), fill one row (JDBC {@code ?} parameters: key, envelope,
     * attempts, failures, last failure, id), then tighten the columns and drop the old ones.
     */
    record Steps(String addColumns, String fill, String finish) {
    }

    private final String letters;
    private final Steps steps;

    DeadLetterUpgrade(String letters, Steps steps) {
        this.letters = letters;
        this.steps = steps;
    }

    /** One letter as the upgrade builds it, before it is written. */
    private static final class Pending {
        final long id;
        final String key;
        final String envelope;
        final List<DeadLetter.Failure> failures = new ArrayList<>();
        final List<Long> duplicates = new ArrayList<>();

        Pending(long id, String key, String envelope) {
            this.id = id;
            this.key = key;
            this.envelope = envelope;
        }
    }

    void run(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(steps.addColumns());
        }
        Map<String, Pending> pages = read(c);
        try (PreparedStatement fill = c.prepareStatement(steps.fill());
             PreparedStatement delete = c.prepareStatement(SqlTemplate.of("DELETE FROM {{letters}} WHERE id = ?")
                     .with("letters", letters).render())) {
            for (Pending page : pages.values()) {
                List<DeadLetter.Failure> kept = page.failures.subList(
                        Math.max(0, page.failures.size() - DeadLetter.MAX_FAILURES), page.failures.size());
                fill.setString(1, page.key);
                fill.setString(2, page.envelope);
                fill.setInt(3, page.failures.size());
                fill.setString(4, FailuresJson.write(kept));
                fill.setObject(5, OffsetDateTime.ofInstant(page.failures.get(page.failures.size() - 1).at(),
                        ZoneOffset.UTC));
                fill.setLong(6, page.id);
                fill.addBatch();
                for (long duplicate : page.duplicates) {
                    delete.setLong(1, duplicate);
                    delete.addBatch();
                }
            }
            fill.executeBatch();
            delete.executeBatch();
        }
        try (Statement s = c.createStatement()) {
            s.execute(steps.finish());
        }
    }

    /** Reads every old row, oldest first, grouping rows of the same object, destination and page. */
    private Map<String, Pending> read(Connection c) throws SQLException {
        Map<String, Pending> pages = new LinkedHashMap<>();
        String select = SqlTemplate.of("""
                SELECT id, object_name, destination, page_number, from_version, to_version, sync_type, reason_code,
                       changes, error, created_at
                  FROM {{letters}}
                 ORDER BY id""").with("letters", letters).render();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(select)) {
            while (rs.next()) {
                ChangeBatch page = new ChangeBatch(rs.getString("object_name"), rs.getLong("from_version"),
                        rs.getLong("to_version"), SyncType.valueOf(rs.getString("sync_type")),
                        rs.getInt("reason_code"), List.of(), rs.getInt("page_number"), 0, 0);
                String destination = rs.getString("destination");
                String group = page.objectName() + '\0' + destination + '\0' + page.idempotencyKey();
                long id = rs.getLong("id");
                Pending pending = pages.get(group);
                if (pending == null) {
                    pending = new Pending(id, page.idempotencyKey(), envelope(page, rs.getString("changes")));
                    pages.put(group, pending);
                } else {
                    pending.duplicates.add(id);
                }
                Instant at = rs.getObject("created_at", OffsetDateTime.class).toInstant();
                pending.failures.add(new DeadLetter.Failure(at, rs.getString("error")));
            }
        }
        return pages;
    }

    /** The envelope of an old letter: the page's fields, then its changes exactly as they were stored. */
    private static String envelope(ChangeBatch page, String changes) {
        StringWriter out = new StringWriter(changes.length() + 300);
        try (JsonGenerator g = Json.FACTORY.createGenerator(out)) {
            g.writeStartObject();
            Envelope.writeFields(page, g);
            g.writeFieldName("changes");
            g.writeRawValue(changes);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }
}
