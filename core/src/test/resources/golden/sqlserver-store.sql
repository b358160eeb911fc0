-- createScript()
-- Tidemark store: one row per tracked object (its watermark and bookkeeping),
-- one row per destination of an object (its position),
-- and the pages a destination refused under a dead-letter policy.
-- Safe to run again: each object is created only when it is missing.
IF SCHEMA_ID(N'tidemark') IS NULL
    EXEC (N'CREATE SCHEMA [tidemark]');
GO

IF OBJECT_ID(N'[tidemark].[sync_state]', N'U') IS NULL
CREATE TABLE [tidemark].[sync_state] (
    object_name     NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL PRIMARY KEY,
    version         BIGINT            NULL,              -- NULL until the first successful cycle
    source_identity NVARCHAR(1000) COLLATE Latin1_General_100_BIN2 NULL, -- the procedure that produced the version
    paused          BIT               NOT NULL DEFAULT 0,
    last_moved_at   DATETIMEOFFSET(6) NULL,
    last_polled_at  DATETIMEOFFSET(6) NULL,
    last_error      NVARCHAR(MAX)     NULL,
    updated_at      DATETIMEOFFSET(6) NOT NULL DEFAULT SYSDATETIMEOFFSET()
);
GO

-- A table created before watermarks recorded their source gains the column here.
IF COL_LENGTH(N'[tidemark].[sync_state]', N'source_identity') IS NULL
    ALTER TABLE [tidemark].[sync_state] ADD source_identity NVARCHAR(1000) COLLATE Latin1_General_100_BIN2 NULL;
GO

-- An object whose watermark was stored before positions were kept has no rows here:
-- every destination then stands at the object's watermark until its next delivery.
IF OBJECT_ID(N'[tidemark].[sync_state_positions]', N'U') IS NULL
CREATE TABLE [tidemark].[sync_state_positions] (
    object_name NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    destination NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    version     BIGINT            NULL,    -- every change up to it was accepted; NULL: none yet
    paused      BIT               NOT NULL DEFAULT 0,
    updated_at  DATETIMEOFFSET(6) NOT NULL DEFAULT SYSDATETIMEOFFSET(),
    PRIMARY KEY (object_name, destination)
);
GO

-- A dead-letter table created by an earlier Tidemark is upgraded by JdbcDeadLetterStore.upgrade();
-- this script stops rather than run over it.
IF COL_LENGTH(N'[tidemark].[dead_letters]', N'changes') IS NOT NULL
    THROW 50000, N'The dead-letter table [tidemark].[dead_letters] has the layout of an earlier Tidemark: upgrade it with JdbcDeadLetterStore.upgrade()', 1;
GO

