package io.tidemark.sync.spi;

import io.tidemark.sync.CheckReport;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Where the pages a destination refused until its {@link io.tidemark.sync.DeliveryPolicy} ran out of attempts are
 * kept: recorded by the engine, replayed to their destination through
 * {@link io.tidemark.sync.SyncEngine#deadLetters()}, and purged by age.
 *
 * <p><b>Order.</b> Lists and claims return letters in version order: by {@code fromVersion}, then page number,
 * then id.
 *
 * <p><b>Claims.</b> A replay first claims the letters it will send, as {@code claimant} until {@code until}; a
 * letter under a live claim (its {@code until} after the caller's {@code now}) is claimed by no one else, so two
 * replays, in one process or in two, never send the same letter. A claim ends when the replay
 * {@linkplain #resolve(long, String) resolves} the letter (its destination accepted it: the letter is deleted),
 * {@linkplain #releaseFailed records a failure}, {@linkplain #release releases} it untried, or when {@code until}
 * passes (a replayer that died frees its letters that way).
 */
public interface DeadLetterStore {

    /**
     * Stores {@code letter}, or, when a letter for the same object, destination and idempotency key is stored
     * already, merges it into that one ({@link DeadLetter#mergedWith}: one more attempt, its failure appended, the
     * last failure time moved). Returns the stored letter with its id. Safe against concurrent calls for the same
     * page: they end in one letter.
     */
    DeadLetter record(DeadLetter letter);

    /** The object's letters for every destination, in version order. */
    List<DeadLetter> list(String objectName);

    /** The object's letters for one destination, in version order. */
    List<DeadLetter> list(String objectName, String destination);

    /** The letter with that id, if stored. */
    Optional<DeadLetter> find(long id);

    /** Claims the letter with that id unless another claim on it is live; empty if none or claimed. */
    Optional<DeadLetter> claim(long id, String claimant, Instant now, Instant until);

    /**
     * Claims up to {@code limit} of the destination's unclaimed letters for the object, in version order. Claims
     * nothing while another claimant holds a live claim on one of that destination's letters, so that two replays
     * of one destination cannot overtake each other's versions; the same claimant may claim the next ones.
     */
    List<DeadLetter> claimNext(String objectName, String destination, String claimant, Instant now, Instant until,
                               int limit);

    /**
     * Deletes the letter {@code claimant} holds once its destination accepted it; false if the letter is gone or
     * no longer claimed by {@code claimant}.
     */
    boolean resolve(long id, String claimant);

    /**
     * Deletes the letter for that page, claimed or not; for the engine, when a destination that was blocked on
     * the page accepts it. False if there was none.
     */
    boolean resolve(String objectName, String destination, String idempotencyKey);

    /** Ends {@code claimant}'s claim on the letter without a delivery attempt; false if it did not hold one. */
    boolean release(long id, String claimant);

    /**
     * Records that a replay by {@code claimant} failed ({@link DeadLetter#withFailure}) and ends its claim; false
     * if it did not hold one.
     */
    boolean releaseFailed(long id, String claimant, DeadLetter.Failure failure);

    /** Removes a letter without delivering it, claimed or not; false if there was none with that id. */
    boolean delete(long id);

    /** Deletes every letter whose last failure is before {@code olderThan}; returns how many. */
    int purge(Instant olderThan);

    /**
     * The store's part of the engine's start-up check ({@link io.tidemark.sync.SyncEngine#check()}): that it can
     * be reached and read. A store that cannot be reached is one problem with
     * {@link io.tidemark.sync.ErrorCode#CONNECTION_FAILED}. Writes nothing. The default checks nothing.
     */
    default List<CheckReport.Problem> check() {
        return List.of();
    }
}
