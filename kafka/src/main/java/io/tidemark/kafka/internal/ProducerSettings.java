package io.tidemark.kafka.internal;

import io.tidemark.sync.internal.config.Checks;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The producer's configuration: the user's properties over the destination's defaults ({@code acks=all},
 * {@code enable.idempotence=true}), with the few properties the destination's guarantees rest on checked rather
 * than silently overridden.
 */
public final class ProducerSettings {

    /** Properties the destination sets itself; a user value for one is refused. */
    static final Set<String> OWNED = Set.of(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
            ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ProducerConfig.TRANSACTIONAL_ID_CONFIG);

    private ProducerSettings() {
    }

    /**
     * The producer's properties, or violations recorded in {@code checks}: a serializer or transactional id set
     * as a property, idempotence switched off, {@code acks} other than {@code all}, no bootstrap servers.
     */
    public static Map<String, Object> of(Map<String, Object> user, String bootstrapServers, String transactionalId,
                                         Checks checks) {
        Map<String, Object> props = new LinkedHashMap<>();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        for (Map.Entry<String, Object> e : user.entrySet()) {
            String name = e.getKey();
            if (OWNED.contains(name)) {
                checks.add("producer property " + name + " is set by the destination"
                        + (name.equals(ProducerConfig.TRANSACTIONAL_ID_CONFIG)
                        ? ": use transactionalId(...)" : ": records are bytes (the key and the change's JSON)"));
                continue;
            }
            checks.that(e.getValue() != null, "producer property " + name + " must not be null");
            props.put(name, e.getValue());
        }
        String idempotence = String.valueOf(props.get(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG)).trim();
        checks.that(idempotence.equalsIgnoreCase("true"), "producer property enable.idempotence must stay true"
                + " (was " + idempotence + "): without it a retried send can reorder or duplicate a row's changes");
        String acks = String.valueOf(props.get(ProducerConfig.ACKS_CONFIG)).trim();
        checks.that(acks.equalsIgnoreCase("all") || acks.equals("-1"), "producer property acks must stay all (was "
                + acks + "): a page is accepted only once every in-sync replica has its records");
        Object fromProperties = props.get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG);
        if (bootstrapServers != null) {
            checks.that(fromProperties == null || fromProperties.equals(bootstrapServers), "bootstrapServers ("
                    + bootstrapServers + ") and producer property bootstrap.servers (" + fromProperties
                    + ") differ: set one of them");
            checks.that(!bootstrapServers.isBlank(), "bootstrapServers must not be blank");
            props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        } else {
            checks.that(fromProperties != null, "bootstrapServers must be set (or producer property"
                    + " bootstrap.servers): host:port of one or more brokers");
        }
        if (transactionalId != null) {
            checks.that(!transactionalId.isBlank(), "transactionalId must not be blank");
            props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        }
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return props;
    }
}
