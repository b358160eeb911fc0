package io.tidemark.kafka.internal;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.spi.DeliveryException;

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The topic each object's records go to: one fixed topic, a pattern with {@code {object}}, or a function. A name
 * is checked against Kafka's own rule (1 to 249 of {@code [a-zA-Z0-9._-]}, not {@code .} or {@code ..}) before the
 * first record is sent, so a bad name fails the page, fatally, instead of failing inside the producer.
 */
public final class TopicNames {

    /** Kafka's rule for a topic name. */
    public static final Pattern LEGAL = Pattern.compile("[a-zA-Z0-9._-]{1,249}");
    /** The placeholder a pattern replaces with the object's name. */
    public static final String OBJECT = "{object}";

    private final Function<String, String> naming;
    private final ConcurrentMap<String, String> byObject = new ConcurrentHashMap<>();
    private final String description;

    private TopicNames(Function<String, String> naming, String description) {
        this.naming = naming;
        this.description = description;
    }

    public static TopicNames fixed(String topic) {
        return new TopicNames(object -> topic, topic);
    }

    public static TopicNames pattern(String pattern) {
        return new TopicNames(object -> pattern.replace(OBJECT, object), pattern);
    }

    public static TopicNames function(Function<String, String> naming) {
        return new TopicNames(naming, "a topic per object");
    }

    /** True when {@code name} is a topic name Kafka accepts. */
    public static boolean isLegal(String name) {
        return name != null && LEGAL.matcher(name).matches() && !name.equals(".") && !name.equals("..");
    }

    /** The topic of {@code batch}'s object; a fatal delivery error when the naming gives no legal name. */
    public String of(ChangeBatch batch) {
        String cached = byObject.get(batch.objectName());
        if (cached != null) {
            return cached;
        }
        String topic;
        try {
            topic = naming.apply(batch.objectName());
        } catch (RuntimeException e) {
            throw DeliveryException.fatal("the topic naming function failed for object '" + batch.objectName()
                    + "': " + e, e);
        }
        if (!isLegal(topic)) {
            // A name that Kafka refuses cannot become legal by trying again.
            throw DeliveryException.fatal("the topic for object '" + batch.objectName() + "' is '" + topic
                    + "', which Kafka refuses: a topic name is 1 to 249 letters, digits, '.', '_' or '-'", null);
        }
        byObject.putIfAbsent(batch.objectName(), Objects.requireNonNull(topic));
        return topic;
    }

    @Override
    public String toString() {
        return description;
    }
}
