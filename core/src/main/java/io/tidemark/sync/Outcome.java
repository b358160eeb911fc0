package io.tidemark.sync;

/** How one object's cycle ended. */
public enum Outcome {
    /** Changes were delivered to every destination and the watermark moved. */
    DELIVERED,
    /** The procedure reported no changes; the watermark moved only if the reported version went up. */
    NO_CHANGES,
    /** First cycle of an incremental object: the starting version was recorded, nothing was delivered. */
    SEEDED,
    /** The call or its response failed (bad response, database error); nothing was delivered or stored. */
    FAILED,
    /** A destination refused a batch; the watermark stays and the same changes are offered again. */
    BLOCKED,
    /** The object is paused; nothing was called. */
    PAUSED,
    /**
     * With coordination: this engine instance does not hold the object's lease (another instance does, or will
     * take it); nothing was called. Not a failure.
     */
    LEASED_ELSEWHERE
}