-- One row per page a destination refused until its policy ran out of attempts; the same page
-- refused again updates its row (attempts, failures, last_failed_at) instead of adding one.
IF OBJECT_ID(N'[tidemark].[dead_letters]', N'U') IS NULL
CREATE TABLE [tidemark].[dead_letters] (
    id              BIGINT IDENTITY(1, 1) NOT NULL PRIMARY KEY,
    object_name     NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    destination     NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    idempotency_key VARCHAR(64) COLLATE Latin1_General_100_BIN2 NOT NULL, -- the page's key
    batch_id        NVARCHAR(MAX)     NOT NULL,
    page_number     INT               NOT NULL,
    page_count      INT               NOT NULL, -- 0 for letters kept before it was recorded
    from_version    BIGINT            NOT NULL,
    to_version      BIGINT            NOT NULL,
    sync_type       NVARCHAR(10)      NOT NULL,
    reason_code     INT               NOT NULL,
    change_count    INT               NOT NULL,
    envelope        NVARCHAR(MAX)     NOT NULL CHECK (ISJSON(envelope) = 1), -- the page as offered
    attempts        INT               NOT NULL,
    failures        NVARCHAR(MAX)     NOT NULL CHECK (ISJSON(failures) = 1), -- the last 20
    first_failed_at DATETIMEOFFSET(6) NOT NULL,
    last_failed_at  DATETIMEOFFSET(6) NOT NULL,
    claimed_by      NVARCHAR(200)     NULL, -- the replay holding the letter ...
    claimed_until   DATETIMEOFFSET(6) NULL  -- ... until then (a dead replayer's claim lapses)
);
GO

IF INDEXPROPERTY(OBJECT_ID(N'[tidemark].[dead_letters]'), N'dead_letters_page_key', N'IndexID') IS NULL
    CREATE UNIQUE INDEX [dead_letters_page_key] ON [tidemark].[dead_letters] (object_name, destination, idempotency_key);
GO

IF INDEXPROPERTY(OBJECT_ID(N'[tidemark].[dead_letters]'), N'dead_letters_order_idx', N'IndexID') IS NULL
    CREATE INDEX [dead_letters_order_idx] ON [tidemark].[dead_letters] (object_name, destination, from_version, page_number);
GO

IF INDEXPROPERTY(OBJECT_ID(N'[tidemark].[dead_letters]'), N'dead_letters_age_idx', N'IndexID') IS NULL
    CREATE INDEX [dead_letters_age_idx] ON [tidemark].[dead_letters] (last_failed_at);
GO

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

-- selectState()
SELECT object_name, version, source_identity, paused, last_moved_at, last_polled_at, last_error
  FROM [tidemark].[sync_state]
 WHERE object_name = :name

-- selectAllStates()
SELECT object_name, version, source_identity, paused, last_moved_at, last_polled_at, last_error
  FROM [tidemark].[sync_state]
 ORDER BY object_name

-- advanceFromNothing()
MERGE [tidemark].[sync_state] WITH (HOLDLOCK) AS s
USING (SELECT :name AS object_name) AS src ON s.object_name = src.object_name
 WHEN MATCHED AND s.version IS NULL THEN UPDATE
      SET version = :version,
          source_identity = :source,
          last_moved_at = :at,
          last_polled_at = :at,
          last_error = NULL,
          updated_at = :at
 WHEN NOT MATCHED THEN INSERT
      (object_name, version, source_identity, paused, last_moved_at, last_polled_at, last_error, updated_at)
      VALUES (:name, :version, :source, 0, :at, :at, NULL, :at);

-- advanceFrom()
UPDATE [tidemark].[sync_state]
   SET version = :version,
       source_identity = :source,
       last_moved_at = CASE WHEN version = :version THEN last_moved_at ELSE :at END,
       last_polled_at = :at,
       last_error = NULL,
       updated_at = :at
 WHERE object_name = :name AND version = :expected AND version <= :version
   AND (source_identity IS NULL OR source_identity = :source)

-- recordPoll()
MERGE [tidemark].[sync_state] WITH (HOLDLOCK) AS s
USING (SELECT :name AS object_name) AS src ON s.object_name = src.object_name
 WHEN MATCHED THEN UPDATE
      SET last_polled_at = :at,
          last_error = :error,
          updated_at = :at
 WHEN NOT MATCHED THEN INSERT (object_name, version, paused, last_polled_at, last_error, updated_at)
      VALUES (:name, NULL, 0, :at, :error, :at);

-- setPaused()
MERGE [tidemark].[sync_state] WITH (HOLDLOCK) AS s
USING (SELECT :name AS object_name) AS src ON s.object_name = src.object_name
 WHEN MATCHED THEN UPDATE
      SET paused = :paused,
          updated_at = :at
 WHEN NOT MATCHED THEN INSERT (object_name, version, paused, updated_at)
      VALUES (:name, NULL, :paused, :at);

-- adoptSource()
UPDATE [tidemark].[sync_state]
   SET source_identity = :source,
       updated_at = :at
 WHERE object_name = :name AND version IS NOT NULL

-- reset()
UPDATE [tidemark].[sync_state]
   SET version = NULL,
       source_identity = NULL,
       last_moved_at = :at,
       last_error = NULL,
       updated_at = :at
 WHERE object_name = :name

-- selectPositions()
SELECT object_name, destination, version, paused
  FROM [tidemark].[sync_state_positions]
 WHERE object_name = :name
 ORDER BY destination

-- selectAllPositions()
SELECT object_name, destination, version, paused
  FROM [tidemark].[sync_state_positions]
 ORDER BY object_name, destination

-- insertPosition()
MERGE [tidemark].[sync_state_positions] WITH (HOLDLOCK) AS p
USING (SELECT :name AS object_name, :destination AS destination) AS src
   ON p.object_name = src.object_name AND p.destination = src.destination
 WHEN MATCHED AND p.version IS NULL THEN UPDATE
      SET version = :version,
          updated_at = :at
 WHEN NOT MATCHED THEN INSERT (object_name, destination, version, paused, updated_at)
      VALUES (:name, :destination, :version, 0, :at);

-- advancePosition()
UPDATE [tidemark].[sync_state_positions]
   SET version = :version,
       updated_at = :at
 WHERE object_name = :name AND destination = :destination
   AND version = :expected AND version <= :version

-- setDestinationPaused()
MERGE [tidemark].[sync_state_positions] WITH (HOLDLOCK) AS p
USING (SELECT :name AS object_name, :destination AS destination) AS src
   ON p.object_name = src.object_name AND p.destination = src.destination
 WHEN MATCHED THEN UPDATE
      SET paused = :paused,
          updated_at = :at
 WHEN NOT MATCHED THEN INSERT (object_name, destination, version, paused, updated_at)
      VALUES (:name, :destination, NULL, :paused, :at);

-- resetPositions()
UPDATE [tidemark].[sync_state_positions]
   SET version = NULL,
       updated_at = :at
 WHERE object_name = :name
