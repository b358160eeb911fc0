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

-- A dead-letter table created by an earlier Tidemark is upgraded by JdbcDeadLetterStore.upgrade();
-- this script stops rather than run over it.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_attribute
                WHERE attrelid = to_regclass('"tidemark"."dead_letters"') AND attname = 'changes'
                  AND NOT attisdropped) THEN
        RAISE EXCEPTION 'The dead-letter table "tidemark"."dead_letters" has the layout of an earlier Tidemark: upgrade it with JdbcDeadLetterStore.upgrade()';
    END IF;
END $$;

-- One row per page a destination refused until its policy ran out of attempts; the same page
-- refused again updates its row (attempts, failures, last_failed_at) instead of adding one.
CREATE TABLE IF NOT EXISTS "tidemark"."dead_letters" (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    object_name     text        NOT NULL,
    destination     text        NOT NULL,
    idempotency_key text        NOT NULL,            -- the page's key, as the destination saw it
    batch_id        text        NOT NULL,
    page_number     integer     NOT NULL,
    page_count      integer     NOT NULL,            -- 0 for letters kept before it was recorded
    from_version    bigint      NOT NULL,
    to_version      bigint      NOT NULL,
    sync_type       text        NOT NULL,
    reason_code     integer     NOT NULL,
    change_count    integer     NOT NULL,
    envelope        json        NOT NULL,            -- the page as offered, changes included
    attempts        integer     NOT NULL,
    failures        json        NOT NULL,            -- the last 20 failures: [{"at": ..., "error": ...}]
    first_failed_at timestamptz NOT NULL,
    last_failed_at  timestamptz NOT NULL,
    claimed_by      text,                            -- the replay holding the letter ...
    claimed_until   timestamptz                      -- ... until then (a dead replayer's claim lapses)
);

-- One letter per object, destination and page.
CREATE UNIQUE INDEX IF NOT EXISTS "dead_letters_page_key"
    ON "tidemark"."dead_letters" (object_name, destination, idempotency_key);

-- Listing and replay in version order.
CREATE INDEX IF NOT EXISTS "dead_letters_order_idx"
    ON "tidemark"."dead_letters" (object_name, destination, from_version, page_number);

-- Purge by age.
CREATE INDEX IF NOT EXISTS "dead_letters_age_idx"
    ON "tidemark"."dead_letters" (last_failed_at);

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

-- selectStateWithPositions()
-- The row of the object and the positions of its destinations in one statement (one snapshot, one
-- round trip): a row per position, the columns of the object repeated on each; one row without a
-- position when it has none; no row when there is neither.
SELECT s.object_name, s.version, s.source_identity, s.paused, s.last_moved_at, s.last_polled_at,
       s.last_error,
       p.destination, p.version AS position_version, p.paused AS position_paused
  FROM (SELECT CAST(:name AS pg_catalog.text) AS object_name) AS o
  LEFT JOIN "tidemark"."sync_state" AS s ON s.object_name = o.object_name
  LEFT JOIN "tidemark"."sync_state_positions" AS p ON p.object_name = o.object_name
 WHERE s.object_name IS NOT NULL OR p.object_name IS NOT NULL
 ORDER BY p.destination

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

-- advanceInOneStatement()
-- The watermark and the positions of the destinations that moved, in one statement: all of it or
-- nothing. The rows are locked first (the positions in destination order, then the row of the
-- object: the order of the same write run as a transaction) and checked against what the writer
-- expects on their newest versions; the updates run only when every one matched. No row back:
-- nothing was written. (No apostrophe in these comments: the parser of named parameters knows no line
-- comments and would read one as a quote.)
WITH moves AS (
    SELECT m.destination, m.expected, m.version
      FROM ROWS FROM (pg_catalog.unnest(CAST(:destinations AS pg_catalog.text[])),
                      pg_catalog.unnest(CAST(:expectedPositions AS pg_catalog.int8[])),
                      pg_catalog.unnest(CAST(:positionVersions AS pg_catalog.int8[])))
           AS m(destination, expected, version)),
held_positions AS (
    SELECT p.destination
      FROM "tidemark"."sync_state_positions" AS p
      JOIN moves AS m ON m.destination = p.destination
     WHERE p.object_name = :name AND p.version = m.expected AND p.version <= m.version
     ORDER BY p.destination
       FOR UPDATE OF p),
held_state AS (
    -- Evaluating the count first locks the positions before this row.
    SELECT s.object_name
      FROM "tidemark"."sync_state" AS s
     WHERE (SELECT pg_catalog.count(*) FROM held_positions) = :positionCount
       AND s.object_name = :name AND s.version = :expected AND s.version <= :version
       AND (s.source_identity IS NULL OR s.source_identity = :source)
       FOR UPDATE),
moved AS (
    UPDATE "tidemark"."sync_state_positions" AS p
       SET version = m.version,
           updated_at = :at
      FROM moves AS m
     WHERE p.object_name = :name AND p.destination = m.destination AND p.version = m.expected
       AND EXISTS (SELECT FROM held_state)
    RETURNING p.destination)
UPDATE "tidemark"."sync_state" AS s
   SET version = :version,
       source_identity = :source,
       last_moved_at = CASE WHEN s.version = :version THEN s.last_moved_at ELSE :at END,
       last_polled_at = :at,
       last_error = NULL,
       updated_at = :at
 WHERE s.object_name = :name AND s.version = :expected
   AND EXISTS (SELECT FROM held_state)
RETURNING (SELECT pg_catalog.count(*) FROM moved) AS moved

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
