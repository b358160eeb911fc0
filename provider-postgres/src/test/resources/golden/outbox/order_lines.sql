-- =====================================================================================================
-- Tidemark outbox for public.Order Lines
-- =====================================================================================================
-- Captures every committed INSERT, UPDATE and DELETE on public.Order Lines into public.order_lines_outbox and serves
-- the changes through public.order_lines_changes(json) under the Tidemark procedure contract.
--
-- Run this script in ONE transaction at READ COMMITTED (Flyway and Liquibase do so by default).
-- Running it again is harmless: it creates what is missing and replaces functions and triggers.
-- No superuser and no extension are needed: the role running it must own public.Order Lines (or hold
-- TRIGGER on it) and may create objects in the outbox's schema. Writers need no privilege on
-- the outbox: the capture function is SECURITY DEFINER.
--
--   key:       order_id, line
--   captured:  order_id, line, sku, qty
--   truncate:  recorded as a delete of every row (TruncatePolicy.RECORD_DELETES)
--   wake-up:   none (the poll interval only)
--
-- Why no change can be skipped
--   A change's version is max(the writing transaction's xid8, the newest transaction that had
--   finished when the change was captured). The change function returns only changes whose
--   version is below the horizon pg_snapshot_xmin(pg_current_snapshot()): every transaction
--   below it has finished, and every transaction still running or yet to start stamps its
--   changes at or above it. Once the watermark passes a version, nothing can appear below it.
--   An outbox id used as the version (docs/contract.md of Tidemark) does not have this property:
--   ids are handed out in trigger order, not in transaction order, and a transaction that
--   took its id first but commits last is skipped for good.
--   The "newest finished transaction" part keeps the changes of one row in commit order: a
--   transaction that changes a row after another one committed gets a version at least as
--   high, and changes of one version are returned in capture order (id).
--
-- To change what an installed outbox captures (columns, payload keys, change function, ...), run
-- the script of PostgresOutbox.upgradeScript or call PostgresOutbox.upgrade: PostgresOutbox.install
-- refuses to change an outbox installed with other options (section 7 records them).

-- 1. Preflight -----------------------------------------------------------------------------------------
-- One install at a time (several application instances may install at start-up), and nothing is
-- created unless the table looks as expected.
SELECT pg_advisory_xact_lock(hashtextextended('tidemark outbox public.Order Lines', 0));

DO $preflight$
DECLARE
    tbl      regclass := to_regclass('"public"."Order Lines"');
    outbox   regclass := to_regclass('"public"."order_lines_outbox"');
    missing  text;
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'Install the Tidemark outbox of % at READ COMMITTED, not %',
            '"public"."Order Lines"', current_setting('transaction_isolation')
            USING HINT = 'Where the outbox history starts is read from a fresh snapshot taken'
                         ' after the triggers exist.';
    END IF;
    IF tbl IS NULL THEN
        RAISE EXCEPTION 'Table % does not exist', '"public"."Order Lines"';
    END IF;
    IF (SELECT c.relkind FROM pg_class c WHERE c.oid = tbl) <> 'r' THEN
        RAISE EXCEPTION '% is not an ordinary table; the Tidemark outbox captures ordinary tables',
            '"public"."Order Lines"';
    END IF;
    SELECT string_agg(quote_ident(col), ', ') INTO missing
      FROM unnest(ARRAY['order_id', 'line', 'sku', 'qty']::text[]) AS col
     WHERE NOT EXISTS (SELECT FROM pg_attribute a
                        WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0
                          AND NOT a.attisdropped AND a.attgenerated <> 'v');
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'Table % has no column % that a trigger can capture', '"public"."Order Lines"', missing
            USING HINT = 'Virtual generated columns are NULL in triggers: capture their inputs instead.';
    END IF;
    -- The key identifies the row of a delete: it must be unique and never NULL. Not deferrable
    -- either: one statement could then move keys through each other, which row capture cannot order.
    IF NOT EXISTS (
        SELECT FROM pg_index i
         WHERE i.indrelid = tbl AND i.indisunique AND i.indisvalid AND i.indimmediate
           AND i.indpred IS NULL AND i.indexprs IS NULL
           AND i.indnkeyatts = 2
           AND (SELECT array_agg(a.attname::text)
                  FROM pg_attribute a
                 WHERE a.attrelid = tbl AND a.attnotnull
                   AND a.attnum = ANY ((i.indkey::int2[])[0:i.indnkeyatts - 1]))
               @> ARRAY['order_id', 'line']::text[])
    THEN
        RAISE EXCEPTION 'The key (%) of % is not its primary key or a unique, not deferrable index over NOT NULL columns',
            'order_id, line', '"public"."Order Lines"';
    END IF;
    -- CREATE TABLE IF NOT EXISTS below would silently adopt someone else's table of that name.
    IF outbox IS NOT NULL AND (SELECT count(*) FROM pg_attribute a
                                WHERE a.attrelid = outbox AND a.attnum > 0 AND NOT a.attisdropped
                                  AND (a.attname::text, format_type(a.atttypid, a.atttypmod)) IN
                                      (('version', 'bigint'), ('id', 'bigint'), ('xact_id', 'xid8'),
                                       ('operation', 'character(1)'), ('change', 'json'))) <> 5
    THEN
        RAISE EXCEPTION 'Table % already exists and is not a Tidemark outbox (it lacks version, id, xact_id, operation or change)',
            '"public"."order_lines_outbox"'
            USING HINT = 'Name another table with PostgresOutbox.Builder.outboxTable(...), or drop this one.';
    END IF;
