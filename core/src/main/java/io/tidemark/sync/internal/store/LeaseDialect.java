package io.tidemark.sync.internal.store;

import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * The SQL of the lease tables next to the watermark table: one lease row per tracked object (holder, epoch,
 * expiry) and one heartbeat row per live engine instance. Every expiry is computed and compared on the database's
 * clock, never on a host's: instances whose clocks disagree still agree on who holds what.
 *
 * <p>What is plain SQL on both databases is built here (the statements differ only in the clock function and
 * in how a duration is added to it); the subclasses give those two, the DDL and the upsert that takes a lease.
 * Durations are bound in milliseconds ({@code :ms}).
 */
public abstract class LeaseDialect {

    /** The lease table next to the state table: its name followed by this. */
    public static final String LEASES_SUFFIX = "_leases";
    /** The instance heartbeat table next to the state table: its name followed by this. */
    public static final String INSTANCES_SUFFIX = "_instances";

    /** The lease table, quoted and schema-qualified. */
    protected final String leases;
    /** The heartbeat table, quoted and schema-qualified. */
    protected final String instances;

    private final String renew;
    private final String release;
    private final String fence;
    private final String liveInstances;
    private final String forgetExpiredInstances;
    private final String leaveInstance;
    private final String selectLiveLeases;
    private final String liveDestinations;
    private final String recordInFlight;
    private final String selectInFlight;

    protected LeaseDialect(String leases, String instances) {
        this.leases = leases;
        this.instances = instances;
        this.renew = SqlTemplate.of("""
                -- Extends a lease its holder still has: same holder, same epoch, not yet expired.
                UPDATE {{leases}}
                   SET expires_at = {{expiry}}
                 WHERE object_name = :name AND holder = :holder AND epoch = :epoch
                   AND expires_at > {{now}}""")
                .with("leases", leases).with("expiry", expiry()).with("now", now()).render();
        this.release = SqlTemplate.of("""
                -- Hands a lease back: it expires now, so any instance may take it at once.
                UPDATE {{leases}}
                   SET expires_at = {{now}}
                 WHERE object_name = :name AND holder = :holder AND epoch = :epoch
                   AND expires_at > {{now}}""")
                .with("leases", leases).with("now", now()).render();
        this.fence = SqlTemplate.of("""
                -- The fence of every write a lease holder makes, run first in the transaction of the write;
                -- 1 only while the holder still holds the lease at that epoch. It takes no lock, so that an
                -- instance frozen in the middle of a write cannot hold up the takeover of its lease.
                SELECT count(*)
                  FROM {{leases}}
                 WHERE object_name = :name AND holder = :holder AND epoch = :epoch
                   AND expires_at > {{now}}""")
                .with("leases", leases).with("now", now()).render();
        this.liveInstances = SqlTemplate.of("""
                -- The instances tracking the same objects share them: an instance that tracks other objects
                -- (another application on the same store, or one mid-way through a reconfiguration) must not
                -- shrink their fair share, or some of their objects would never be leased.
                SELECT count(*) FROM {{instances}} WHERE object_set = :object_set AND expires_at > {{now}}""")
                .with("instances", instances).with("now", now()).render();
        this.forgetExpiredInstances = SqlTemplate.of("""
                -- An instance that stopped sending heartbeats is gone; if it wakes up, its next heartbeat is back.
                DELETE FROM {{instances}} WHERE expires_at <= {{now}}""")
                .with("instances", instances).with("now", now()).render();
        this.leaveInstance = SqlTemplate.of("""
                DELETE FROM {{instances}} WHERE instance_id = :instance""")
                .with("instances", instances).render();
        this.selectLiveLeases = SqlTemplate.of("""
                SELECT object_name, holder, epoch
                  FROM {{leases}}
                 WHERE expires_at > {{now}}
                 ORDER BY object_name""")
                .with("leases", leases).with("now", now()).render();
        this.liveDestinations = SqlTemplate.of("""
                -- The destinations of every live instance, whatever objects it tracks (leases are per object, so
                -- an instance with another object set still takes this object's lease): a stored position of one
                -- of them holds the object's watermark back, even on an instance that does not deliver to it.
                SELECT destinations FROM {{instances}}
                 WHERE expires_at > {{now}} AND destinations IS NOT NULL""")
                .with("instances", instances).with("now", now()).render();
        this.recordInFlight = SqlTemplate.of("""
                -- The page the holder is about to deliver: an instance that takes the lease over after a failover
                -- delivers that same page again first, under the same idempotency key. Fenced like every write.
                UPDATE {{leases}}
                   SET in_flight = :page
                 WHERE object_name = :name AND holder = :holder AND epoch = :epoch
                   AND expires_at > {{now}}""")
                .with("leases", leases).with("now", now()).render();
        this.selectInFlight = SqlTemplate.of("""
                SELECT in_flight FROM {{leases}} WHERE object_name = :name""")
                .with("leases", leases).render();
    }

