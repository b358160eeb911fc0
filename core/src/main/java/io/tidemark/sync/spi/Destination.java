package io.tidemark.sync.spi;

import io.tidemark.sync.ChangeBatch;

/**
 * Where changes go. The engine calls {@link #deliver} once per page, in order, from one thread at a time per
 * tracked object.
 *
 * <p>Returning normally means "accepted". Throwing anything means "refused": by default the cycle stops, the
 * watermark stays, and the same changes are offered again next cycle (see
 * {@link io.tidemark.sync.DeliveryPolicy} for retries and dead-lettering). Because changes can be offered
 * again, a destination must tolerate duplicates; {@link ChangeBatch#batchId()} helps.
 */
@FunctionalInterface
public interface Destination {

    void deliver(ChangeBatch batch) throws Exception;
}
