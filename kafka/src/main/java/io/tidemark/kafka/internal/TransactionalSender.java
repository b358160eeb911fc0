package io.tidemark.kafka.internal;

import io.tidemark.sync.spi.DeliveryException;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Supplier;

/**
 * With a transactional id: each page is one Kafka transaction (begin, send every record, commit, which waits for
 * every acknowledgement), so a {@code read_committed} consumer sees a page whole or not at all. A failed page's
 * transaction is aborted. Pages are sent one at a time (a producer has one open transaction), whichever object they
 * belong to.
 *
 * <p>The producer is made once and its transactions initialised before the first page. It is replaced only when
 * Kafka says it cannot be used again (a failed abort, an authorization or sequence error): the new producer's
 * initialisation completes or aborts whatever the old one left open. A producer fenced by another one with the same
 * transactional id is not replaced, since a new one would fence the other in turn: this destination then refuses
 * every page, fatally, until it is closed.
 */
public final class TransactionalSender implements PageSender {

    private static final Logger LOG = LoggerFactory.getLogger(TransactionalSender.class);

    private final Supplier<Producer<byte[], byte[]>> factory;
    private final String transactionalId;
    private Producer<byte[], byte[]> producer;
    private boolean initialised;
    private String fencedBecause;
    private boolean closed;

    public TransactionalSender(Producer<byte[], byte[]> first, Supplier<Producer<byte[], byte[]>> factory,
                               String transactionalId) {
        this.producer = first;
        this.factory = factory;
        this.transactionalId = transactionalId;
    }

    @Override
    public synchronized void send(List<ProducerRecord<byte[], byte[]>> records, String what) {
        if (closed) {
            throw DeliveryException.fatal(what + " refused: the destination is closed", null);
        }
        if (fencedBecause != null) {
            throw DeliveryException.fatal(what + " refused: this producer (transactional id '" + transactionalId
                    + "') was fenced by another producer with the same id: " + fencedBecause, null);
        }
        Producer<byte[], byte[]> p = ready(what);
        try {
            p.beginTransaction();
            List<Future<RecordMetadata>> acks = new ArrayList<>(records.size());
            for (ProducerRecord<byte[], byte[]> record : records) {
                acks.add(p.send(record));
            }
            // Flushes and waits for every record; throws if one failed, and the transaction is then abortable.
            p.commitTransaction();
            for (Future<RecordMetadata> ack : acks) {
                ack.get();
            }
        } catch (ExecutionException e) {
            // Not expected after a successful commit; treated like any failed send.
            throw failed(p, what, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failed(p, what, e);
        } catch (KafkaException e) {
            throw failed(p, what, firstSendFailure(e));
        }
    }

    private Producer<byte[], byte[]> ready(String what) {
        try {
            if (producer == null) {
                producer = factory.get();
                initialised = false;
            }
            if (!initialised) {
                // Completes or aborts any transaction a previous producer with this id left open, and fences it.
                producer.initTransactions();
                initialised = true;
            }
            return producer;
        } catch (KafkaException e) {
            DeliveryException refusal = SendErrors.toDeliveryException(what + " (initialising transactions)", e);
            if (SendErrors.isFenced(e)) {
                fencedBecause = e.toString();
            }
            discard();
            throw refusal;
        }
    }

    private DeliveryException failed(Producer<byte[], byte[]> p, String what, Throwable error) {
        DeliveryException refusal = error instanceof InterruptedException
                ? DeliveryException.retryable(what + " was interrupted; its transaction is aborted", error)
                : SendErrors.toDeliveryException(what + " (transaction aborted)", error);
        if (SendErrors.isFenced(error)) {
            fencedBecause = error.toString();
            discard();
        } else if (SendErrors.breaksProducer(error)) {
            discard();
        } else {
            try {
                p.abortTransaction();
            } catch (KafkaException | IllegalStateException abortFailed) {
                if (SendErrors.isFenced(abortFailed)) {
                    // The send only saw an old epoch; the abort learns why. Replacing the producer would fence
                    // the one that took over, so this destination stops here.
                    fencedBecause = abortFailed.toString();
                    discard();
                    return DeliveryException.fatal(what + " (transaction aborted) failed: the producer with"
                            + " transactional id '" + transactionalId + "' was fenced by another producer with the"
                            + " same id (" + SendErrors.describe(error) + ")", error);
                }
                // After a timed-out commit Kafka allows only retrying the commit: start over with a new producer,
                // whose initialisation settles the open transaction one way or the other.
                LOG.warn("{}: aborting the transaction failed ({}); the producer is replaced", what,
                        abortFailed.toString());
                discard();
            }
        }
        return refusal;
    }

    /** A failed commit reports the first failed send as its cause; that is the error worth classifying. */
    private static Throwable firstSendFailure(KafkaException e) {
        return e.getCause() != null && e.getClass() == KafkaException.class ? e.getCause() : e;
    }

    private void discard() {
        Producer<byte[], byte[]> p = producer;
        producer = null;
        initialised = false;
        if (p != null) {
            try {
                p.close(Duration.ZERO);
            } catch (RuntimeException e) {
                LOG.debug("closing a broken producer failed: {}", e.toString());
            }
        }
    }

    @Override
    public synchronized void close(Duration timeout) {
        closed = true;
        Producer<byte[], byte[]> p = producer;
        producer = null;
        if (p != null) {
            p.close(timeout);
        }
    }
}
