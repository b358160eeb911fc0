-- Tidemark temporal history for public.policies_cur
--
-- History table: public.policies_cur_history
-- Versioned columns: id, number, premium, status, holder, tags, terms, location
-- Primary key: id
-- Excluded columns: document
-- Change context settings: tidemark.changed_by, .changed_by_name, .correlation_id, .reason, .extra
--
-- Run as ONE transaction (Flyway and Liquibase do; with psql use --single-transaction),
-- as the role that owns the table and has CREATE on its schema. No superuser is needed.
-- Generated: do not edit. TemporalTable.verify() reports any difference as drift.

-- Tidemark's registry of temporal tables: one row per temporal table, with its options,
-- versioned columns, the hash of its generated function (verify() reports drift against it) and the
-- retention horizon. Created by the first installation (CREATE on the database, once); later ones
-- need only USAGE on the schema and SELECT, INSERT, UPDATE, DELETE on the table.
DO $tidemark$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'tidemark') THEN
        CREATE SCHEMA "tidemark";
    END IF;
    IF pg_catalog.to_regclass('"tidemark"."temporal_tables"') IS NULL THEN
        CREATE TABLE "tidemark"."temporal_tables" (
            source_schema     text        NOT NULL,
            source_table      text        NOT NULL,
            history_schema    text        NOT NULL,
            history_table     text        NOT NULL,
            key_columns       jsonb       NOT NULL,
            versioned_columns jsonb       NOT NULL,
            orphan_columns    jsonb       NOT NULL DEFAULT '[]',
            options           jsonb       NOT NULL,
            function_hash     text        NOT NULL,
            installed_at      timestamptz NOT NULL DEFAULT pg_catalog.now(),
            evolved_at        timestamptz,
            pruned_before     timestamptz,
            PRIMARY KEY (source_schema, source_table),
            UNIQUE (history_schema, history_table)
        );
    END IF;
END
$tidemark$;

-- Keep writers out until the trigger is in place, so no change slips between the seed and
-- the trigger. Readers are not blocked.
LOCK TABLE "public"."policies_cur" IN SHARE ROW EXCLUSIVE MODE;

