-- createScript()
-- Tidemark store: one row per tracked object (its watermark and bookkeeping),
-- one row per destination of an object (its position),
-- and the pages a destination refused under a dead-letter policy.
CREATE SCHEMA IF NOT EXISTS "tidemark";

CREATE TABLE IF NOT EXISTS "tidemark"."sync_state" (
    object_name     text        PRIMARY KEY,
    version         bigint,                          -- NULL until the first successful cycle
    source_identity text,                            -- the procedure that produced the version
    paused          boolean     NOT NULL DEFAULT false,
    last_moved_at   timestamptz,
    last_polled_at  timestamptz,
    last_error      text,
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- A table created before watermarks recorded their source gains the column here.
ALTER TABLE "tidemark"."sync_state" ADD COLUMN IF NOT EXISTS source_identity text;

-- An object whose watermark was stored before positions were kept has no rows here:
-- every destination then stands at the object's watermark until its next delivery.
CREATE TABLE IF NOT EXISTS "tidemark"."sync_state_positions" (
    object_name text        NOT NULL,
    destination text        NOT NULL,
    version     bigint,                 -- every change up to it was accepted; NULL: none yet
    paused      boolean     NOT NULL DEFAULT false,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (object_name, destination)
);

CREATE TABLE IF NOT EXISTS "tidemark"."dead_letters" (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    object_name  text        NOT NULL,
    destination  text        NOT NULL,
    batch_id     text        NOT NULL,
    page_number  integer     NOT NULL,
    from_version bigint      NOT NULL,
    to_version   bigint      NOT NULL,
    sync_type    text        NOT NULL,
    reason_code  integer     NOT NULL,
    change_count integer     NOT NULL,
    changes      json        NOT NULL,            -- the page, as the procedure returned it
    error        text        NOT NULL,
    created_at   timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS "dead_letters_object_idx" ON "tidemark"."dead_letters" (object_name, id);

-- selectState()
SELECT object_name, version, source_identity, paused, last_moved_at, last_polled_at, last_error
  FROM "tidemark"."sync_state"
 WHERE object_name = :name

-- selectAllStates()
SELECT object_name, version, source_identity, paused, last_moved_at, last_polled_at, last_error
  FROM "tidemark"."sync_state"
 ORDER BY object_name

-- advanceFromNothing()
INSERT INTO "tidemark"."sync_state" AS s
       (object_name, version, source_identity, paused, last_moved_at, last_polled_at, last_error, updated_at)
VALUES (:name, :version, :source, false, :at, :at, NULL, :at)
ON CONFLICT (object_name) DO UPDATE
   SET version = EXCLUDED.version,
       source_identity = EXCLUDED.source_identity,
       last_moved_at = EXCLUDED.last_moved_at,
       last_polled_at = EXCLUDED.last_polled_at,
       last_error = NULL,
       updated_at = EXCLUDED.updated_at
 WHERE s.version IS NULL

-- advanceFrom()
UPDATE "tidemark"."sync_state"
   SET version = :version,
       source_identity = :source,
       last_moved_at = CASE WHEN version = :version THEN last_moved_at ELSE :at END,
       last_polled_at = :at,
       last_error = NULL,
       updated_at = :at
 WHERE object_name = :name AND version = :expected AND version <= :version
   AND (source_identity IS NULL OR source_identity = :source)

-- recordPoll()
INSERT INTO "tidemark"."sync_state" AS s (object_name, version, paused, last_polled_at, last_error, updated_at)
VALUES (:name, NULL, false, :at, :error, :at)
ON CONFLICT (object_name) DO UPDATE
   SET last_polled_at = EXCLUDED.last_polled_at,
       last_error = EXCLUDED.last_error,
       updated_at = EXCLUDED.updated_at

-- setPaused()
INSERT INTO "tidemark"."sync_state" AS s (object_name, version, paused, updated_at)
VALUES (:name, NULL, :paused, :at)
ON CONFLICT (object_name) DO UPDATE
   SET paused = EXCLUDED.paused,
       updated_at = EXCLUDED.updated_at

-- adoptSource()
UPDATE "tidemark"."sync_state"
   SET source_identity = :source,
       updated_at = :at
 WHERE object_name = :name AND version IS NOT NULL

-- reset()
UPDATE "tidemark"."sync_state"
   SET version = NULL,
       source_identity = NULL,
       last_moved_at = :at,
       last_error = NULL,
       updated_at = :at
 WHERE object_name = :name

-- selectPositions()
SELECT object_name, destination, version, paused
  FROM "tidemark"."sync_state_positions"
 WHERE object_name = :name
 ORDER BY destination

-- selectAllPositions()
SELECT object_name, destination, version, paused
  FROM "tidemark"."sync_state_positions"
 ORDER BY object_name, destination

-- insertPosition()
INSERT INTO "tidemark"."sync_state_positions" AS p (object_name, destination, version, paused, updated_at)
VALUES (:name, :destination, :version, false, :at)
ON CONFLICT (object_name, destination) DO UPDATE
   SET version = EXCLUDED.version,
       updated_at = EXCLUDED.updated_at
 WHERE p.version IS NULL

-- advancePosition()
UPDATE "tidemark"."sync_state_positions"
   SET version = :version,
       updated_at = :at
 WHERE object_name = :name AND destination = :destination
   AND version = :expected AND version <= :version

-- setDestinationPaused()
INSERT INTO "tidemark"."sync_state_positions" AS p (object_name, destination, version, paused, updated_at)
VALUES (:name, :destination, NULL, :paused, :at)
ON CONFLICT (object_name, destination) DO UPDATE
   SET paused = EXCLUDED.paused,
       updated_at = EXCLUDED.updated_at

-- resetPositions()
UPDATE "tidemark"."sync_state_positions"
   SET version = NULL,
       updated_at = :at
 WHERE object_name = :name

-- insertDeadLetter()
INSERT INTO "tidemark"."dead_letters" (object_name, destination, batch_id, page_number, from_version, to_version,
       sync_type, reason_code, change_count, changes, error, created_at)
VALUES (:objectName, :destination, :batchId, :pageNumber, :fromVersion, :toVersion,
       :syncType, :reasonCode, :changeCount, CAST(:changes AS json), :error, :createdAt)
RETURNING id

-- selectDeadLetters()
SELECT id, object_name, destination, batch_id, page_number, from_version, to_version, sync_type,
       reason_code, change_count, changes::text AS changes, error, created_at
  FROM "tidemark"."dead_letters"
 WHERE object_name = :name
 ORDER BY id

-- deleteDeadLetter()
DELETE FROM "tidemark"."dead_letters"
 WHERE id = :id
