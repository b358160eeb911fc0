package io.tidemark.kafka.internal;

import io.tidemark.sync.ChangeBatch;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The envelope's fields (docs/contract.md, "The envelope") as record headers, under the same names and with the
 * same values as the envelope's JSON, written as UTF-8 text: {@code idempotencyKey: tm1-...}, {@code page: 2}. Every
 * record of a page carries the same headers, so they are made once per page.
 */
public final class EnvelopeHeaders {

    public static final String OBJECT = "object";
    public static final String IDEMPOTENCY_KEY = "idempotencyKey";
    public static final String BATCH_ID = "batchId";
    public static final String FROM_VERSION = "fromVersion";
    public static final String TO_VERSION = "toVersion";
    public static final String SYNC_TYPE = "syncType";
    public static final String REASON_CODE = "reasonCode";
    public static final String PAGE = "page";
    public static final String PAGE_COUNT = "pageCount";
    public static final String TOTAL_CHANGES = "totalChanges";

    private EnvelopeHeaders() {
    }

    /** The headers of every record of {@code batch}, in the envelope's order. */
    public static List<Header> of(ChangeBatch batch) {
        return List.of(
                header(OBJECT, batch.objectName()),
                header(IDEMPOTENCY_KEY, batch.idempotencyKey()),
                header(BATCH_ID, batch.batchId()),
                header(FROM_VERSION, Long.toString(batch.fromVersion())),
                header(TO_VERSION, Long.toString(batch.toVersion())),
                header(SYNC_TYPE, batch.syncType().name()),
                header(REASON_CODE, Integer.toString(batch.reasonCode())),
                header(PAGE, Integer.toString(batch.pageNumber())),
                header(PAGE_COUNT, Integer.toString(batch.pageCount())),
                header(TOTAL_CHANGES, Long.toString(batch.totalChanges())));
    }

    private static Header header(String name, String value) {
        return new RecordHeader(name, value.getBytes(StandardCharsets.UTF_8));
    }
}
