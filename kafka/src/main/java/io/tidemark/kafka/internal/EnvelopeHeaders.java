package io.tidemark.kafka.internal;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Envelope;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The envelope's fields (docs/contract.md, "The envelope") as record headers, under the same names and with the
 * same values as the envelope's JSON, written as UTF-8 text: {@code idempotencyKey: tm1-...}, {@code page: 2}. Every
 * record of a page carries the same headers, so they are made once per page.
 */
public final class EnvelopeHeaders {

    private EnvelopeHeaders() {
    }

    /** The headers of every record of {@code batch}, in the envelope's order. */
    public static List<Header> of(ChangeBatch batch) {
        List<Header> headers = new ArrayList<>(10);
        Envelope.fields(batch, new Envelope.FieldSink() {
            @Override
            public void text(String name, String value) {
                headers.add(new RecordHeader(name, value.getBytes(StandardCharsets.UTF_8)));
            }

            @Override
            public void number(String name, long value) {
                text(name, Long.toString(value));
            }

            @Override
            public void number(String name, int value) {
                text(name, Integer.toString(value));
            }
        });
        return List.copyOf(headers);
    }
}
