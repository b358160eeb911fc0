-- script()
-- Leases, for engines on several instances (used only when coordination is configured):
-- one row per tracked object, held by one instance until expires_at (the server's UTC clock);
-- epoch goes up each time the lease changes hands, and fences every write of its holder.
IF OBJECT_ID(N'[tidemark].[sync_state_leases]', N'U') IS NULL
CREATE TABLE [tidemark].[sync_state_leases] (
    object_name NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL PRIMARY KEY,
    holder      NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,   -- the instance id of the holder
    epoch       BIGINT        NOT NULL,   -- raised by every acquisition: the fencing token
    acquired_at DATETIME2     NOT NULL,   -- UTC
    expires_at  DATETIME2     NOT NULL,   -- UTC; free once passed, a clean close sets it to now
    in_flight   NVARCHAR(MAX) NULL        -- the page its holder is delivering (JSON), see recordInFlight
);
GO

-- One heartbeat per live engine instance: each takes its fair share of the objects.
IF OBJECT_ID(N'[tidemark].[sync_state_instances]', N'U') IS NULL
CREATE TABLE [tidemark].[sync_state_instances] (
    instance_id NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL PRIMARY KEY,
    object_set  NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,   -- hash of the tracked objects' names: equal sets share
    started_at  DATETIME2     NOT NULL,   -- UTC
    last_seen   DATETIME2     NOT NULL,   -- UTC
    expires_at  DATETIME2     NOT NULL,   -- UTC; counted as live until then
    destinations NVARCHAR(MAX) NULL       -- its destinations' names (JSON): their positions hold
);
GO

-- acquire()
-- Takes a free lease: no row yet, or an expired one. HOLDLOCK makes a concurrent taker wait,
-- then find the lease unexpired and take nothing.
MERGE [tidemark].[sync_state_leases] WITH (HOLDLOCK) AS l
USING (SELECT :name AS object_name) AS src ON l.object_name = src.object_name
 WHEN MATCHED AND l.expires_at <= SYSUTCDATETIME() THEN UPDATE
      SET holder = :holder,
          epoch = l.epoch + 1,
          acquired_at = SYSUTCDATETIME(),
          expires_at = DATEADD(millisecond, :ms, SYSUTCDATETIME())
 WHEN NOT MATCHED THEN INSERT (object_name, holder, epoch, acquired_at, expires_at)
      VALUES (:name, :holder, 1, SYSUTCDATETIME(), DATEADD(millisecond, :ms, SYSUTCDATETIME()))
OUTPUT inserted.epoch;

-- renew()
-- Extends a lease its holder still has: same holder, same epoch, not yet expired.
UPDATE [tidemark].[sync_state_leases]
   SET expires_at = DATEADD(millisecond, :ms, SYSUTCDATETIME())
 WHERE object_name = :name AND holder = :holder AND epoch = :epoch
   AND expires_at > SYSUTCDATETIME()

-- release()
-- Hands a lease back: it expires now, so any instance may take it at once.
UPDATE [tidemark].[sync_state_leases]
   SET expires_at = SYSUTCDATETIME()
 WHERE object_name = :name AND holder = :holder AND epoch = :epoch
   AND expires_at > SYSUTCDATETIME()

-- fence()
-- The fence of every write a lease holder makes, run first in the transaction of the write;
-- 1 only while the holder still holds the lease at that epoch. It takes no lock, so that an
-- instance frozen in the middle of a write cannot hold up the takeover of its lease.
SELECT count(*)
  FROM [tidemark].[sync_state_leases]
 WHERE object_name = :name AND holder = :holder AND epoch = :epoch
   AND expires_at > SYSUTCDATETIME()

-- heartbeat()
MERGE [tidemark].[sync_state_instances] WITH (HOLDLOCK) AS i
USING (SELECT :instance AS instance_id) AS src ON i.instance_id = src.instance_id
 WHEN MATCHED THEN UPDATE
      SET object_set = :object_set,
          destinations = :destinations,
          last_seen = SYSUTCDATETIME(),
          expires_at = DATEADD(millisecond, :ms, SYSUTCDATETIME())
 WHEN NOT MATCHED THEN INSERT (instance_id, object_set, started_at, last_seen, expires_at,
                               destinations)
      VALUES (:instance, :object_set, SYSUTCDATETIME(), SYSUTCDATETIME(), DATEADD(millisecond, :ms, SYSUTCDATETIME()),
              :destinations);

-- liveInstances()
-- The instances tracking the same objects share them: an instance that tracks other objects
-- (another application on the same store, or one mid-way through a reconfiguration) must not
-- shrink their fair share, or some of their objects would never be leased.
SELECT count(*) FROM [tidemark].[sync_state_instances] WHERE object_set = :object_set AND expires_at > SYSUTCDATETIME()

-- forgetExpiredInstances()
-- An instance that stopped sending heartbeats is gone; if it wakes up, its next heartbeat is back.
DELETE FROM [tidemark].[sync_state_instances] WHERE expires_at <= SYSUTCDATETIME()

-- leaveInstance()
DELETE FROM [tidemark].[sync_state_instances] WHERE instance_id = :instance

-- selectLiveLeases()
SELECT object_name, holder, epoch
  FROM [tidemark].[sync_state_leases]
 WHERE expires_at > SYSUTCDATETIME()
 ORDER BY object_name

-- recordInFlight()
-- The page the holder is about to deliver: an instance that takes the lease over after a failover
-- delivers that same page again first, under the same idempotency key. Fenced like every write.
UPDATE [tidemark].[sync_state_leases]
   SET in_flight = :page
 WHERE object_name = :name AND holder = :holder AND epoch = :epoch
   AND expires_at > SYSUTCDATETIME()

-- selectInFlight()
SELECT in_flight FROM [tidemark].[sync_state_leases] WHERE object_name = :name

-- probeInstances()
SELECT instance_id, object_set, destinations, expires_at FROM [tidemark].[sync_state_instances] WHERE instance_id = :name