END
$preflight$;

-- 2. The outbox ----------------------------------------------------------------------------------------
CREATE TABLE IF NOT EXISTS "public"."order_lines_outbox" (
    version    bigint   NOT NULL,
    id         bigint   GENERATED ALWAYS AS IDENTITY,
    xact_id    xid8     NOT NULL,
    operation  char(1)  NOT NULL CHECK (operation IN ('I', 'U', 'D')),
    change     json     NOT NULL,
    CONSTRAINT "order_lines_outbox_pkey" PRIMARY KEY (version, id)
);
COMMENT ON TABLE "public"."order_lines_outbox" IS 'Changes of public.Order Lines captured by Tidemark. Read them with public.order_lines_changes(json); trim them with public.order_lines_outbox_trim(bigint, integer).';
COMMENT ON COLUMN "public"."order_lines_outbox".version IS 'max(xact_id, newest transaction finished at capture); returned once below pg_snapshot_xmin(pg_current_snapshot())';
COMMENT ON COLUMN "public"."order_lines_outbox".id IS 'capture order: orders the changes of one version';
COMMENT ON COLUMN "public"."order_lines_outbox".xact_id IS 'the writing transaction, pg_current_xact_id()';
COMMENT ON COLUMN "public"."order_lines_outbox".change IS 'the change as returned: $operation, $version, $changed (updates), then the key and the captured columns (deletes: the key only)';

-- Changes at or below trimmed_through may be missing: written before the outbox existed, or trimmed.
-- A reader asking for changes after an older version gets a full snapshot (ReasonCode 1) instead.
CREATE TABLE IF NOT EXISTS "public"."order_lines_outbox_state" (
    singleton        boolean  PRIMARY KEY DEFAULT true CHECK (singleton),
    trimmed_through  bigint   NOT NULL
);

-- 2b. Wake-up ------------------------------------------------------------------------------------------
-- Notifications are off: readers find changes at their poll interval. Nothing of an earlier
-- install's wake-up flag stays.
DROP FUNCTION IF EXISTS "public"."order_lines_outbox_arm"();
DROP TABLE IF EXISTS "public"."order_lines_outbox_wakeup";

