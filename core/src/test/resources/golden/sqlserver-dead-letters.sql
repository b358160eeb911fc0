-- script()
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

-- insert()
INSERT INTO [tidemark].[dead_letters] (object_name, destination, idempotency_key, batch_id, page_number, page_count,
       from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures,
       first_failed_at, last_failed_at)
VALUES (:objectName, :destination, :key, :batchId, :pageNumber, :pageCount,
       :fromVersion, :toVersion, :syncType, :reasonCode, :changeCount, :envelope,
       :attempts, :failures, :firstFailedAt, :lastFailedAt)

-- selectPageForUpdate()
SELECT id, object_name, destination, idempotency_key, batch_id, page_number, page_count, from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures, first_failed_at, last_failed_at
  FROM [tidemark].[dead_letters] WITH (UPDLOCK, HOLDLOCK)
 WHERE object_name = :name AND destination = :destination AND idempotency_key = :key

-- updateFailures()
UPDATE [tidemark].[dead_letters]
   SET attempts = :attempts,
       failures = :failures,
       first_failed_at = :firstFailedAt,
       last_failed_at = :lastFailedAt
 WHERE id = :id

-- selectByObject()
SELECT id, object_name, destination, idempotency_key, batch_id, page_number, page_count, from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures, first_failed_at, last_failed_at
  FROM [tidemark].[dead_letters]
 WHERE object_name = :name
 ORDER BY from_version, page_number, id

-- selectByDestination()
SELECT id, object_name, destination, idempotency_key, batch_id, page_number, page_count, from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures, first_failed_at, last_failed_at
  FROM [tidemark].[dead_letters]
 WHERE object_name = :name AND destination = :destination
 ORDER BY from_version, page_number, id

-- selectById()
SELECT id, object_name, destination, idempotency_key, batch_id, page_number, page_count, from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures, first_failed_at, last_failed_at
  FROM [tidemark].[dead_letters]
 WHERE id = :id

-- claimOne()
UPDATE l
   SET claimed_by = :claimant,
       claimed_until = :until
OUTPUT inserted.id, inserted.object_name, inserted.destination, inserted.idempotency_key, inserted.batch_id, inserted.page_number, inserted.page_count, inserted.from_version, inserted.to_version, inserted.sync_type, inserted.reason_code, inserted.change_count, inserted.envelope, inserted.attempts, inserted.failures, inserted.first_failed_at, inserted.last_failed_at
  FROM [tidemark].[dead_letters] AS l WITH (READPAST, UPDLOCK, ROWLOCK)
 WHERE l.id = :id AND (l.claimed_until IS NULL OR l.claimed_until <= :now);

-- lockDestination()
SELECT id
  FROM [tidemark].[dead_letters] WITH (UPDLOCK, HOLDLOCK, ROWLOCK)
 WHERE object_name = :name AND destination = :destination

-- claimNext()
UPDATE l
   SET claimed_by = :claimant,
       claimed_until = :until
OUTPUT inserted.id, inserted.object_name, inserted.destination, inserted.idempotency_key, inserted.batch_id, inserted.page_number, inserted.page_count, inserted.from_version, inserted.to_version, inserted.sync_type, inserted.reason_code, inserted.change_count, inserted.envelope, inserted.attempts, inserted.failures, inserted.first_failed_at, inserted.last_failed_at
  FROM [tidemark].[dead_letters] AS l
 WHERE l.id IN (SELECT TOP (:limit) f.id
                  FROM [tidemark].[dead_letters] AS f
                 WHERE f.object_name = :name AND f.destination = :destination
                   AND (f.claimed_until IS NULL OR f.claimed_until <= :now)
                 ORDER BY f.from_version, f.page_number, f.id)
   -- Another replay of this destination still holds letters: claiming later ones would overtake it.
   AND NOT EXISTS (SELECT 1
                     FROM [tidemark].[dead_letters] AS o
                    WHERE o.object_name = :name AND o.destination = :destination
                      AND o.claimed_by <> :claimant AND o.claimed_until > :now);

-- resolveClaimed()
DELETE FROM [tidemark].[dead_letters]
 WHERE id = :id AND claimed_by = :claimant

