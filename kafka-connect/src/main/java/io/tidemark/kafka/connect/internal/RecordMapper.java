package io.tidemark.kafka.connect.internal;

import io.tidemark.kafka.connect.ObjectSettings;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Envelope;
import io.tidemark.sync.Operation;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Headers;
import org.apache.kafka.connect.source.SourceRecord;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Turns handed-out changes into Connect records: the key is the row's key columns, the value the change (operation,
 * version, {@code $changed}, the sync type and the row exactly as the procedure returned it), the headers the
 * envelope's fields (docs/contract.md, "The envelope") of the engine page the change belongs to.
 */
public final class RecordMapper {

    /** The record key: the key columns as a compact JSON object, in the configured order. */
    public static final Schema KEY_SCHEMA = SchemaBuilder.string().name("io.tidemark.kafka.connect.Key").build();

    /** The record value of a change. */
    public static final Schema VALUE_SCHEMA = SchemaBuilder.struct().name("io.tidemark.kafka.connect.Change")
            .field("object", Schema.STRING_SCHEMA)
            .field("operation", Schema.OPTIONAL_STRING_SCHEMA)
            .field("version", Schema.OPTIONAL_INT64_SCHEMA)
            .field("changed", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
            .field("syncType", Schema.STRING_SCHEMA)
            .field("row", Schema.STRING_SCHEMA)
            .build();

    /** The value of a record on the position topic. */
    public static final Schema POSITION_SCHEMA = SchemaBuilder.struct().name("io.tidemark.kafka.connect.Position")
            .field("object", Schema.STRING_SCHEMA)
            .field("version", Schema.INT64_SCHEMA)
            .build();

    /** The prefix of every header the connector sets, followed by the envelope's field name. */
    public static final String HEADER_PREFIX = "tidemark.";

    private final ObjectSettings settings;
    private final String source;
    private final boolean tombstones;
    private final Map<String, Object> partition;
    private final RecordKeys keys;
    /** The headers of the page the last record belonged to: a page's records share them. */
    private ChangeBatch headersPage;
    private ConnectHeaders pageHeaders;

    public RecordMapper(ObjectSettings settings, String source, boolean tombstones) {
        this.settings = settings;
        this.source = source;
        this.tombstones = tombstones;
        this.partition = SourceOffsets.partition(settings.object().name());
        this.keys = new RecordKeys(settings.object().name(), settings.keyColumns());
    }

    /** Adds the record of {@code emitted} (and its tombstone, for a delete when configured) to {@code out}. */
    public void add(ObjectCursor.Emitted emitted, List<SourceRecord> out) {
        Change change = emitted.change();
        Map<String, Object> offset = SourceOffsets.offset(source, emitted.offsetVersion());
        String key = keys.of(change);
        Struct value = new Struct(VALUE_SCHEMA)
                .put("object", settings.object().name())
                .put("operation", change.operation().map(Operation::code).orElse(null))
                .put("version", change.version().isPresent() ? change.version().getAsLong() : null)
                .put("changed", change.changedColumns().orElse(null))
                .put("syncType", emitted.page().syncType().name())
                .put("row", new String(change.rawUtf8(), StandardCharsets.UTF_8));
        out.add(new SourceRecord(partition, offset, settings.topic(), null, KEY_SCHEMA, key, VALUE_SCHEMA, value,
                null, headers(emitted.page())));
        if (tombstones && change.operation().orElse(null) == Operation.DELETE) {
            // No value schema: a converter writes a null value (a tombstone) only without a required schema.
            out.add(new SourceRecord(partition, offset, settings.topic(), null, KEY_SCHEMA, key, null, null,
                    null, headers(emitted.page())));
        }
    }

    /** The record that stores a position without a change (Connect stores offsets only with records). */
    public SourceRecord position(String topic, long version) {
        Struct value = new Struct(POSITION_SCHEMA).put("object", settings.object().name()).put("version", version);
        return new SourceRecord(partition, SourceOffsets.offset(source, OptionalLong.of(version)), topic, null,
                Schema.STRING_SCHEMA, settings.object().name(), POSITION_SCHEMA, value);
    }

    /**
     * The envelope headers of {@code page}: built once per page, and copied for each record (a record's headers
     * are its own: a transformation may change them).
     */
    private Headers headers(ChangeBatch page) {
        if (page != headersPage) {
            pageHeaders = envelopeHeaders(page);
            headersPage = page;
        }
        return new ConnectHeaders(pageHeaders);
    }

    private static ConnectHeaders envelopeHeaders(ChangeBatch page) {
        ConnectHeaders headers = new ConnectHeaders();
        Envelope.fields(page, new Envelope.FieldSink() {
            @Override
            public void text(String name, String value) {
                headers.addString(HEADER_PREFIX + name, value);
            }

            @Override
            public void number(String name, long value) {
                headers.addLong(HEADER_PREFIX + name, value);
            }

            @Override
            public void number(String name, int value) {
                headers.addInt(HEADER_PREFIX + name, value);
            }
        });
        return headers;
    }
}
