package io.tidemark.kafka.internal;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Operation;
import io.tidemark.sync.spi.DeliveryException;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;

import java.util.ArrayList;
import java.util.List;

/**
 * The records of one page, in the page's order: per change one record whose key is the row's key
 * ({@link RecordKeys}), whose value is the change exactly as the procedure returned it, and whose headers are the
 * envelope's ({@link EnvelopeHeaders}); with tombstones on, a delete is followed by a record with the same key and
 * no value, so a compacted topic forgets the row. Every record is made before the first is sent: a change without
 * its key fails the page before any of it reaches Kafka.
 */
public final class PageRecords {

    private PageRecords() {
    }

    public static List<ProducerRecord<byte[], byte[]>> of(ChangeBatch batch, String topic, RecordKeys keys,
                                                         boolean tombstones) {
        List<String> keyColumns = keys.columnsOf(batch.objectName());
        if (keyColumns.isEmpty()) {
            throw DeliveryException.fatal("object '" + batch.objectName() + "' has no key columns for its record"
                    + " key: set keyColumns(...) or objectKeyColumns(\"" + batch.objectName() + "\", ...)", null);
        }
        List<Header> headers = EnvelopeHeaders.of(batch);
        List<Change> changes = batch.changes();
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>(changes.size() + (tombstones ? 8 : 0));
        for (int i = 0; i < changes.size(); i++) {
            Change change = changes.get(i);
            byte[] key = keys.keyOf(batch, i, keyColumns);
            records.add(new ProducerRecord<>(topic, null, null, key, change.rawUtf8(), new RecordHeaders(headers)));
            if (tombstones && change.operation().filter(Operation.DELETE::equals).isPresent()) {
                records.add(new ProducerRecord<>(topic, null, null, key, null, new RecordHeaders(headers)));
            }
        }
        return records;
    }
}
