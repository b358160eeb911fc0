-- script()
-- Leases, for engines on several instances (used only when coordination is configured):
-- one row per tracked object, held by one instance until expires_at (the database's clock);
-- epoch goes up each time the lease changes hands, and fences every write of its holder.
CREATE TABLE IF NOT EXISTS "tidemark"."sync_state_leases" (
    object_name text        PRIMARY KEY,
    holder      text        NOT NULL,   -- the instance id of the holder
    epoch       bigint      NOT NULL,   -- raised by every acquisition: the fencing token
    acquired_at timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,   -- free once passed; a clean close sets it to now
    in_flight   text                    -- the page its holder is delivering (JSON), see recordInFlight
);

-- One heartbeat per live engine instance: each takes its fair share of the objects.
CREATE TABLE IF NOT EXISTS "tidemark"."sync_state_instances" (
    instance_id text        PRIMARY KEY,
    object_set  text        NOT NULL,   -- hash of the tracked objects' names: equal sets share
    started_at  timestamptz NOT NULL,
    last_seen   timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,   -- counted as live until then
    destinations text                   -- its destinations' names (JSON): their positions hold
);

-- acquire()
-- Takes a free lease: no row yet, or an expired one. A concurrent taker waits on the row
-- lock, then finds it unexpired and takes nothing.
INSERT INTO "tidemark"."sync_state_leases" AS l (object_name, holder, epoch, acquired_at, expires_at)
VALUES (:name, :holder, 1, clock_timestamp(), clock_timestamp() + :ms * interval '1 millisecond')
ON CONFLICT (object_name) DO UPDATE
   SET holder = EXCLUDED.holder,
       epoch = l.epoch + 1,
       acquired_at = EXCLUDED.acquired_at,
       expires_at = EXCLUDED.expires_at
 WHERE l.expires_at <= clock_timestamp()
RETURNING epoch

-- renew()
-- Extends a lease its holder still has: same holder, same epoch, not yet expired.
UPDATE "tidemark"."sync_state_leases"
   SET expires_at = clock_timestamp() + :ms * interval '1 millisecond'
 WHERE object_name = :name AND holder = :holder AND epoch = :epoch
   AND expires_at > clock_timestamp()

-- release()
-- Hands a lease back: it expires now, so any instance may take it at once.
UPDATE "tidemark"."sync_state_leases"
   SET expires_at = clock_timestamp()
 WHERE object_name = :name AND holder = :holder AND epoch = :epoch
   AND expires_at > clock_timestamp()

-- fence()
-- The fence of every write a lease holder makes, run first in the transaction of the write;
-- 1 only while the holder still holds the lease at that epoch. It takes no lock, so that an
-- instance frozen in the middle of a write cannot hold up the takeover of its lease.
SELECT count(*)
  FROM "tidemark"."sync_state_leases"
 WHERE object_name = :name AND holder = :holder AND epoch = :epoch
   AND expires_at > clock_timestamp()

-- heartbeat()
INSERT INTO "tidemark"."sync_state_instances" AS i (instance_id, object_set, started_at, last_seen, expires_at,
                                destinations)
VALUES (:instance, :object_set, clock_timestamp(), clock_timestamp(), clock_timestamp() + :ms * interval '1 millisecond', :destinations)
ON CONFLICT (instance_id) DO UPDATE
   SET object_set = EXCLUDED.object_set,
       destinations = EXCLUDED.destinations,
       last_seen = EXCLUDED.last_seen,
       expires_at = EXCLUDED.expires_at

-- liveInstances()
-- The instances tracking the same objects share them: an instance that tracks other objects
-- (another application on the same store, or one mid-way through a reconfiguration) must not
-- shrink their fair share, or some of their objects would never be leased.
SELECT count(*) FROM "tidemark"."sync_state_instances" WHERE object_set = :object_set AND expires_at > clock_timestamp()

-- forgetExpiredInstances()
-- An instance that stopped sending heartbeats is gone; if it wakes up, its next heartbeat is back.
DELETE FROM "tidemark"."sync_state_instances" WHERE expires_at <= clock_timestamp()

-- leaveInstance()
DELETE FROM "tidemark"."sync_state_instances" WHERE instance_id = :instance

-- selectLiveLeases()
SELECT object_name, holder, epoch
  FROM "tidemark"."sync_state_leases"
 WHERE expires_at > clock_timestamp()
 ORDER BY object_name

-- recordInFlight()
-- The page the holder is about to deliver: an instance that takes the lease over after a failover
-- delivers that same page again first, under the same idempotency key. Fenced like every write.
UPDATE "tidemark"."sync_state_leases"
   SET in_flight = :page
 WHERE object_name = :name AND holder = :holder AND epoch = :epoch
   AND expires_at > clock_timestamp()

-- selectInFlight()
SELECT in_flight FROM "tidemark"."sync_state_leases" WHERE object_name = :name

-- probeInstances()
SELECT instance_id, object_set, destinations, expires_at FROM "tidemark"."sync_state_instances" WHERE instance_id = :name
