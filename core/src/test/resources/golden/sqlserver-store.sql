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

IF OBJECT_ID(N'[tidemark].[dead_letters]', N'U') IS NULL
BEGIN
    CREATE TABLE [tidemark].[dead_letters] (
        id           BIGINT IDENTITY(1, 1) NOT NULL PRIMARY KEY,
        object_name  NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
        destination  NVARCHAR(MAX)     NOT NULL,
        batch_id     NVARCHAR(MAX)     NOT NULL,
        page_number  INT               NOT NULL,
        from_version BIGINT            NOT NULL,
        to_version   BIGINT            NOT NULL,
        sync_type    NVARCHAR(10)      NOT NULL,
        reason_code  INT               NOT NULL,
        change_count INT               NOT NULL,
        changes      NVARCHAR(MAX)     NOT NULL CHECK (ISJSON(changes) = 1), -- the page, as returned
        error        NVARCHAR(MAX)     NOT NULL,
        created_at   DATETIMEOFFSET(6) NOT NULL
    );
    CREATE INDEX [dead_letters_object_idx] ON [tidemark].[dead_letters] (object_name, id);
END;
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

-- insertDeadLetter()
INSERT INTO [tidemark].[dead_letters] (object_name, destination, batch_id, page_number, from_version, to_version,
       sync_type, reason_code, change_count, changes, error, created_at)
VALUES (:objectName, :destination, :batchId, :pageNumber, :fromVersion, :toVersion,
       :syncType, :reasonCode, :changeCount, :changes, :error, :createdAt)

-- selectDeadLetters()
SELECT id, object_name, destination, batch_id, page_number, from_version, to_version, sync_type,
       reason_code, change_count, changes, error, created_at
  FROM [tidemark].[dead_letters]
 WHERE object_name = :name
 ORDER BY id

-- deleteDeadLetter()
DELETE FROM [tidemark].[dead_letters]
 WHERE id = :id