-- 3. Capture ------------------------------------------------------------------------------------------
-- Runs once per writing statement, so every write pays for it. No SET search_path (a SET clause
-- saves and restores its setting on every call): every function, operator, type and cast below is
-- schema-qualified instead, so no search_path of the caller, not even one listing a schema ahead
-- of pg_catalog, changes what it runs; the transition tables (inserted, old_rows, ...) are found
-- before any table of those names. The four settings timestamptz, float, bytea and interval values
-- are rendered after stay pinned: this script does not know the columns' types, and the JSON a
-- destination receives must not depend on the writing session.
CREATE OR REPLACE FUNCTION "public"."order_lines_outbox_capture"()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET "TimeZone" = 'UTC'
SET extra_float_digits = 1
SET bytea_output = 'hex'
SET "IntervalStyle" = 'iso_8601'
AS $capture$
BEGIN
    IF TG_OP OPERATOR(pg_catalog.=) 'INSERT' THEN
        -- Every inserted row, with one INSERT per statement.
        INSERT INTO "public"."order_lines_outbox" (version, xact_id, operation, change)
        SELECT v.version, v.xact_id, 'I', pg_catalog.row_to_json(c)
          FROM (SELECT pg_catalog.pg_current_xact_id() AS xact_id,
                       GREATEST(pg_catalog.pg_current_xact_id()::pg_catalog.text::bigint, pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::pg_catalog.text::bigint OPERATOR(pg_catalog.-) 1) AS version) AS v,
               inserted AS r,
               LATERAL (SELECT 'I' AS "$operation",
                               v.version AS "$version",
                               r."order_id" AS "order_id",
                               r."line" AS "line",
                               r."sku" AS "sku",
                               r."qty" AS "qty") AS c;
        IF FOUND THEN
            NULL; -- notifications are off
        END IF;

    ELSIF TG_OP OPERATOR(pg_catalog.=) 'UPDATE' THEN
        -- Old and new rows are paired by key (compared as text). A key that stays is an update when a
        -- captured column's text changed (never an error, whatever the type; an update that changes
        -- nothing is skipped); a key that goes is a delete, a key that appears an insert.
        INSERT INTO "public"."order_lines_outbox" (version, xact_id, operation, change)
        SELECT v.version, v.xact_id, k.operation, d.change
          FROM (SELECT pg_catalog.pg_current_xact_id() AS xact_id,
                       GREATEST(pg_catalog.pg_current_xact_id()::pg_catalog.text::bigint, pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::pg_catalog.text::bigint OPERATOR(pg_catalog.-) 1) AS version) AS v,
               old_rows AS o FULL JOIN new_rows AS n ON (n."order_id")::pg_catalog.text OPERATOR(pg_catalog.=) (o."order_id")::pg_catalog.text AND (n."line")::pg_catalog.text OPERATOR(pg_catalog.=) (o."line")::pg_catalog.text,
               LATERAL (SELECT CASE WHEN n."order_id" IS NULL THEN 'D'
                                    WHEN o."order_id" IS NULL THEN 'I'
                                    ELSE 'U' END AS operation) AS k,
               LATERAL (SELECT pg_catalog.array_remove(ARRAY[
                                    CASE WHEN COALESCE((o."sku")::pg_catalog.text OPERATOR(pg_catalog.=) (n."sku")::pg_catalog.text,
                                                  (o."sku")::pg_catalog.text IS NULL AND (n."sku")::pg_catalog.text IS NULL)
                                         THEN NULL ELSE 'sku' END,
                                    CASE WHEN COALESCE((o."qty")::pg_catalog.text OPERATOR(pg_catalog.=) (n."qty")::pg_catalog.text,
                                                  (o."qty")::pg_catalog.text IS NULL AND (n."qty")::pg_catalog.text IS NULL)
                                         THEN NULL ELSE 'qty' END
                                ], NULL) AS changed) AS ch,
               LATERAL (SELECT CASE
                   WHEN k.operation OPERATOR(pg_catalog.=) 'D'
                   THEN (SELECT pg_catalog.row_to_json(c)
                           FROM (SELECT 'D' AS "$operation",
                                        v.version AS "$version",
                                        o."order_id" AS "order_id",
                                        o."line" AS "line") AS c)
                   WHEN k.operation OPERATOR(pg_catalog.=) 'I'
                   THEN (SELECT pg_catalog.row_to_json(c)
                           FROM (SELECT 'I' AS "$operation",
                                        v.version AS "$version",
                                        n."order_id" AS "order_id",
                                        n."line" AS "line",
                                        n."sku" AS "sku",
                                        n."qty" AS "qty") AS c)
                   ELSE (SELECT pg_catalog.row_to_json(c)
                           FROM (SELECT 'U' AS "$operation",
                                        v.version AS "$version",
                                        ch.changed AS "$changed",
                                        n."order_id" AS "order_id",
                                        n."line" AS "line",
                                        n."sku" AS "sku",
                                        n."qty" AS "qty") AS c)
                   END AS change) AS d
         WHERE k.operation OPERATOR(pg_catalog.<>) 'U'
            OR pg_catalog.cardinality(ch.changed) OPERATOR(pg_catalog.>) 0
         -- Deletes before inserts (ids in this order): for a key type whose equality is coarser
         -- than its text (numeric 1.0 to 1.00), a reader applying the delete last would lose the row.
         ORDER BY k.operation OPERATOR(pg_catalog.=) 'I';
        IF FOUND THEN
            NULL; -- notifications are off
        END IF;

    ELSIF TG_OP OPERATOR(pg_catalog.=) 'DELETE' THEN
        -- The key of every deleted row, with one INSERT per statement.
        INSERT INTO "public"."order_lines_outbox" (version, xact_id, operation, change)
        SELECT v.version, v.xact_id, 'D', pg_catalog.row_to_json(c)
          FROM (SELECT pg_catalog.pg_current_xact_id() AS xact_id,
                       GREATEST(pg_catalog.pg_current_xact_id()::pg_catalog.text::bigint, pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::pg_catalog.text::bigint OPERATOR(pg_catalog.-) 1) AS version) AS v,
               deleted AS r,
               LATERAL (SELECT 'D' AS "$operation",
                               v.version AS "$version",
                               r."order_id" AS "order_id",
                               r."line" AS "line") AS c;
        IF FOUND THEN
            NULL; -- notifications are off
        END IF;

    ELSIF TG_OP OPERATOR(pg_catalog.=) 'TRUNCATE' THEN
        -- TruncatePolicy.RECORD_DELETES: the key of every row, read before the table is emptied.
        INSERT INTO "public"."order_lines_outbox" (version, xact_id, operation, change)
        SELECT v.version, v.xact_id, 'D', pg_catalog.row_to_json(c)
          FROM (SELECT pg_catalog.pg_current_xact_id() AS xact_id,
                       GREATEST(pg_catalog.pg_current_xact_id()::pg_catalog.text::bigint, pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::pg_catalog.text::bigint OPERATOR(pg_catalog.-) 1) AS version) AS v,
               ONLY "public"."Order Lines" AS r,
               LATERAL (SELECT 'D' AS "$operation",
                               v.version AS "$version",
                               r."order_id" AS "order_id",
                               r."line" AS "line") AS c;
        IF FOUND THEN
            NULL; -- notifications are off
        END IF;
    END IF;
    RETURN NULL;
