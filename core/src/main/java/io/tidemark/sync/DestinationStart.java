package io.tidemark.sync;

/**
 * Where a destination added to an object that already delivers starts: an explicit choice made when the destination
 * is registered ({@link SyncEngine.Builder#destination(String, io.tidemark.sync.spi.Destination, DeliveryPolicy,
 * DestinationStart)}). It matters only once: as soon as the destination has a position of its own, it continues
 * from there. On an object's very first cycle every destination starts together, as the object's
 * {@link InitialSync} says.
 */
public enum DestinationStart {
    /**
     * At the position of the object's most advanced destination: it receives the changes from then on, none of
     * the past ones. The default.
     */
    CURRENT_POSITION,
    /**
     * With a full export for this destination alone (the procedure called as on a first cycle, with
     * {@code "initial": true}); the other destinations do not see it. It then continues from the export's version.
     */
    FULL_EXPORT
}
