package io.tidemark.sync.spi;

import io.tidemark.sync.CheckReport;

import java.util.List;

/**
 * Where pages refused by a destination go when its {@link io.tidemark.sync.DeliveryPolicy} says
 * "dead-letter and move on". Only then does the watermark move past changes a destination did not accept.
 */
public interface DeadLetterStore {

    /** Stores the letter and returns it with its assigned id. */
    DeadLetter add(DeadLetter letter);

    /** The object's letters, oldest first. */
    List<DeadLetter> list(String objectName);

    /** Removes a letter once it has been dealt with; false if there was none with that id. */
    boolean delete(long id);

    /**
     * The store's part of the engine's start-up check ({@link io.tidemark.sync.SyncEngine#check()}): that it can
     * be reached and read. A store that cannot be reached is one problem with
     * {@link io.tidemark.sync.ErrorCode#CONNECTION_FAILED}. Writes nothing. The default checks nothing.
     */
    default List<CheckReport.Problem> check() {
        return List.of();
    }
}
