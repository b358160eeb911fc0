package io.tidemark.sync;

/**
 * What went wrong, as a stable code a caller can switch on. Every {@link TidemarkException} carries one.
 *
 * <p>Codes are grouped by who usually has to act: the person configuring Tidemark, the author of a change
 * procedure, the operator of a destination or store, or the database administrator.
 */
public enum ErrorCode {

    // --- configuration: fix the code that builds Tidemark objects -------------------------------------
    /** A builder was given a value it cannot accept (null, negative, duplicate name, missing part). */
    INVALID_CONFIGURATION,
    /** A schema, table, column, function or procedure name is not a valid, safe identifier. */
    INVALID_IDENTIFIER,
    /** The engine was used in a state that does not allow the call (started twice, used after close). */
    ENGINE_STATE,
    /** A call named a tracked object the engine does not know. */
    UNKNOWN_OBJECT,
    /**
     * A call named a destination the engine does not deliver to (pausing or resuming one, a dead letter whose
     * destination was removed); check the name given to {@code destination(...)}.
     */
    UNKNOWN_DESTINATION,
    /**
     * The engine's start-up check ({@link SyncEngine#check()}, {@code SyncEngine.Builder#checkOnBuild}) found
     * problems; the message lists each with its own code (for example {@code CONNECTION_FAILED},
     * {@code PROCEDURE_NOT_FOUND}). Fix each and build again.
     */
    CHECK_FAILED,

    // --- the change procedure and its response: fix the procedure --------------------------------------
    /** The procedure or function does not exist, or is not callable the way the contract requires. */
    PROCEDURE_NOT_FOUND,
    /** The procedure exists but its signature does not match the contract (parameter name or type, result type). */
    PROCEDURE_SIGNATURE,
    /** The database refused the call for lack of a privilege. */
    PERMISSION_DENIED,
    /** The call ran longer than the configured command timeout and was cancelled. */
    PROCEDURE_TIMEOUT,
    /** The call failed inside the database for any other reason; the message carries the database's error. */
    PROCEDURE_FAILED,
    /** The procedure returned nothing: no row, a NULL, or an empty string. */
    EMPTY_RESPONSE,
    /** The response is not well-formed JSON. */
    MALFORMED_JSON,
    /** The response is JSON but breaks the contract (missing or non-integer version, Data not an array, ...). */
    INVALID_RESPONSE,

    // --- watermarks -----------------------------------------------------------------------------------
    /** A new watermark would be lower than the stored one; it was refused. */
    WATERMARK_REGRESSION,
    /** Another writer moved the watermark between this cycle's read and its write; nothing was stored. */
    WATERMARK_CONFLICT,
    /** The server could not report a starting watermark (for example Change Tracking is not enabled). */
    WATERMARK_UNAVAILABLE,
    /**
     * The stored watermark was produced by another procedure than the one the object now calls (the object was
     * renamed, or pointed at another function or table). Adopt the stored position or reset it explicitly.
     */
    WATERMARK_SOURCE_CHANGED,
    /**
     * With coordination, this instance no longer holds the object's lease (it expired while the instance was paused
     * or cut off, or another instance took it): the write or the delivery was refused and nothing changed. Nothing to
     * fix if it happens around a failover; if it keeps happening, lengthen the lease or find what stalls the instance.
     */
    LEASE_LOST,

    // --- delivery and storage -------------------------------------------------------------------------
    /** A destination refused a batch; the watermark stays where it was. */
    DESTINATION_FAILED,
    /** The watermark or dead-letter store could not be read or written. */
    STORE_FAILED,
    /**
     * A database could not be reached: the connection was refused, timed out or broke. The message names the
     * target; check the URL, the credentials and the network.
     */
    CONNECTION_FAILED,

    // --- database setup: the administrator has to act -------------------------------------------------
    /** Snapshot isolation is required but not allowed in the database (SQL Server). */
    SNAPSHOT_ISOLATION_DISABLED,
    /** Change Tracking is not enabled on the database or the table (SQL Server). */
    CHANGE_TRACKING_DISABLED,
    /**
     * Logical decoding is not available (PostgreSQL: {@code wal_level} is not {@code logical}, or the role lacks
     * the {@code REPLICATION} attribute): the log-based capture cannot run until the administrator enables it.
     */
    LOGICAL_DECODING_DISABLED,
    /** The stored watermark is older than what the server still keeps; the procedure must re-initialise. */
    WATERMARK_AGED_OUT,

    // --- generated database objects (outbox, history) -------------------------------------------------
    /** A table, column or object the generator needs does not exist or has an unsupported shape. */
    SCHEMA_UNSUPPORTED,
    /** Installed objects differ from what the configuration generates. */
    SCHEMA_DRIFT,
    /** A schema change cannot be applied automatically (for example a column type change). */
    SCHEMA_CHANGE_REFUSED,
    /** A query asked for history older than the retention horizon. */
    HISTORY_PRUNED,

    // --- anything else the database or the machine says -----------------------------------------------
    /**
     * A statement failed in the database for a reason no other code covers (an installer, a maintenance step, a
     * history query, a test fixture). The message says what was being done and carries the database's error.
     */
    DATABASE_ERROR,
    /**
     * A local file or process could not be used: a response could not be spooled to the temporary directory (disk
     * full, no permission), an embedded server could not start. The message names what and why.
     */
    IO_FAILED,

    /** Anything not covered above; the message and the cause say more. */
    INTERNAL
}
