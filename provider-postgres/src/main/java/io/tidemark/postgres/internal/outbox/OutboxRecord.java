package io.tidemark.postgres.internal.outbox;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.TruncatePolicy;
import io.tidemark.postgres.internal.FunctionNames;
import io.tidemark.sync.internal.Json;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What an install recorded: every option that shapes what a destination receives, and the hash of the generated
 * SQL. Stored as JSON in the comment of the outbox's state table ({@code COMMENT ON TABLE <outbox>_state}), written
 * by the same script that creates the objects, so an outbox installed by a migration tool records it too. A
 * comment needs no privilege beyond owning the table, and anyone may read it ({@code obj_description}).
 *
 * <p>Names are kept as {@link FunctionNames#text} gives them ({@code public.items}, {@code "Sales"."Items"}): what
 * messages show, and what {@link io.tidemark.sync.internal.sql.PgName#parse} reads back as the same name.
 *
 * @param table          the captured table
 * @param outbox         the outbox table
 * @param changeFunction the change function (one json argument)
 * @param key            the key columns, each with the JSON key it travels under
 * @param columns        every captured column (key included) in payload order, each with its JSON key
 * @param truncate       what a TRUNCATE of the table does
 * @param capture        what a change records (absent from records written before capture shapes existed: those
 *                       outboxes store full images)
 * @param notifyChannel  the notification channel, or null when notifications are off
 * @param scriptHash     SHA-256 of the generated SQL without its comment lines ({@link #hashOf})
 */
public record OutboxRecord(String table, String outbox, String changeFunction, List<OutboxColumn> key,
                           List<OutboxColumn> columns, TruncatePolicy truncate, CaptureShape capture,
                           String notifyChannel, String scriptHash) {

    /** The value of the {@code tidemark} member that marks a comment as an outbox record. */
    static final String MARKER = "outbox";
    /** Raised when the record's layout changes; a record of another format is read as drift, never guessed at. */
    static final int FORMAT = 1;

    public OutboxRecord {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(outbox, "outbox");
        Objects.requireNonNull(changeFunction, "changeFunction");
        key = List.copyOf(key);
        columns = List.copyOf(columns);
        Objects.requireNonNull(truncate, "truncate");
        Objects.requireNonNull(capture, "capture");
        Objects.requireNonNull(scriptHash, "scriptHash");
    }

    /** The record a script generated for {@code names} and {@code shape} writes. */
    static OutboxRecord of(OutboxNames names, OutboxShape shape, TruncatePolicy truncate, CaptureShape capture,
                           String channel, String scriptHash) {
        return new OutboxRecord(names.tableText(), FunctionNames.text(names.outbox()),
                FunctionNames.text(names.changeFunction()), shape.key(), shape.columns(), truncate, capture,
                channel, scriptHash);
    }

    /** The JSON text stored in the comment; members in a fixed order, so the script is reproducible. */
    public String toJson() {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("tidemark", MARKER);
        o.put("format", FORMAT);
        o.put("table", table);
        o.put("outboxTable", outbox);
        o.put("changeFunction", changeFunction);
        o.set("key", columnsJson(key));
        o.set("columns", columnsJson(columns));
        o.put("truncate", truncate.name());
        // Written only for KEYS: a full-image outbox records exactly what it recorded before shapes existed, so
        // outboxes installed by an earlier version are still recorded as installed.
        if (capture != CaptureShape.FULL_IMAGE) {
            o.put("capture", capture.name());
        }
        if (notifyChannel == null) {
            o.putNull("notifyChannel");
        } else {
            o.put("notifyChannel", notifyChannel);
        }
        o.put("scriptHash", scriptHash);
        return o.toString();
    }

    private static ArrayNode columnsJson(List<OutboxColumn> columns) {
        ArrayNode a = Json.MAPPER.createArrayNode();
        for (OutboxColumn c : columns) {
            a.addObject().put("column", c.name()).put("payloadKey", c.payloadKey());
        }
        return a;
    }

    /**
     * Reads a state table's comment. Empty when the comment is not an outbox record at all (an outbox installed
     * before installs were recorded carries a sentence there); a comment that claims to be a record but cannot be
     * read is reported as such, so that nothing is adopted on a guess.
     */
    static Optional<Parsed> parse(String comment) {
        if (comment == null || !comment.startsWith("{")) {
            return Optional.empty();
        }
        JsonNode o;
        try {
            o = Json.MAPPER.readTree(comment);
        } catch (JsonProcessingException e) {
            return Optional.empty();
        }
        if (!o.isObject() || !MARKER.equals(o.path("tidemark").asText(null))) {
            return Optional.empty();
        }
        try {
            if (o.path("format").asInt() != FORMAT) {
                return Optional.of(Parsed.unreadable("format " + o.path("format") + ", this version reads format "
                        + FORMAT));
            }
            return Optional.of(Parsed.of(new OutboxRecord(text(o, "table"), text(o, "outboxTable"),
                    text(o, "changeFunction"), columns(o, "key"), columns(o, "columns"),
                    TruncatePolicy.valueOf(text(o, "truncate")),
                    o.has("capture") ? CaptureShape.valueOf(text(o, "capture")) : CaptureShape.FULL_IMAGE,
                    o.path("notifyChannel").isNull() ? null : text(o, "notifyChannel"), text(o, "scriptHash"))));
        } catch (IllegalArgumentException | NullPointerException e) {
            return Optional.of(Parsed.unreadable("edited by hand? " + e.getMessage()));
        }
    }

    private static String text(JsonNode o, String member) {
        JsonNode n = o.get(member);
        if (n == null || !n.isTextual()) {
            throw new IllegalArgumentException("member " + member + " is missing or not text");
        }
        return n.asText();
    }

    private static List<OutboxColumn> columns(JsonNode o, String member) {
        JsonNode a = o.get(member);
        if (a == null || !a.isArray()) {
            throw new IllegalArgumentException("member " + member + " is missing or not an array");
        }
        List<OutboxColumn> columns = new ArrayList<>();
        for (JsonNode c : a) {
            columns.add(new OutboxColumn(text(c, "column"), text(c, "payloadKey")));
        }
        return columns;
    }

    /** The record, or why a comment that claims to be one could not be read. */
    record Parsed(OutboxRecord record, String problem) {
        static Parsed of(OutboxRecord record) {
            return new Parsed(record, null);
        }

        static Parsed unreadable(String problem) {
            return new Parsed(null, problem);
        }
    }

    /** Column names in payload order: {@code id, name}. */
    static String names(List<OutboxColumn> columns) {
        return String.join(", ", columns.stream().map(OutboxColumn::name).toList());
    }

    /** The renamed columns as {@code column -> key} text, or {@code none}. */
    static String payloadKeys(List<OutboxColumn> columns) {
        Map<String, String> renamed = new LinkedHashMap<>();
        for (OutboxColumn c : columns) {
            if (!c.name().equals(c.payloadKey())) {
                renamed.put(c.name(), c.payloadKey());
            }
        }
        if (renamed.isEmpty()) {
            return "none (every column under its own name)";
        }
        List<String> parts = new ArrayList<>();
        renamed.forEach((column, key) -> parts.add(column + " -> " + key));
        return String.join(", ", parts);
    }

    /**
     * SHA-256 of generated SQL with its whole-line comments left out: what the SQL does, not how it is explained, so
     * a reworded comment in a later Tidemark version is not reported as drift.
     */
    static String hashOf(String sql) {
        return sha256(withoutCommentLines(sql));
    }

    static String withoutCommentLines(String sql) {
        StringBuilder out = new StringBuilder(sql.length());
        for (String line : sql.split("\n", -1)) {
            if (!line.stripLeading().startsWith("--")) {
                out.append(line).append('\n');
            }
        }
        return out.toString();
    }

    static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