-- resolveByKey()
DELETE FROM [tidemark].[dead_letters]
 WHERE object_name = :name AND destination = :destination AND idempotency_key = :key

-- release()
UPDATE [tidemark].[dead_letters]
   SET claimed_by = NULL,
       claimed_until = NULL
 WHERE id = :id AND claimed_by = :claimant

-- selectClaimedForUpdate()
SELECT id, object_name, destination, idempotency_key, batch_id, page_number, page_count, from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures, first_failed_at, last_failed_at
  FROM [tidemark].[dead_letters] WITH (UPDLOCK, ROWLOCK)
 WHERE id = :id AND claimed_by = :claimant

-- updateFailuresAndRelease()
UPDATE [tidemark].[dead_letters]
   SET attempts = :attempts,
       failures = :failures,
       first_failed_at = :firstFailedAt,
       last_failed_at = :lastFailedAt,
       claimed_by = NULL,
       claimed_until = NULL
 WHERE id = :id AND claimed_by = :claimant

-- delete()
DELETE FROM [tidemark].[dead_letters]
 WHERE id = :id

-- purge()
DELETE FROM [tidemark].[dead_letters]
 WHERE last_failed_at < :olderThan

-- upgrade: add columns
ALTER TABLE [tidemark].[dead_letters] ADD
    idempotency_key VARCHAR(64) COLLATE Latin1_General_100_BIN2 NULL,
    page_count      INT               NULL,
    envelope        NVARCHAR(MAX)     NULL,
    attempts        INT               NULL,
    failures        NVARCHAR(MAX)     NULL,
    first_failed_at DATETIMEOFFSET(6) NULL,
    last_failed_at  DATETIMEOFFSET(6) NULL,
    claimed_by      NVARCHAR(200)     NULL,
    claimed_until   DATETIMEOFFSET(6) NULL

-- upgrade: fill one row
UPDATE [tidemark].[dead_letters]
   SET idempotency_key = ?, page_count = 0, envelope = ?, attempts = ?, failures = ?,
       first_failed_at = created_at, last_failed_at = ?
 WHERE id = ?

-- upgrade: finish
ALTER TABLE [tidemark].[dead_letters] ALTER COLUMN destination NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL;
ALTER TABLE [tidemark].[dead_letters] ALTER COLUMN idempotency_key VARCHAR(64) COLLATE Latin1_General_100_BIN2 NOT NULL;
ALTER TABLE [tidemark].[dead_letters] ALTER COLUMN page_count INT NOT NULL;
ALTER TABLE [tidemark].[dead_letters] ALTER COLUMN envelope NVARCHAR(MAX) NOT NULL;
ALTER TABLE [tidemark].[dead_letters] ALTER COLUMN attempts INT NOT NULL;
ALTER TABLE [tidemark].[dead_letters] ALTER COLUMN failures NVARCHAR(MAX) NOT NULL;
ALTER TABLE [tidemark].[dead_letters] ALTER COLUMN first_failed_at DATETIMEOFFSET(6) NOT NULL;
ALTER TABLE [tidemark].[dead_letters] ALTER COLUMN last_failed_at DATETIMEOFFSET(6) NOT NULL;
ALTER TABLE [tidemark].[dead_letters] ADD CHECK (ISJSON(envelope) = 1), CHECK (ISJSON(failures) = 1);
-- The old changes column carries an unnamed CHECK constraint, which must go first.
DECLARE @drop NVARCHAR(MAX) = N'';
SELECT @drop += N'ALTER TABLE ' + N'[tidemark].[dead_letters]' + N' DROP CONSTRAINT ' + QUOTENAME(cc.name) + N';'
  FROM sys.check_constraints AS cc
  JOIN sys.columns AS col
    ON col.object_id = cc.parent_object_id AND col.column_id = cc.parent_column_id
 WHERE cc.parent_object_id = OBJECT_ID(N'[tidemark].[dead_letters]') AND col.name = N'changes';
EXEC sp_executesql @drop;
ALTER TABLE [tidemark].[dead_letters] DROP COLUMN changes, error, created_at;