    /**
     * Records the page its holder is about to deliver (the page in flight), with the fence in the same statement:
     * 1 row while the holder still holds the lease at that epoch, 0 when it was lost (and then nothing is written
     * and the page must not be delivered).
     */
    public String recordInFlight() {
        return recordInFlight;
    }

    /** The destination names (a JSON array per row) of every live instance. */
    public String liveDestinations() {
        return liveDestinations;
    }

    /** The start-up check's read of the heartbeat table (one {@code :name} parameter, matching nothing). */
    public String probeInstances() {
        return SqlTemplate.of("""
                SELECT instance_id, object_set, destinations, expires_at FROM {{instances}} WHERE instance_id = :name""")
                .with("instances", instances).render();
    }

    /** The heartbeat table, quoted and schema-qualified. */
    public String instanceTable() {
        return instances;
    }

    /** The page in flight the object's last holder recorded (null when none): read by the instance that takes it. */
    public String selectInFlight() {
        return selectInFlight;
    }

    /** The lease table, quoted and schema-qualified: two stores fence against the same one if this is equal. */
    public String leaseTable() {
        return leases;
    }

    /** The database's clock at the moment the statement runs, in UTC on SQL Server. */
    protected abstract String now();

    /** The database's clock plus {@code :ms} milliseconds. */
    protected abstract String expiry();

    /** DDL that creates both tables if missing, for the store's script. */
    public abstract String script();

    /** Creates whichever of the two tables is missing (caller holds the store's DDL lock). */
    abstract void createIfMissing(Connection c) throws SQLException;

    /**
     * Takes the object's lease for {@code :holder} for {@code :ms} where no one holds it (no row, or an expired one),
     * raising its epoch; returns the new epoch as its only column, or no row when someone else holds it.
     */
    public abstract String acquire();

    /**
     * Records {@code :instance}, tracking object set {@code :object_set} and delivering to {@code :destinations}
     * (their names as a JSON array), as alive for {@code :ms} more milliseconds (insert or update).
     */
    public abstract String heartbeat();

    /** The statement that extends a lease; 1 row when still held, 0 when it was lost. */
    public String renew() {
        return renew;
    }

    /** The statement that hands a lease back; 1 row when it was still held. */
    public String release() {
        return release;
    }

    /** The fence of a holder's write: a count, 1 when the write may go ahead, 0 when the lease was lost. */
    public String fence() {
        return fence;
    }

    /** How many instances tracking object set {@code :object_set} sent a heartbeat that has not expired. */
    public String liveInstances() {
        return liveInstances;
    }

    public String forgetExpiredInstances() {
        return forgetExpiredInstances;
    }

    /** Removes {@code :instance}'s heartbeat: a clean close, so the others count one instance less at once. */
    public String leaveInstance() {
        return leaveInstance;
    }

    /** Every lease that has not expired: object name, holder, epoch. */
    public String selectLiveLeases() {
        return selectLiveLeases;
    }
}
