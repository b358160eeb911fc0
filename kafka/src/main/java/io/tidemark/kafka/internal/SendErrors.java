package io.tidemark.kafka.internal;

import io.tidemark.sync.spi.DeliveryException;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.UnsupportedVersionException;

import java.util.function.Predicate;

/**
 * Maps what the producer reports to the engine's two kinds of refusal. Retryable: anything Kafka itself calls
 * retriable (a broker that is down or changing leaders, a timeout, too few in-sync replicas, a topic not created
 * yet), and anything unknown. Fatal: what sending the same records again cannot cure (a record larger than the
 * broker or producer accepts, a refused credential or ACL, an invalid topic, a record the broker calls corrupt, a
 * fenced transactional producer).
 */
public final class SendErrors {

    private SendErrors() {
    }

    /** True when sending the same records again cannot succeed. */
    public static boolean isFatal(Throwable error) {
        for (Throwable t = error; t != null; t = next(t)) {
            if (t instanceof RetriableException) {
                return false;
            }
            if (t instanceof RecordTooLargeException || t instanceof RecordBatchTooLargeException
                    || t instanceof AuthorizationException || t instanceof AuthenticationException
                    || t instanceof InvalidTopicException || t instanceof InvalidConfigurationException
                    || t instanceof InvalidRecordException || t instanceof SerializationException
                    || t instanceof ProducerFencedException || t instanceof UnsupportedVersionException) {
                return true;
            }
        }
        return false;
    }

    /**
     * True when the producer cannot be used again after {@code error} (Kafka's rule for transactional producers):
     * it is closed and, unless it was fenced, replaced by a new one on the next page.
     */
    public static boolean breaksProducer(Throwable error) {
        return anyCause(error, t -> t instanceof ProducerFencedException || t instanceof OutOfOrderSequenceException
                || t instanceof AuthorizationException || t instanceof AuthenticationException
                || t instanceof UnsupportedVersionException);
    }

    /** True when another producer with the same transactional id took over. */
    public static boolean isFenced(Throwable error) {
        return anyCause(error, t -> t instanceof ProducerFencedException);
    }

    private static boolean anyCause(Throwable error, Predicate<Throwable> test) {
        for (Throwable t = error; t != null; t = next(t)) {
            if (test.test(t)) {
                return true;
            }
        }
        return false;
    }

    private static Throwable next(Throwable t) {
        return t.getCause() == t ? null : t.getCause();
    }

    /** The refusal for {@code error}; {@code what} names the page and the topic. */
    public static DeliveryException toDeliveryException(String what, Throwable error) {
        String message = what + " failed: " + describe(error);
        return isFatal(error) ? DeliveryException.fatal(message, error) : DeliveryException.retryable(message, error);
    }

    /** The error's type and message, and its root cause's when the producer wrapped it. */
    public static String describe(Throwable error) {
        Throwable root = error;
        while (root.getCause() != null && root.getCause() != root && root instanceof KafkaException
                && root.getClass() == KafkaException.class) {
            root = root.getCause();
        }
        String text = root.getClass().getSimpleName() + ": " + root.getMessage();
        return root == error ? text : text + " (" + error.getMessage() + ")";
    }
}