END
$capture$;
REVOKE ALL ON FUNCTION "public"."order_lines_outbox_capture"() FROM PUBLIC;
COMMENT ON FUNCTION "public"."order_lines_outbox_capture"() IS 'Tidemark: captures changes of public.Order Lines into public.order_lines_outbox.';

-- Triggers: CREATE TRIGGER waits for the writers of public.Order Lines to finish, so once they exist
-- every later change is captured. All are statement triggers over transition tables: one INSERT
-- into the outbox per statement (measured: see benchmarks/README-outbox.md).
CREATE OR REPLACE TRIGGER "order_lines_outbox_insert"
    AFTER INSERT ON "public"."Order Lines"
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION "public"."order_lines_outbox_capture"();
CREATE OR REPLACE TRIGGER "order_lines_outbox_update"
    AFTER UPDATE ON "public"."Order Lines"
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "public"."order_lines_outbox_capture"();
CREATE OR REPLACE TRIGGER "order_lines_outbox_delete"
    AFTER DELETE ON "public"."Order Lines"
    REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION "public"."order_lines_outbox_capture"();
CREATE OR REPLACE TRIGGER "order_lines_outbox_truncate"
    BEFORE TRUNCATE ON "public"."Order Lines"
    FOR EACH STATEMENT EXECUTE FUNCTION "public"."order_lines_outbox_capture"();

-- The captured columns, as a view: dropping one of them, or changing its type, now fails with a
-- message naming this view, instead of succeeding and making every write to the table fail. Re-run
-- this script for the new shape in the same migration (see the README).
DROP VIEW IF EXISTS "public"."order_lines_outbox_columns";
CREATE VIEW "public"."order_lines_outbox_columns" AS
    SELECT t."order_id",
           t."line",
           t."sku",
           t."qty"
      FROM ONLY "public"."Order Lines" AS t
     WHERE false;
COMMENT ON VIEW "public"."order_lines_outbox_columns" IS 'Tidemark: the columns public.order_lines_outbox captures from public.Order Lines. Keeps them from being dropped while captured.';

-- 4. Where the history starts -------------------------------------------------------------------------
-- Runs after CREATE TRIGGER, in a fresh READ COMMITTED snapshot: every writer that changed the table
-- unobserved has finished. A reader with an older fromVersion (not issued by this outbox) gets a full
-- snapshot rather than an incomplete diff. Kept as it is when the script runs again.
INSERT INTO "public"."order_lines_outbox_state" (singleton, trimmed_through)
VALUES (true, pg_snapshot_xmin(pg_current_snapshot())::text::bigint - 1)
ON CONFLICT (singleton) DO NOTHING;

