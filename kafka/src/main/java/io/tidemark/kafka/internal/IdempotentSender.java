package io.tidemark.kafka.internal;

import io.tidemark.sync.spi.DeliveryException;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/**
 * Without transactions: every record of the page is handed to the idempotent producer first (it batches them
 * and keeps each partition's order, even across its own retries), then every acknowledgement is awaited. The page
 * fails if one record fails, but only after every record has an outcome, so a retried page never overtakes records
 * of its previous attempt that are still in flight. One producer serves every object, from any thread.
 */
public final class IdempotentSender implements PageSender {

    private final Producer<byte[], byte[]> producer;

    public IdempotentSender(Producer<byte[], byte[]> producer) {
        this.producer = producer;
    }

    @Override
    public void send(List<ProducerRecord<byte[], byte[]>> records, String what) {
        List<Future<RecordMetadata>> acks = new ArrayList<>(records.size());
        Throwable failure = null;
        try {
            for (ProducerRecord<byte[], byte[]> record : records) {
                acks.add(producer.send(record));
            }
        } catch (KafkaException | IllegalStateException e) {
            // Thrown by send() itself (a closed or broken producer); what was handed over is still awaited below.
            failure = e;
        }
        try {
            for (Future<RecordMetadata> ack : acks) {
                try {
                    // Bounded by the producer: each record completes within delivery.timeout.ms.
                    ack.get();
                } catch (ExecutionException e) {
                    if (failure == null) {
                        failure = e.getCause();
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DeliveryException.retryable(what + " was interrupted before every record was acknowledged", e);
        }
        if (failure != null) {
            throw SendErrors.toDeliveryException(what, failure);
        }
    }

    @Override
    public void close(Duration timeout) {
        producer.close(timeout);
    }
}
