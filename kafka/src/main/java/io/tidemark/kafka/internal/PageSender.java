package io.tidemark.kafka.internal;

import org.apache.kafka.clients.producer.ProducerRecord;

import java.time.Duration;
import java.util.List;

/** Sends one page's records and returns only once Kafka acknowledged every one; throws a DeliveryException. */
public interface PageSender extends AutoCloseable {

    /** Sends {@code records}; {@code what} names the page and its topic in error messages. */
    void send(List<ProducerRecord<byte[], byte[]>> records, String what);

    /** Closes the producer, waiting at most {@code timeout} for records still in flight. */
    void close(Duration timeout);

    @Override
    default void close() {
        close(Duration.ofSeconds(30));
    }
}