-- The current version stays in the table: its start and its change context are two columns
-- filled by their defaults, so an INSERT writes no history. now() and current_setting() are
-- stable, so existing rows get the install instant and context without a table rewrite.
ALTER TABLE "public"."policies_cur"
    ADD COLUMN "tidemark_valid_from" timestamptz NOT NULL DEFAULT pg_catalog.now(),
    ADD COLUMN "tidemark_context" text[] DEFAULT ARRAY[CASE WHEN pg_catalog.current_setting('tidemark.changed_by', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.changed_by', true) END,
        CASE WHEN pg_catalog.current_setting('tidemark.changed_by_name', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.changed_by_name', true) END,
        CASE WHEN pg_catalog.current_setting('tidemark.correlation_id', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.correlation_id', true) END,
        CASE WHEN pg_catalog.current_setting('tidemark.reason', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.reason', true) END,
        ((CASE WHEN pg_catalog.current_setting('tidemark.extra', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.extra', true) END)::pg_catalog.jsonb)::pg_catalog.text];

-- Superseded versions and tombstones of public.policies_cur, appended by UPDATE, DELETE and
-- TRUNCATE and never updated. No row here is open: the current versions are the table's rows.
-- context: changed_by, changed_by_name, correlation_id, reason, extra (as text).
-- No CHECK constraints: PostgreSQL prepares them for every statement that writes the table, which
-- every UPDATE and DELETE of public.policies_cur would pay. Only the generated functions write
-- here, and they compute valid_from <= valid_to < 'infinity' and operation 1, 2 or 3 (insert,
-- update, tombstone) by construction; TemporalTable.checkInvariants() verifies the periods.
CREATE TABLE "public"."policies_cur_history_closed" (
    history_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "id" bigint,
    "number" character varying(20),
    "premium" public.money_amount,
    "status" public.policy_status,
    "holder" text COLLATE pg_catalog."C",
    "tags" text[],
    "terms" json,
    "location" point,
    valid_from      timestamptz NOT NULL,
    valid_to        timestamptz NOT NULL,
    operation       smallint    NOT NULL,
    chain_no        integer     NOT NULL,
    context         text[]
);

-- Closed versions of one key, newest first: the triggers' look-up of the key's last closed row
-- and per-key queries.
CREATE INDEX IF NOT EXISTS "policies_cur_history_closed_key_idx" ON "public"."policies_cur_history_closed" ("id", valid_from DESC, valid_to DESC);

-- One start per life of a key: a REPEATABLE READ writer that re-inserted a key another
-- transaction deleted unseen, and then changes it, fails with a serialization error instead of
-- archiving a version that overlaps the other's. (One open version per key is the table's
-- primary key.)
CREATE UNIQUE INDEX IF NOT EXISTS "policies_cur_history_closed_chain_uq" ON "public"."policies_cur_history_closed" ("id", chain_no) WHERE operation = 1;

-- Every version in the history table shape, row for row: the closed versions, and each row of
-- the table as its open version (history_id NULL). Its start is clamped to the end of the key's last
-- closed row, so a re-insert never overlaps the versions before it. tidemark_valid_from: the start
-- as stored, before that clamp; a condition on it is pushed below the look-up.
CREATE VIEW "public"."policies_cur_history" AS
SELECT c.history_id, c."id", c."number", c."premium", c."status", c."holder", c."tags", c."terms", c."location", c.valid_from, c.valid_to, c.operation, c.chain_no,
       c.context[1] AS changed_by, c.context[2] AS changed_by_name, c.context[3] AS correlation_id,
       c.context[4] AS reason, c.context[5]::pg_catalog.jsonb AS extra,
       c.valid_from AS "tidemark_valid_from"
  FROM "public"."policies_cur_history_closed" AS c
UNION ALL
SELECT NULL::bigint, t."id", t."number", t."premium", t."status", t."holder", t."tags", t."terms", t."location", GREATEST(t."tidemark_valid_from", l.valid_to), 'infinity'::timestamptz,
       (CASE WHEN l.operation IS NULL OR l.operation OPERATOR(pg_catalog.=) 3 THEN 1 ELSE 2 END)::smallint, COALESCE(l.chain_no OPERATOR(pg_catalog.+) CASE WHEN l.operation OPERATOR(pg_catalog.=) 3 THEN 1 ELSE 0 END, 1),
       t."tidemark_context"[1], t."tidemark_context"[2], t."tidemark_context"[3], t."tidemark_context"[4], t."tidemark_context"[5]::pg_catalog.jsonb,
       t."tidemark_valid_from"
  FROM "public"."policies_cur" AS t
  LEFT JOIN LATERAL (
        SELECT h.valid_to, h.operation, h.chain_no
          FROM "public"."policies_cur_history_closed" AS h
         WHERE h."id" OPERATOR(pg_catalog.=) t."id"
         ORDER BY h.valid_from DESC, h.valid_to DESC
         LIMIT 1) AS l ON true;

-- The row and DELETE statement triggers' function. SECURITY DEFINER: it writes history as its owner, so the application
-- role needs no privilege on the history table and cannot forge or rewrite it. Every relation,
-- type, function and operator is named with its schema, so the caller's search_path (which this
-- function does not SET: the clause is paid on every call) cannot substitute an object of its
-- own; PostgreSQL never looks up functions or operators in pg_temp.
CREATE OR REPLACE FUNCTION "public"."policies_cur_history_write"()
    RETURNS trigger
    LANGUAGE plpgsql
    SECURITY DEFINER
AS $tidemark$
DECLARE
    _now     pg_catalog.timestamptz := pg_catalog.now();
    _context pg_catalog.text[] := ARRAY[CASE WHEN pg_catalog.current_setting('tidemark.changed_by', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.changed_by', true) END,
                                  CASE WHEN pg_catalog.current_setting('tidemark.changed_by_name', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.changed_by_name', true) END,
                                  CASE WHEN pg_catalog.current_setting('tidemark.correlation_id', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.correlation_id', true) END,
                                  CASE WHEN pg_catalog.current_setting('tidemark.reason', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.reason', true) END,
                                  ((CASE WHEN pg_catalog.current_setting('tidemark.extra', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.extra', true) END)::pg_catalog.jsonb)::pg_catalog.text];
    _last_to         pg_catalog.timestamptz;
    _last_operation  pg_catalog.int2;
    _chain           pg_catalog.int4;
    _operation       pg_catalog.int2;
    _from            pg_catalog.timestamptz;
    _to              pg_catalog.timestamptz;
    _rows            pg_catalog.int8;
    _stale_key       pg_catalog.text;
BEGIN
    IF TG_TABLE_SCHEMA OPERATOR(pg_catalog.<>) 'public' OR TG_TABLE_NAME OPERATOR(pg_catalog.<>) 'policies_cur' THEN
        RAISE EXCEPTION 'tidemark: % was generated for public.policies_cur, not for %.%', TG_NAME, TG_TABLE_SCHEMA, TG_TABLE_NAME
              USING ERRCODE = 'insufficient_privilege';
    END IF;

    IF TG_LEVEL OPERATOR(pg_catalog.=) 'STATEMENT' THEN
        -- A DELETE statement: each deleted row's version and its tombstone, as the row branch below
        -- archives them for one row, in one statement for all of them.
        IF pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.=) 'read committed' THEN
            -- Here no other transaction can have started a chain unseen; the index still refuses it.
            INSERT INTO "public"."policies_cur_history_closed" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, context)
            SELECT o."id", o."number", o."premium", o."status", o."holder", o."tags", o."terms", o."location", v.valid_from, v.valid_to, v.operation, e.chain_no, v.context
              FROM tidemark_deleted AS o
              LEFT JOIN LATERAL (
                    SELECT h.valid_to, h.operation, h.chain_no
                      FROM "public"."policies_cur_history_closed" AS h
                     WHERE h."id" OPERATOR(pg_catalog.=) o."id"
                     ORDER BY h.valid_from DESC, h.valid_to DESC
                     LIMIT 1) AS l ON true
             CROSS JOIN LATERAL (SELECT GREATEST(o."tidemark_valid_from", l.valid_to) AS f) AS s
             CROSS JOIN LATERAL (SELECT GREATEST(_now, s.f OPERATOR(pg_catalog.+) interval '1 microsecond') AS t,
                                        COALESCE(l.chain_no OPERATOR(pg_catalog.+) CASE WHEN l.operation OPERATOR(pg_catalog.=) 3 THEN 1 ELSE 0 END, 1) AS chain_no) AS e
             CROSS JOIN LATERAL (VALUES (s.f, e.t, (CASE WHEN l.operation IS NULL OR l.operation OPERATOR(pg_catalog.=) 3 THEN 1 ELSE 2 END)::pg_catalog.int2, o."tidemark_context"),
                                        (e.t, e.t, 3::pg_catalog.int2, _context))
                                AS v(valid_from, valid_to, operation, context)
             WHERE NOT COALESCE(l.operation OPERATOR(pg_catalog.<>) 3 AND o."tidemark_valid_from" OPERATOR(pg_catalog.<>) l.valid_to, false);
        ELSE
            SELECT (o."id")::pg_catalog.text INTO _stale_key
              FROM tidemark_deleted AS o
              JOIN LATERAL (
                    SELECT h.valid_to, h.operation, h.chain_no
                      FROM "public"."policies_cur_history_closed" AS h
                     WHERE h."id" OPERATOR(pg_catalog.=) o."id"
                     ORDER BY h.valid_from DESC, h.valid_to DESC
                     LIMIT 1) AS l ON true
             WHERE l.operation OPERATOR(pg_catalog.<>) 3 AND o."tidemark_valid_from" OPERATOR(pg_catalog.<>) l.valid_to
             LIMIT 1;
            IF _stale_key IS NOT NULL THEN
                RAISE EXCEPTION 'tidemark: a concurrent transaction changed the history of %.% for key % unseen by this snapshot',
                      TG_TABLE_SCHEMA, TG_TABLE_NAME, _stale_key
                      USING ERRCODE = 'serialization_failure';
            END IF;
            INSERT INTO "public"."policies_cur_history_closed" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, context)
            SELECT o."id", o."number", o."premium", o."status", o."holder", o."tags", o."terms", o."location", v.valid_from, v.valid_to, v.operation, e.chain_no, v.context
              FROM tidemark_deleted AS o
              LEFT JOIN LATERAL (
                    SELECT h.valid_to, h.operation, h.chain_no
                      FROM "public"."policies_cur_history_closed" AS h
                     WHERE h."id" OPERATOR(pg_catalog.=) o."id"
                     ORDER BY h.valid_from DESC, h.valid_to DESC
                     LIMIT 1) AS l ON true
             CROSS JOIN LATERAL (SELECT GREATEST(o."tidemark_valid_from", l.valid_to) AS f) AS s
             CROSS JOIN LATERAL (SELECT GREATEST(_now, s.f OPERATOR(pg_catalog.+) interval '1 microsecond') AS t,
                                        COALESCE(l.chain_no OPERATOR(pg_catalog.+) CASE WHEN l.operation OPERATOR(pg_catalog.=) 3 THEN 1 ELSE 0 END, 1) AS chain_no) AS e
             CROSS JOIN LATERAL (VALUES (s.f, e.t, (CASE WHEN l.operation IS NULL OR l.operation OPERATOR(pg_catalog.=) 3 THEN 1 ELSE 2 END)::pg_catalog.int2, o."tidemark_context"),
                                        (e.t, e.t, 3::pg_catalog.int2, _context))
                                AS v(valid_from, valid_to, operation, context)
             WHERE NOT COALESCE(l.operation OPERATOR(pg_catalog.<>) 3 AND o."tidemark_valid_from" OPERATOR(pg_catalog.<>) l.valid_to, false)
             ON CONFLICT ("id", chain_no) WHERE operation OPERATOR(pg_catalog.=) 1 DO NOTHING;
        END IF;
        GET DIAGNOSTICS _rows = ROW_COUNT;
        IF _rows OPERATOR(pg_catalog.<>) (SELECT 2 OPERATOR(pg_catalog.*) pg_catalog.count(*) FROM tidemark_deleted) THEN
            RAISE EXCEPTION 'tidemark: a concurrent transaction changed the history of %.% for a key this statement deleted, unseen by this snapshot',
                  TG_TABLE_SCHEMA, TG_TABLE_NAME
                  USING ERRCODE = 'serialization_failure';
        END IF;
        RETURN NULL;
    END IF;

    IF TG_OP OPERATOR(pg_catalog.=) 'UPDATE'
       AND (NEW."tidemark_valid_from" OPERATOR(pg_catalog.<>) OLD."tidemark_valid_from" OR NEW."tidemark_valid_from" IS NULL
            OR NOT COALESCE(NEW."tidemark_context" OPERATOR(pg_catalog.=) OLD."tidemark_context", NEW."tidemark_context" IS NULL AND OLD."tidemark_context" IS NULL))
       AND NEW."id" OPERATOR(pg_catalog.=) OLD."id" AND COALESCE(NEW."id" OPERATOR(pg_catalog.=) OLD."id", NEW."id" IS NULL AND OLD."id" IS NULL)
           AND COALESCE(NEW."number" OPERATOR(pg_catalog.=) OLD."number", NEW."number" IS NULL AND OLD."number" IS NULL)
           AND COALESCE(NEW."premium" OPERATOR(pg_catalog.=) OLD."premium", NEW."premium" IS NULL AND OLD."premium" IS NULL)
           AND COALESCE(NEW."status" OPERATOR(pg_catalog.=) OLD."status", NEW."status" IS NULL AND OLD."status" IS NULL)
           AND COALESCE(NEW."holder" OPERATOR(pg_catalog.=) OLD."holder", NEW."holder" IS NULL AND OLD."holder" IS NULL)
           AND COALESCE(NEW."tags" OPERATOR(pg_catalog.=) OLD."tags", NEW."tags" IS NULL AND OLD."tags" IS NULL)
           AND COALESCE(NEW."terms"::pg_catalog.text OPERATOR(pg_catalog.=) OLD."terms"::pg_catalog.text, NEW."terms"::pg_catalog.text IS NULL AND OLD."terms"::pg_catalog.text IS NULL)
           AND COALESCE(NEW."location"::pg_catalog.text OPERATOR(pg_catalog.=) OLD."location"::pg_catalog.text, NEW."location"::pg_catalog.text IS NULL AND OLD."location"::pg_catalog.text IS NULL) THEN
        -- No versioned column changed, only the version's own columns: they cannot be rewritten.
        NEW."tidemark_valid_from" := OLD."tidemark_valid_from";
        NEW."tidemark_context" := OLD."tidemark_context";
        RETURN NEW;
    END IF;
    -- Archive the superseded version: it starts no earlier than the end of the key's last closed row
    -- (the insert clamp) and ends no earlier than 1 microsecond after it starts. In READ COMMITTED
    -- the look-up sees what a concurrent writer of the key committed while this one waited for the
    -- row lock. The chain-start index turns an unseen concurrent chain (REPEATABLE READ) into a
    -- serialization error. Small statements, whose plans PL/pgSQL
    -- caches.
    SELECT l.valid_to, l.operation, l.chain_no INTO _last_to, _last_operation, _chain
      FROM (
            SELECT h.valid_to, h.operation, h.chain_no
              FROM "public"."policies_cur_history_closed" AS h
             WHERE h."id" OPERATOR(pg_catalog.=) OLD."id"
             ORDER BY h.valid_from DESC, h.valid_to DESC
             LIMIT 1) AS l;
    -- (Both are NOT NULL columns once a closed row exists; IS DISTINCT FROM would resolve = through
    -- the caller's search_path.)
    IF _last_operation OPERATOR(pg_catalog.<>) 3
       AND OLD."tidemark_valid_from" OPERATOR(pg_catalog.<>) _last_to THEN
        -- A version that follows a closed, non-tombstone row starts exactly where that row ended.
        -- If not, this snapshot missed a concurrent change of the key (a REPEATABLE READ writer
        -- re-inserted a key another transaction deleted unseen): archiving would overlap it.
        RAISE EXCEPTION 'tidemark: a concurrent transaction changed the history of %.% for key % unseen by this snapshot',
              TG_TABLE_SCHEMA, TG_TABLE_NAME, (OLD."id")::pg_catalog.text
              USING ERRCODE = 'serialization_failure';
    END IF;
    _from := GREATEST(OLD."tidemark_valid_from", _last_to);
    _to := GREATEST(_now, _from OPERATOR(pg_catalog.+) interval '1 microsecond');
    IF _last_operation IS NULL OR _last_operation OPERATOR(pg_catalog.=) 3 THEN
        _operation := 1;  -- the version began with an insert, and a new chain
        _chain := COALESCE(_chain OPERATOR(pg_catalog.+) 1, 1);
    ELSE
        _operation := 2;
    END IF;
    IF TG_OP OPERATOR(pg_catalog.=) 'UPDATE' AND NEW."id" OPERATOR(pg_catalog.=) OLD."id" THEN
        IF _operation OPERATOR(pg_catalog.=) 2
           OR pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.=) 'read committed' THEN
            -- Here no other transaction can have started this chain unseen; the index still refuses it.
            INSERT INTO "public"."policies_cur_history_closed" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, context)
            VALUES (OLD."id", OLD."number", OLD."premium", OLD."status", OLD."holder", OLD."tags", OLD."terms", OLD."location", _from, _to, _operation, _chain, OLD."tidemark_context");
        ELSE
            INSERT INTO "public"."policies_cur_history_closed" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, context)
            VALUES (OLD."id", OLD."number", OLD."premium", OLD."status", OLD."holder", OLD."tags", OLD."terms", OLD."location", _from, _to, _operation, _chain, OLD."tidemark_context")
            ON CONFLICT ("id", chain_no) WHERE operation OPERATOR(pg_catalog.=) 1 DO NOTHING;
            GET DIAGNOSTICS _rows = ROW_COUNT;
            IF _rows OPERATOR(pg_catalog.<>) 1 THEN
                RAISE EXCEPTION 'tidemark: a concurrent transaction started the same history chain of %.% for key %',
                      TG_TABLE_SCHEMA, TG_TABLE_NAME, (OLD."id")::pg_catalog.text
                      USING ERRCODE = 'serialization_failure';
            END IF;
        END IF;
        -- The next version starts exactly where the archived one ended.
        NEW."tidemark_valid_from" := _to;
        NEW."tidemark_context" := _context;
        RETURN NEW;
    END IF;
    -- The old key of a key update: the version, and the tombstone (an empty period) that ends the
    -- chain, in one statement.
    IF _operation OPERATOR(pg_catalog.=) 2
       OR pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.=) 'read committed' THEN
        -- Here no other transaction can have started this chain unseen; the index still refuses it.
        INSERT INTO "public"."policies_cur_history_closed" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, context)
        VALUES (OLD."id", OLD."number", OLD."premium", OLD."status", OLD."holder", OLD."tags", OLD."terms", OLD."location", _from, _to, _operation, _chain, OLD."tidemark_context"),
               (OLD."id", OLD."number", OLD."premium", OLD."status", OLD."holder", OLD."tags", OLD."terms", OLD."location", _to, _to, 3, _chain, _context);
    ELSE
        INSERT INTO "public"."policies_cur_history_closed" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, context)
        VALUES (OLD."id", OLD."number", OLD."premium", OLD."status", OLD."holder", OLD."tags", OLD."terms", OLD."location", _from, _to, _operation, _chain, OLD."tidemark_context"),
               (OLD."id", OLD."number", OLD."premium", OLD."status", OLD."holder", OLD."tags", OLD."terms", OLD."location", _to, _to, 3, _chain, _context)
        ON CONFLICT ("id", chain_no) WHERE operation OPERATOR(pg_catalog.=) 1 DO NOTHING;
        GET DIAGNOSTICS _rows = ROW_COUNT;
        IF _rows OPERATOR(pg_catalog.<>) 2 THEN
            RAISE EXCEPTION 'tidemark: a concurrent transaction started the same history chain of %.% for key %',
                  TG_TABLE_SCHEMA, TG_TABLE_NAME, (OLD."id")::pg_catalog.text
                  USING ERRCODE = 'serialization_failure';
        END IF;
    END IF;
    -- The new key of a key update starts a chain, as an insert.
    NEW."tidemark_valid_from" := _now;
    NEW."tidemark_context" := _context;
    RETURN NEW;
END;
$tidemark$;

-- Nobody else may attach this SECURITY DEFINER function to a table of their own.
REVOKE ALL ON FUNCTION "public"."policies_cur_history_write"() FROM PUBLIC;

-- TRUNCATE fires no row trigger; this closes every open version instead of leaving them open.
CREATE OR REPLACE FUNCTION "public"."policies_cur_history_truncate"()
    RETURNS trigger
    LANGUAGE plpgsql
    SECURITY DEFINER
AS $tidemark$
DECLARE
    _now     pg_catalog.timestamptz := pg_catalog.now();
    _context pg_catalog.text[] := ARRAY[CASE WHEN pg_catalog.current_setting('tidemark.changed_by', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.changed_by', true) END,
                                  CASE WHEN pg_catalog.current_setting('tidemark.changed_by_name', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.changed_by_name', true) END,
                                  CASE WHEN pg_catalog.current_setting('tidemark.correlation_id', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.correlation_id', true) END,
                                  CASE WHEN pg_catalog.current_setting('tidemark.reason', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.reason', true) END,
                                  ((CASE WHEN pg_catalog.current_setting('tidemark.extra', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.extra', true) END)::pg_catalog.jsonb)::pg_catalog.text];
BEGIN
    IF TG_TABLE_SCHEMA OPERATOR(pg_catalog.<>) 'public' OR TG_TABLE_NAME OPERATOR(pg_catalog.<>) 'policies_cur' THEN
        RAISE EXCEPTION 'tidemark: % was generated for public.policies_cur, not for %.%', TG_NAME, TG_TABLE_SCHEMA, TG_TABLE_NAME
              USING ERRCODE = 'insufficient_privilege';
    END IF;
    -- The archive reads the rows through this transaction's snapshot: outside READ COMMITTED it can
    -- be older than the rows TRUNCATE removes (rows inserted or changed since would vanish unarchived).
    IF pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.<>) 'read committed' THEN
        RAISE EXCEPTION 'tidemark: TRUNCATE of %.% is only archived in READ COMMITTED; run it there or use DELETE',
              TG_TABLE_SCHEMA, TG_TABLE_NAME
              USING ERRCODE = 'serialization_failure';
    END IF;
    -- TRUNCATE fires no row trigger: before the rows go, archive each one's version and write its
    -- tombstone, exactly as a DELETE of each row would have.
    WITH archived AS (
        INSERT INTO "public"."policies_cur_history_closed" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, context)
        SELECT t."id", t."number", t."premium", t."status", t."holder", t."tags", t."terms", t."location", s.f, GREATEST(_now, s.f OPERATOR(pg_catalog.+) interval '1 microsecond'),
               CASE WHEN l.operation IS NULL OR l.operation OPERATOR(pg_catalog.=) 3 THEN 1 ELSE 2 END, COALESCE(l.chain_no OPERATOR(pg_catalog.+) CASE WHEN l.operation OPERATOR(pg_catalog.=) 3 THEN 1 ELSE 0 END, 1), t."tidemark_context"
          FROM "public"."policies_cur" AS t
          LEFT JOIN LATERAL (
                SELECT h.valid_to, h.operation, h.chain_no
                  FROM "public"."policies_cur_history_closed" AS h
                 WHERE h."id" OPERATOR(pg_catalog.=) t."id"
                 ORDER BY h.valid_from DESC, h.valid_to DESC
                 LIMIT 1) AS l ON true
         CROSS JOIN LATERAL (SELECT GREATEST(t."tidemark_valid_from", l.valid_to) AS f) AS s
        RETURNING "id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_to, chain_no
    )
    INSERT INTO "public"."policies_cur_history_closed" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, context)
    SELECT a."id", a."number", a."premium", a."status", a."holder", a."tags", a."terms", a."location", a.valid_to, a.valid_to, 3, a.chain_no, _context
      FROM archived AS a;
    RETURN NULL;
END;
$tidemark$;

-- Nobody else may attach this SECURITY DEFINER function to a table of their own.
REVOKE ALL ON FUNCTION "public"."policies_cur_history_truncate"() FROM PUBLIC;

-- The insert trigger's function: every new version starts at the transaction's now(), and a
-- context supplied with the row must have a JSON extra. It writes nothing but the row, so it
-- runs with the writer's rights; every name in it is qualified, so the caller's search_path
-- cannot substitute an object of its own.
CREATE OR REPLACE FUNCTION "public"."policies_cur_history_insert"()
    RETURNS trigger
    LANGUAGE plpgsql
AS $tidemark$
BEGIN
    IF NEW."tidemark_valid_from" OPERATOR(pg_catalog.=) pg_catalog.now() AND NEW."tidemark_context"[5] IS NULL THEN
        RETURN NEW;  -- the column defaults: nothing to reset or check
    END IF;
    IF NEW."tidemark_valid_from" IS NULL OR NEW."tidemark_valid_from" OPERATOR(pg_catalog.<>) pg_catalog.now() THEN
        NEW."tidemark_valid_from" := pg_catalog.now();
    END IF;
    IF NEW."tidemark_context"[5] IS NOT NULL THEN
        BEGIN
            PERFORM (NEW."tidemark_context"[5])::pg_catalog.jsonb;
        EXCEPTION WHEN invalid_text_representation THEN
            RAISE EXCEPTION 'tidemark: the change context of a row inserted into %.% is malformed: its extra (element 5 of tidemark_context) is not JSON',
                  TG_TABLE_SCHEMA, TG_TABLE_NAME
                  USING ERRCODE = 'check_violation', DETAIL = SQLERRM;
        END;
    END IF;
    RETURN NEW;
END;
$tidemark$;

-- Only the trigger calls it.
REVOKE ALL ON FUNCTION "public"."policies_cur_history_insert"() FROM PUBLIC;

-- INSERT: the column defaults date the version and record its context; the function only
-- resets a start the client supplied and checks a supplied context.
CREATE OR REPLACE TRIGGER "policies_cur_history_ins_trg"
    BEFORE INSERT ON "public"."policies_cur"
    FOR EACH ROW EXECUTE FUNCTION "public"."policies_cur_history_insert"();

-- UPDATE of a versioned column (or of the version's own columns): archive the superseded
-- version and start the next. Updates of excluded columns only call nothing.
CREATE OR REPLACE TRIGGER "policies_cur_history_upd_trg"
    BEFORE UPDATE ON "public"."policies_cur"
    FOR EACH ROW
    WHEN (NOT (COALESCE(NEW."id" OPERATOR(pg_catalog.=) OLD."id", NEW."id" IS NULL AND OLD."id" IS NULL)
                   AND COALESCE(NEW."number" OPERATOR(pg_catalog.=) OLD."number", NEW."number" IS NULL AND OLD."number" IS NULL)
                   AND COALESCE(NEW."premium" OPERATOR(pg_catalog.=) OLD."premium", NEW."premium" IS NULL AND OLD."premium" IS NULL)
                   AND COALESCE(NEW."status" OPERATOR(pg_catalog.=) OLD."status", NEW."status" IS NULL AND OLD."status" IS NULL)
                   AND COALESCE(NEW."holder" OPERATOR(pg_catalog.=) OLD."holder", NEW."holder" IS NULL AND OLD."holder" IS NULL)
                   AND COALESCE(NEW."tags" OPERATOR(pg_catalog.=) OLD."tags", NEW."tags" IS NULL AND OLD."tags" IS NULL)
                   AND COALESCE(NEW."terms"::pg_catalog.text OPERATOR(pg_catalog.=) OLD."terms"::pg_catalog.text, NEW."terms"::pg_catalog.text IS NULL AND OLD."terms"::pg_catalog.text IS NULL)
                   AND COALESCE(NEW."location"::pg_catalog.text OPERATOR(pg_catalog.=) OLD."location"::pg_catalog.text, NEW."location"::pg_catalog.text IS NULL AND OLD."location"::pg_catalog.text IS NULL))
          OR NEW."tidemark_valid_from" IS NULL OR NEW."tidemark_valid_from" OPERATOR(pg_catalog.<>) OLD."tidemark_valid_from"
          OR NOT COALESCE(NEW."tidemark_context" OPERATOR(pg_catalog.=) OLD."tidemark_context", NEW."tidemark_context" IS NULL AND OLD."tidemark_context" IS NULL))
    EXECUTE FUNCTION "public"."policies_cur_history_write"();

-- DELETE: archive every deleted row's version and write its tombstone, once per
-- statement, from the rows it deleted (TriggerMode.STATEMENT). AFTER the rows are gone, so
-- that a BEFORE DELETE trigger of the application that cancels a delete leaves no tombstone.
CREATE OR REPLACE TRIGGER "policies_cur_history_del_trg"
    AFTER DELETE ON "public"."policies_cur" REFERENCING OLD TABLE AS tidemark_deleted
    FOR EACH STATEMENT EXECUTE FUNCTION "public"."policies_cur_history_write"();

-- TRUNCATE policy: CLOSE_VERSIONS.
CREATE OR REPLACE TRIGGER "policies_cur_history_truncate_trg"
    BEFORE TRUNCATE ON "public"."policies_cur"
    FOR EACH STATEMENT EXECUTE FUNCTION "public"."policies_cur_history_truncate"();

-- The table as it was at an instant, as its own row type, so point-in-time joins are plain
-- SQL: SELECT * FROM public.policies_cur_as_of('2024-01-01') AS p JOIN ... Runs with the caller's rights.
CREATE OR REPLACE FUNCTION "public"."policies_cur_as_of"(at timestamptz)
    RETURNS SETOF "public"."policies_cur"
    LANGUAGE plpgsql
    STABLE
    SET search_path = pg_catalog, pg_temp
AS $tidemark$
DECLARE
    _horizon timestamptz;
BEGIN
    -- Before the retention horizon, versions may have been pruned: refuse rather than answer wrong.
    SELECT r.pruned_before INTO _horizon
      FROM "tidemark"."temporal_tables" AS r
     WHERE r.source_schema = 'public' AND r.source_table = 'policies_cur';
    IF at < _horizon THEN
        RAISE EXCEPTION 'tidemark: history of public.policies_cur before % was pruned; ask for an instant at or after it', _horizon
              USING ERRCODE = 'data_exception';
    END IF;
    RETURN QUERY
    SELECT h."id", h."number", h."premium", h."status", h."holder", h."tags", h."terms", h."location", NULL::bytea, h.valid_from, ARRAY[h.changed_by, h.changed_by_name, h.correlation_id, h.reason, h.extra::pg_catalog.text]
      FROM "public"."policies_cur_history" AS h
     WHERE h.history_id IS NOT NULL
       AND tstzrange(h.valid_from, h.valid_to) @> at
    UNION ALL
    SELECT t."id", t."number", t."premium", t."status", t."holder", t."tags", t."terms", t."location", t."document", t."tidemark_valid_from", t."tidemark_context"
      FROM "public"."policies_cur" AS t
     WHERE t."tidemark_valid_from" <= at
       AND NOT EXISTS (SELECT 1 FROM "public"."policies_cur_history" AS h
                        WHERE h.history_id IS NOT NULL AND h."id" OPERATOR(pg_catalog.=) t."id" AND h.valid_to > at);
END;
$tidemark$;

-- Register the table, its versioned columns and the hash of its generated function.
INSERT INTO "tidemark"."temporal_tables" (source_schema, source_table, history_schema, history_table,
        key_columns, versioned_columns, orphan_columns, options, function_hash)
VALUES ('public', 'policies_cur', 'public', 'policies_cur_history',
        '["id"]',
        '[{"name":"id","type":"bigint"},{"name":"number","type":"character varying(20)"},{"name":"premium","type":"public.money_amount"},{"name":"status","type":"public.policy_status"},{"name":"holder","type":"text COLLATE pg_catalog.\"C\""},{"name":"tags","type":"text[]"},{"name":"terms","type":"json"},{"name":"location","type":"point"}]',
        '[]',
        '{"settingsPrefix":"tidemark","truncatePolicy":"CLOSE_VERSIONS","triggerMode":"STATEMENT","periodIndex":false,"storage":"CURRENT_IN_TABLE","sessionUserColumn":false,"transactionIdColumn":false,"excluded":["document"]}',
        'aea5acba7b4a4f635c822854f331bf03acc7ffc98e2eac61191764fb43ed9a57')
ON CONFLICT (source_schema, source_table) DO UPDATE
   SET key_columns = EXCLUDED.key_columns, versioned_columns = EXCLUDED.versioned_columns,
       orphan_columns = EXCLUDED.orphan_columns, options = EXCLUDED.options,
       function_hash = EXCLUDED.function_hash, evolved_at = pg_catalog.now();

