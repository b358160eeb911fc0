package io.tidemark.sync;

import io.tidemark.sync.spi.DeadLetter;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The engine's dead letters ({@link SyncEngine#deadLetters()}): list them, replay them to the destination that
 * refused them, and purge them by age. Without a dead-letter store configured, every call fails with
 * {@link ErrorCode#INVALID_CONFIGURATION}.
 *
 * <p><b>Replay</b> offers a letter's page, rebuilt from its envelope (same changes, same
 * {@link ChangeBatch#idempotencyKey()}), to <em>that letter's destination only</em>, once, on the caller's thread.
 * Accepted: the letter is deleted. Refused: the attempt and its error are recorded on the letter and it stays.
 * Letters are claimed before they are sent (a lease in the store), so two replays, in one engine or in two, never
 * send the same letter; a replayer that dies leaves a claim that lapses after {@link #CLAIM_LEASE}.
 */
public interface DeadLetters {

    /** How long a replay's claim on a letter lasts; a replay that is still running renews it letter by letter. */
    Duration CLAIM_LEASE = Duration.ofMinutes(5);

    /** The object's letters for every destination, in version order. */
    List<DeadLetter> list(String objectName);

    /** The object's letters for one destination, in version order. */
    List<DeadLetter> list(String objectName, String destination);

    /**
     * Replays one letter to its destination. Does nothing (an empty result) when the letter is gone or another
     * replay holds it ({@link ReplayResult#claimedElsewhere()}).
     */
    ReplayResult replay(long letterId);

    /**
     * Replays every letter of the object for {@code destination}, in version order, and stops at the first one the
     * destination refuses (the later ones stay, so the destination never receives them out of order). Claims
     * nothing while another replay of the same destination holds letters.
     */
    ReplayResult replayAll(String objectName, String destination);

    /** Deletes a letter without delivering it; false if there was none with that id. */
    boolean discard(long letterId);

    /** Deletes every letter whose last failure is more than {@code retention} ago; returns how many. */
    int purge(Duration retention);

    /** Deletes every letter whose last failure is before {@code olderThan}; returns how many. */
    int purge(Instant olderThan);
}
