package io.tidemark.sync.internal.engine;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.spi.SyncListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;

/** Tells the listeners about each attempt to hand a page to a destination; a listener that throws is logged. */
final class DeliverySignals {

    private static final Logger LOG = LoggerFactory.getLogger(DeliverySignals.class);

    private final List<SyncListener> listeners;

    DeliverySignals(List<SyncListener> listeners) {
        this.listeners = listeners;
    }

    /** {@code failure} is null when the destination accepted the page. */
    void attempted(String objectName, String destination, ChangeBatch page, long startedNanos, Exception failure) {
        if (listeners.isEmpty()) {
            return;
        }
        Duration took = Duration.ofNanos(System.nanoTime() - startedNanos);
        for (SyncListener listener : listeners) {
            try {
                listener.onDelivery(objectName, destination, page, took, failure);
            } catch (RuntimeException e) {
                LOG.warn("[{}] a listener failed on a delivery to '{}': {}", objectName, destination, e.toString());
            }
        }
    }
}
