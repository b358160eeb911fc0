package io.tidemark.kafka.internal;

import io.tidemark.sync.spi.DeliveryException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class SendErrorsTest {

    private static final String WHAT = "page 1/1 of object 'Items' to topic 'items'";

    @Test
    void an_unreachable_or_busy_broker_is_retryable() {
        for (Exception e : new Exception[] {new TimeoutException("Expiring 3 record(s)"),
                new NetworkException("disconnected"), new NotEnoughReplicasException("isr"),
                new UnknownTopicOrPartitionException("not yet"), new KafkaException("unknown"),
                new IllegalStateException("closed")}) {
            DeliveryException d = SendErrors.toDeliveryException(WHAT, e);
            assertThat(d.isRetryable()).as(e.toString()).isTrue();
            assertThat(d).hasMessageStartingWith(WHAT + " failed: " + e.getClass().getSimpleName());
        }
    }

    @Test
    void what_sending_again_cannot_cure_is_fatal() {
        for (Exception e : new Exception[] {new RecordTooLargeException("too large"),
                new TopicAuthorizationException(Set.of("items")), new SaslAuthenticationException("bad password"),
                new SerializationException("bad"), new ProducerFencedException("fenced")}) {
            assertThat(SendErrors.toDeliveryException(WHAT, e).isRetryable()).as(e.toString()).isFalse();
        }
    }

    @Test
    void a_wrapped_error_is_classified_and_described_by_its_cause() {
        KafkaException wrapped = new KafkaException("Cannot execute transactional method because we are in an"
                + " error state", new RecordTooLargeException("The message is 2000 bytes"));

        DeliveryException d = SendErrors.toDeliveryException(WHAT, wrapped);

        assertThat(d.isRetryable()).isFalse();
        assertThat(d).hasMessageContaining("RecordTooLargeException: The message is 2000 bytes")
                .hasMessageContaining("error state");
    }

    @Test
    void only_fencing_authorization_and_sequence_errors_break_the_producer() {
        assertThat(SendErrors.breaksProducer(new ProducerFencedException("x"))).isTrue();
        assertThat(SendErrors.breaksProducer(new OutOfOrderSequenceException("x"))).isTrue();
        assertThat(SendErrors.breaksProducer(new KafkaException(new TopicAuthorizationException("x")))).isTrue();
        assertThat(SendErrors.breaksProducer(new TimeoutException("x"))).isFalse();
        assertThat(SendErrors.breaksProducer(new RecordTooLargeException("x"))).isFalse();
        assertThat(SendErrors.isFenced(new KafkaException(new ProducerFencedException("x")))).isTrue();
        assertThat(SendErrors.isFenced(new TimeoutException("x"))).isFalse();
    }
}
