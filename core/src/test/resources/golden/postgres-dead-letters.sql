-- script()
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

-- insert()
INSERT INTO "tidemark"."dead_letters" (object_name, destination, idempotency_key, batch_id, page_number, page_count,
       from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures,
       first_failed_at, last_failed_at)
VALUES (:objectName, :destination, :key, :batchId, :pageNumber, :pageCount,
       :fromVersion, :toVersion, :syncType, :reasonCode, :changeCount, CAST(:envelope AS json),
       :attempts, CAST(:failures AS json), :firstFailedAt, :lastFailedAt)
ON CONFLICT (object_name, destination, idempotency_key) DO NOTHING
RETURNING id

-- selectPageForUpdate()
SELECT id, object_name, destination, idempotency_key, batch_id, page_number, page_count, from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures, first_failed_at, last_failed_at
  FROM "tidemark"."dead_letters"
 WHERE object_name = :name AND destination = :destination AND idempotency_key = :key
   FOR UPDATE

-- updateFailures()
UPDATE "tidemark"."dead_letters"
   SET attempts = :attempts,
       failures = CAST(:failures AS json),
       first_failed_at = :firstFailedAt,
       last_failed_at = :lastFailedAt
 WHERE id = :id

-- selectByObject()
SELECT id, object_name, destination, idempotency_key, batch_id, page_number, page_count, from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures, first_failed_at, last_failed_at
  FROM "tidemark"."dead_letters"
 WHERE object_name = :name
 ORDER BY from_version, page_number, id

-- selectByDestination()
SELECT id, object_name, destination, idempotency_key, batch_id, page_number, page_count, from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures, first_failed_at, last_failed_at
  FROM "tidemark"."dead_letters"
 WHERE object_name = :name AND destination = :destination
 ORDER BY from_version, page_number, id

-- selectById()
SELECT id, object_name, destination, idempotency_key, batch_id, page_number, page_count, from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures, first_failed_at, last_failed_at
  FROM "tidemark"."dead_letters"
 WHERE id = :id

-- claimOne()
UPDATE "tidemark"."dead_letters" AS l
   SET claimed_by = :claimant,
       claimed_until = :until
 WHERE l.id = (SELECT f.id
                 FROM "tidemark"."dead_letters" AS f
                WHERE f.id = :id AND (f.claimed_until IS NULL OR f.claimed_until <= :now)
                  FOR UPDATE SKIP LOCKED)
RETURNING l.id, l.object_name, l.destination, l.idempotency_key, l.batch_id, l.page_number, l.page_count, l.from_version, l.to_version, l.sync_type, l.reason_code, l.change_count, l.envelope, l.attempts, l.failures, l.first_failed_at, l.last_failed_at

-- lockDestination()
SELECT id
  FROM "tidemark"."dead_letters"
 WHERE object_name = :name AND destination = :destination
 ORDER BY id
   FOR UPDATE

-- claimNext()
UPDATE "tidemark"."dead_letters" AS l
   SET claimed_by = :claimant,
       claimed_until = :until
 WHERE l.id IN (SELECT f.id
                  FROM "tidemark"."dead_letters" AS f
                 WHERE f.object_name = :name AND f.destination = :destination
                   AND (f.claimed_until IS NULL OR f.claimed_until <= :now)
                 ORDER BY f.from_version, f.page_number, f.id
                 LIMIT :limit)
   -- Another replay of this destination still holds letters: claiming later ones would overtake it.
   AND NOT EXISTS (SELECT 1
                     FROM "tidemark"."dead_letters" AS o
                    WHERE o.object_name = :name AND o.destination = :destination
                      AND o.claimed_by <> :claimant AND o.claimed_until > :now)
RETURNING l.id, l.object_name, l.destination, l.idempotency_key, l.batch_id, l.page_number, l.page_count, l.from_version, l.to_version, l.sync_type, l.reason_code, l.change_count, l.envelope, l.attempts, l.failures, l.first_failed_at, l.last_failed_at

-- resolveClaimed()
DELETE FROM "tidemark"."dead_letters"
 WHERE id = :id AND claimed_by = :claimant

-- resolveByKey()
DELETE FROM "tidemark"."dead_letters"
 WHERE object_name = :name AND destination = :destination AND idempotency_key = :key

-- release()
UPDATE "tidemark"."dead_letters"
   SET claimed_by = NULL,
       claimed_until = NULL
 WHERE id = :id AND claimed_by = :claimant

-- selectClaimedForUpdate()
SELECT id, object_name, destination, idempotency_key, batch_id, page_number, page_count, from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures, first_failed_at, last_failed_at
  FROM "tidemark"."dead_letters"
 WHERE id = :id AND claimed_by = :claimant
   FOR UPDATE

-- updateFailuresAndRelease()
UPDATE "tidemark"."dead_letters"
   SET attempts = :attempts,
       failures = CAST(:failures AS json),
       first_failed_at = :firstFailedAt,
       last_failed_at = :lastFailedAt,
       claimed_by = NULL,
       claimed_until = NULL
 WHERE id = :id AND claimed_by = :claimant

-- delete()
DELETE FROM "tidemark"."dead_letters"
 WHERE id = :id

-- purge()
DELETE FROM "tidemark"."dead_letters"
 WHERE last_failed_at < :olderThan

-- upgrade: add columns
ALTER TABLE "tidemark"."dead_letters"
    ADD COLUMN idempotency_key text,
    ADD COLUMN page_count      integer,
    ADD COLUMN envelope        json,
    ADD COLUMN attempts        integer,
    ADD COLUMN failures        json,
    ADD COLUMN first_failed_at timestamptz,
    ADD COLUMN last_failed_at  timestamptz,
    ADD COLUMN claimed_by      text,
    ADD COLUMN claimed_until   timestamptz

-- upgrade: fill one row
UPDATE "tidemark"."dead_letters"
   SET idempotency_key = ?, page_count = 0, envelope = CAST(? AS json), attempts = ?,
       failures = CAST(? AS json), first_failed_at = created_at, last_failed_at = ?
 WHERE id = ?

-- upgrade: finish
ALTER TABLE "tidemark"."dead_letters"
    ALTER COLUMN idempotency_key SET NOT NULL,
    ALTER COLUMN page_count      SET NOT NULL,
    ALTER COLUMN envelope        SET NOT NULL,
    ALTER COLUMN attempts        SET NOT NULL,
    ALTER COLUMN failures        SET NOT NULL,
    ALTER COLUMN first_failed_at SET NOT NULL,
    ALTER COLUMN last_failed_at  SET NOT NULL,
    DROP COLUMN changes,
    DROP COLUMN error,
    DROP COLUMN created_at