-- 5. The change function --------------------------------------------------------------------------------
-- Request:  {"fromVersion": N, "mode": "sync" | "seed", "maxRows": M}
-- Response: {"Metadata": {"Sync": {"Version", "Type", "ReasonCode"},
--                         "Outbox": {"Horizon", "HeldBack", "Arm" (wake-ups on)}},
--            "Data": [changes]}
-- PL/pgSQL and STABLE: every statement of a STABLE function reads the snapshot of the query that
-- called it, so the horizon, the trim state and the changes all come from one moment; and PL/pgSQL
-- plans each statement once per session and keeps the plan. (An SQL function with SET clauses is
-- never inlined, and before PostgreSQL 18 its body is planned again on every call, which was most of
-- what a read that found nothing cost.) The request is checked and answered in this one function:
-- a nested call, with its own SET clause, cost a fifth of a read that found nothing.
CREATE OR REPLACE FUNCTION "public"."order_lines_changes"(payload json)
RETURNS json
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, pg_temp
SET "TimeZone" = 'UTC'
SET extra_float_digits = 1
SET bytea_output = 'hex'
SET "IntervalStyle" = 'iso_8601'
AS $changes$
DECLARE
    sync_mode     text    := COALESCE(payload ->> 'mode', 'sync');
    max_rows      integer := (payload ->> 'maxRows')::integer;
    from_version  bigint  := COALESCE((payload ->> 'fromVersion')::bigint, 0);
    -- Every transaction below the horizon has finished; versions below it are final.
    horizon       bigint  := pg_snapshot_xmin(pg_current_snapshot())::text::bigint;
    trimmed       bigint;
    page_end      bigint;
    answer        json;
BEGIN
    IF sync_mode NOT IN ('sync', 'seed') THEN
        RAISE EXCEPTION 'mode must be "sync" or "seed", got %', sync_mode
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF max_rows < 1 THEN
        RAISE EXCEPTION 'maxRows must be at least 1, got %', max_rows
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- Seed: no rows, and a version from which nothing is missed (every later change is at or above
    -- the horizon).
    IF sync_mode = 'seed' THEN
        RETURN json_build_object(
                   'Metadata', json_build_object('Sync', json_build_object(
                       'Version', horizon - 1, 'Type', 'Diff', 'ReasonCode', 0)),
                   'Data', '[]'::json);
    END IF;

    IF from_version >= horizon THEN
        RAISE EXCEPTION 'fromVersion % is not a version of %: the oldest running transaction is %',
            from_version, 'public.order_lines_outbox', horizon
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'The watermark comes from elsewhere (another database, a restored or failed-over'
                         ' server whose transaction ids went back). Reset the tracked object.';
    END IF;

    -- Full snapshot: a first full sync (fromVersion 0), or a reader older than what the outbox still
    -- holds (ReasonCode 1): every row of the table, in key order. Its rows carry no $version: the
    -- watermark becomes horizon - 1, and changes of transactions still running are delivered after it.
    SELECT s.trimmed_through INTO trimmed FROM "public"."order_lines_outbox_state" AS s;
    IF from_version = 0 OR from_version < trimmed THEN
        SELECT json_build_object(
                   'Metadata', json_build_object('Sync', json_build_object(
                       'Version', horizon - 1, 'Type', 'Full',
                       'ReasonCode', CASE WHEN from_version = 0 THEN 0 ELSE 1 END)),
                   'Data', COALESCE(json_agg(row_to_json(c) ORDER BY t."order_id", t."line"), '[]'::json))
          FROM ONLY "public"."Order Lines" AS t,
               LATERAL (SELECT t."order_id" AS "order_id",
                               t."line" AS "line",
                               t."sku" AS "sku",
                               t."qty" AS "qty") AS c
          INTO answer;
        RETURN answer;
    END IF;

    -- maxRows: a page holds whole versions only, so the watermark never lands inside a transaction.
    -- It ends with the version of the maxRows-th pending change: at least maxRows changes while
    -- more are pending (the engine keeps polling at once while pages come back full), more by the
    -- rest of that version's transaction.
    IF max_rows IS NOT NULL THEN
        SELECT o.version INTO page_end
          FROM "public"."order_lines_outbox" AS o
         WHERE o.version > from_version AND o.version < horizon
         ORDER BY o.version, o.id
        OFFSET max_rows - 1 LIMIT 1;
    END IF;
    -- Fewer than maxRows pending, or no maxRows: everything below the horizon, up to horizon - 1.
    page_end := COALESCE(page_end, horizon - 1);

    -- Diff: the changes after fromVersion, up to the end of the page. The page's bounds are
    -- parameters of the cached plan, which reads the primary key's range whatever they are. The
    -- aggregate sits at the top level (in a scalar subquery the whole answer would be copied once
    -- more); changes are aggregated in primary-key order, which the aggregate's ORDER BY uses without
    -- sorting on PostgreSQL 16 and later.
    SELECT json_build_object(
               'Metadata', json_build_object(
                   'Sync', json_build_object('Version', page_end, 'Type', 'Diff', 'ReasonCode', 0),
                   -- Diagnostics: do committed changes wait for an older transaction to end?
                   -- (max reads the end of the index; EXISTS may be planned as a heap scan.)
                   'Outbox', json_build_object('Horizon', horizon, 'HeldBack',
                       COALESCE((SELECT max(h.version) FROM "public"."order_lines_outbox" AS h) >= horizon, false))),
               'Data', COALESCE(json_agg(o.change ORDER BY o.version, o.id), '[]'::json))
      FROM "public"."order_lines_outbox" AS o
     WHERE o.version > from_version AND o.version <= page_end
      INTO answer;
    RETURN answer;
