package io.tidemark.kafka;

import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A producer interceptor (producer property {@code interceptor.classes}) that stops the broker in the middle of a
 * page: when the armed record is handed to the producer, the broker is stopped before that record is sent, and
 * started again later on another thread. Kafka makes the interceptor, so it is armed through static state; tests
 * using it do not run in parallel.
 */
public final class BrokerOutage implements ProducerInterceptor<byte[], byte[]> {

    private static final AtomicInteger SENT = new AtomicInteger();
    private static final AtomicReference<Arm> ARMED = new AtomicReference<>();

    private record Arm(int atRecord, Runnable stop) {
    }

    /** Runs {@code stop} (on the sending thread) when record number {@code atRecord} (from 1) is sent. */
    static void arm(int atRecord, Runnable stop) {
        SENT.set(0);
        ARMED.set(new Arm(atRecord, stop));
    }

    static void disarm() {
        ARMED.set(null);
    }

    @Override
    public ProducerRecord<byte[], byte[]> onSend(ProducerRecord<byte[], byte[]> record) {
        Arm arm = ARMED.get();
        if (arm != null && SENT.incrementAndGet() == arm.atRecord() && ARMED.compareAndSet(arm, null)) {
            arm.stop().run();
        }
        return record;
    }

    @Override
    public void onAcknowledgement(RecordMetadata metadata, Exception exception) {
    }

    @Override
    public void close() {
    }

    @Override
    public void configure(Map<String, ?> configs) {
    }
}
