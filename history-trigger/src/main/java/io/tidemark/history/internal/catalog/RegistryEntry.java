package io.tidemark.history.internal.catalog;

import io.tidemark.history.internal.ddl.HistoryNames;
import io.tidemark.history.internal.ddl.HistorySql;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tidemark.history.TemporalTable;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.PgName;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * One row of {@code tidemark.temporal_tables}: what was installed for a table.
 *
 * @param versioned     the columns history versions now, with their type definitions
 * @param orphans       columns dropped from the table that history keeps (nullable, no longer written)
 * @param optionsJson   the options that shape the generated SQL, as a JSON object text
 * @param functionHash  SHA-256 of the write function's body as generated
 */
public record RegistryEntry(PgName table, PgName historyTable, List<String> keyColumns, List<Column> versioned,
                            List<Column> orphans, String optionsJson, String functionHash) {

    private static final ObjectMapper JSON = new ObjectMapper();

    public RegistryEntry {
        keyColumns = List.copyOf(keyColumns);
        versioned = List.copyOf(versioned);
        orphans = List.copyOf(orphans);
    }

    /** The entry a fresh install of {@code shape} under {@code config} records. */
    public static RegistryEntry of(TemporalTable config, TableShape shape, List<Column> orphans, HistorySql sql) {
        List<String> keys = new ArrayList<>();
        shape.keyColumns().forEach(c -> keys.add(c.name()));
        return new RegistryEntry(shape.table(), HistoryNames.history(config), keys, shape.versioned(), orphans,
                optionsJson(config), sha256(sql.writeFunctionBody()));
    }

    /** The options that change the generated SQL; a difference is OPTIONS_CHANGED drift. */
    public static String optionsJson(TemporalTable config) {
        ObjectNode o = JSON.createObjectNode();
        o.put("settingsPrefix", config.settingsPrefix());
        o.put("truncatePolicy", config.truncatePolicy().name());
        o.put("triggerMode", config.triggerMode().name());
        o.put("periodIndex", config.periodIndex());
        if (config.storage() != io.tidemark.history.HistoryStorage.HISTORY_TABLE) {
            // Only when not the default, so registries written before the option existed stay without drift.
            o.put("storage", config.storage().name());
        }
        o.put("sessionUserColumn", config.sessionUserColumn());
        o.put("transactionIdColumn", config.transactionIdColumn());
        ArrayNode excluded = o.putArray("excluded");
        config.excludedColumns().stream().sorted().forEach(excluded::add);
        return o.toString();
    }

    /** The storage this entry was installed with (registries without the option hold the default). */
    public io.tidemark.history.HistoryStorage storage() {
        JsonNode storage = read(optionsJson).get("storage");
        return storage == null ? io.tidemark.history.HistoryStorage.HISTORY_TABLE
                : io.tidemark.history.HistoryStorage.valueOf(storage.asText());
    }

    public String keyColumnsJson() {
        ArrayNode a = JSON.createArrayNode();
        keyColumns.forEach(a::add);
        return a.toString();
    }

    public String versionedColumnsJson() {
        return columnsJson(versioned);
    }

    public String orphanColumnsJson() {
        return columnsJson(orphans);
    }

    static String columnsJson(List<Column> columns) {
        ArrayNode a = JSON.createArrayNode();
        for (Column c : columns) {
            a.addObject().put("name", c.name()).put("type", c.typeDefinition());
        }
        return a.toString();
    }

    static List<Column> parseColumns(String json) {
        List<Column> columns = new ArrayList<>();
        for (JsonNode n : read(json)) {
            columns.add(new Column(n.get("name").asText(), n.get("type").asText(), null, false));
        }
        return columns;
    }

    static List<String> parseNames(String json) {
        List<String> names = new ArrayList<>();
        read(json).forEach(n -> names.add(n.asText()));
        return names;
    }

    /** Whether two JSON texts hold the same value (jsonb reorders keys and respaces). */
    public static boolean sameJson(String a, String b) {
        return read(a).equals(read(b));
    }

    /** Registry JSON as a tree, to compare regardless of formatting. */
    public static JsonNode read(String json) {
        try {
            return JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new TidemarkException(ErrorCode.SCHEMA_DRIFT, "The Tidemark registry holds malformed JSON ("
                    + e.getOriginalMessage() + "); it was edited by hand. Uninstall and install again.", e);
        }
    }

    public static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