END
$changes$;
COMMENT ON FUNCTION "public"."order_lines_changes"(json) IS 'Tidemark change function of public.Order Lines, reading public.order_lines_outbox.';
-- Earlier versions checked the request in a function of its own.
DROP FUNCTION IF EXISTS "public"."order_lines_outbox_request"(json);

-- 6. Trimming --------------------------------------------------------------------------------------------
-- Deletes up to about max_rows delivered changes (whole versions) at or below through_version, never
-- at or above the horizon, and records how far the outbox was trimmed in the same transaction.
-- Returns the number of changes deleted: call it until it returns 0, one transaction per call.
-- PostgresOutbox.trim computes through_version from the stored watermarks of every reader.
CREATE OR REPLACE FUNCTION "public"."order_lines_outbox_trim"(through_version bigint, max_rows integer)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $trim$
DECLARE
    horizon    bigint := pg_snapshot_xmin(pg_current_snapshot())::text::bigint;
    batch_end  bigint;
    deleted    bigint;
    deleted_to bigint;
BEGIN
    IF max_rows IS NULL OR max_rows < 1 THEN
        RAISE EXCEPTION 'max_rows must be at least 1, got %', max_rows
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    through_version := LEAST(through_version, horizon - 1);
    SELECT o.version INTO batch_end
      FROM "public"."order_lines_outbox" AS o
     WHERE o.version <= through_version
     ORDER BY o.version, o.id
    OFFSET max_rows - 1 LIMIT 1;
    batch_end := COALESCE(batch_end, through_version);

    WITH gone AS (
        DELETE FROM "public"."order_lines_outbox" AS o WHERE o.version <= batch_end RETURNING o.version)
    SELECT count(*), max(gone.version) INTO deleted, deleted_to FROM gone;

    IF deleted > 0 THEN
        UPDATE "public"."order_lines_outbox_state" AS s
           SET trimmed_through = GREATEST(s.trimmed_through, deleted_to);
    END IF;
    RETURN deleted;
END
$trim$;
REVOKE ALL ON FUNCTION "public"."order_lines_outbox_trim"(bigint, integer) FROM PUBLIC;
COMMENT ON FUNCTION "public"."order_lines_outbox_trim"(bigint, integer) IS 'Tidemark: deletes delivered changes from public.order_lines_outbox.';

-- 7. What was installed --------------------------------------------------------------------------------
-- The options that shape what a destination receives, and a hash of the SQL above (comment lines left
-- out). PostgresOutbox.install compares them with its own configuration and refuses to change an
-- outbox installed with other options; PostgresOutbox.upgrade replaces what differs.
COMMENT ON TABLE "public"."order_lines_outbox_state" IS '{"tidemark":"outbox","format":1,"table":"public.\"Order Lines\"","outboxTable":"public.order_lines_outbox","changeFunction":"public.order_lines_changes","key":[{"column":"order_id","payloadKey":"order_id"},{"column":"line","payloadKey":"line"}],"columns":[{"column":"order_id","payloadKey":"order_id"},{"column":"line","payloadKey":"line"},{"column":"sku","payloadKey":"sku"},{"column":"qty","payloadKey":"qty"}],"truncate":"RECORD_DELETES","notifyChannel":null,"scriptHash":"b85ca02536ed2344071143db2d51fafc5697b49bb8b06751a1ecc5e68629d9ee"}';
