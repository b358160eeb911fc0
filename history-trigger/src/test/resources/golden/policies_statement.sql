-- Tidemark temporal history for public.policies_stmt
--
-- History table: public.policies_stmt_history
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
LOCK TABLE "public"."policies_stmt" IN SHARE ROW EXCLUSIVE MODE;

-- History of public.policies_stmt: one row per version, plus a tombstone per delete.
-- Every versioned column keeps its exact type; all are nullable and no constraint of the table is
-- copied, so history can hold any past value. operation: 1 insert, 2 update, 3 delete.
-- chain_no: which life of the key a row belongs to (1 from the first insert, +1 after each delete).
CREATE TABLE "public"."policies_stmt_history" (
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
    valid_to        timestamptz NOT NULL DEFAULT 'infinity',
    operation       smallint    NOT NULL CHECK (operation IN (1, 2, 3)),
    chain_no        integer     NOT NULL,
    changed_by      text,
    changed_by_name text,
    correlation_id  text,
    reason          text,
    extra           jsonb,
    CHECK (valid_from <= valid_to)
);

-- Every existing row becomes an open version (operation 1), dated at install time.
INSERT INTO "public"."policies_stmt_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no)
SELECT t."id", t."number", t."premium", t."status", t."holder", t."tags", t."terms", t."location", pg_catalog.now(), 'infinity', 1, 1
  FROM "public"."policies_stmt" AS t;

-- Versions of one key, newest first: the trigger's lookups and as-of queries for one key.
-- valid_to DESC breaks the tie between a tombstone and a re-insert that starts at the same instant.
CREATE INDEX IF NOT EXISTS "policies_stmt_history_key_idx" ON "public"."policies_stmt_history" ("id", valid_from DESC, valid_to DESC);

-- At most one open version per key, enforced by the database itself.
CREATE UNIQUE INDEX IF NOT EXISTS "policies_stmt_history_open_uq" ON "public"."policies_stmt_history" ("id") WHERE valid_to = 'infinity';

-- One start per life of a key: two transactions that cannot see each other's history (REPEATABLE
-- READ) cannot both start the same chain; the later one fails with a serialization error instead.
CREATE UNIQUE INDEX IF NOT EXISTS "policies_stmt_history_chain_uq" ON "public"."policies_stmt_history" ("id", chain_no) WHERE operation = 1;

-- Periods as ranges, for whole-table as-of snapshots and window queries.
CREATE INDEX IF NOT EXISTS "policies_stmt_history_period_idx" ON "public"."policies_stmt_history" USING gist (tstzrange(valid_from, valid_to));

-- The statement triggers' function. SECURITY DEFINER: it writes history as its owner, so the application
-- role needs no privilege on the history table and cannot forge or rewrite it. Every relation,
-- type, function and operator is named with its schema, so the caller's search_path (which this
-- function does not SET: the clause is paid on every call) cannot substitute an object of its
-- own; PostgreSQL never looks up functions or operators in pg_temp.
CREATE OR REPLACE FUNCTION "public"."policies_stmt_history_write"()
    RETURNS trigger
    LANGUAGE plpgsql
    SECURITY DEFINER
AS $tidemark$
DECLARE
    -- Change context: transaction-local settings pushed by the application; '' means absent.
    -- (NULLIF would resolve its = through the caller's search_path, so the test is spelled out.)
    _now             pg_catalog.timestamptz := pg_catalog.now();
    _changed_by      pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.changed_by', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.changed_by', true) END;
    _changed_by_name pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.changed_by_name', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.changed_by_name', true) END;
    _correlation_id  pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.correlation_id', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.correlation_id', true) END;
    _reason          pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.reason', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.reason', true) END;
    _extra           pg_catalog.jsonb := (CASE WHEN pg_catalog.current_setting('tidemark.extra', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.extra', true) END)::pg_catalog.jsonb;
    _written         bigint;
    _expected        bigint;
BEGIN
    IF TG_TABLE_SCHEMA OPERATOR(pg_catalog.<>) 'public' OR TG_TABLE_NAME OPERATOR(pg_catalog.<>) 'policies_stmt' THEN
        RAISE EXCEPTION 'tidemark: % was generated for public.policies_stmt, not for %.%', TG_NAME, TG_TABLE_SCHEMA, TG_TABLE_NAME
              USING ERRCODE = 'insufficient_privilege';
    END IF;

    IF TG_OP OPERATOR(pg_catalog.=) 'INSERT' THEN
        IF (SELECT pg_catalog.count(*) FROM new_rows) OPERATOR(pg_catalog.<=) 64 THEN
            INSERT INTO "public"."policies_stmt_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
            SELECT s."id", s."number", s."premium", s."status", s."holder", s."tags", s."terms", s."location", GREATEST(_now, l.valid_to), 'infinity', 1, COALESCE(l.chain_no, 0) OPERATOR(pg_catalog.+) 1, _changed_by, _changed_by_name, _correlation_id, _reason, _extra
              FROM (SELECT n.* FROM new_rows AS n) AS s
              LEFT JOIN LATERAL (
                    SELECT h.valid_to, h.chain_no FROM "public"."policies_stmt_history" AS h
                     WHERE h."id" OPERATOR(pg_catalog.=) s."id"
                     ORDER BY h.valid_from DESC, h.valid_to DESC
                     LIMIT 1
                       FOR UPDATE) AS l ON true
            ON CONFLICT ("id", chain_no) WHERE operation OPERATOR(pg_catalog.=) 1 DO NOTHING;
            GET DIAGNOSTICS _written = ROW_COUNT;
            _expected := (SELECT pg_catalog.count(*) FROM (SELECT n.* FROM new_rows AS n) AS s);
            IF _written OPERATOR(pg_catalog.<) _expected THEN
                RAISE EXCEPTION 'tidemark: a concurrent transaction started a history chain of %.% that this statement also starts', TG_TABLE_SCHEMA, TG_TABLE_NAME
                      USING ERRCODE = 'serialization_failure';
            END IF;
        ELSE
            EXECUTE $sql$
            INSERT INTO "public"."policies_stmt_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
            SELECT s."id", s."number", s."premium", s."status", s."holder", s."tags", s."terms", s."location", GREATEST($1, l.valid_to), 'infinity', 1, COALESCE(l.chain_no, 0) OPERATOR(pg_catalog.+) 1, $2, $3, $4, $5, $6
              FROM (SELECT n.* FROM new_rows AS n) AS s
              LEFT JOIN LATERAL (
                    SELECT h.valid_to, h.chain_no FROM "public"."policies_stmt_history" AS h
                     WHERE h."id" OPERATOR(pg_catalog.=) s."id"
                     ORDER BY h.valid_from DESC, h.valid_to DESC
                     LIMIT 1
                       FOR UPDATE) AS l ON true
            ON CONFLICT ("id", chain_no) WHERE operation OPERATOR(pg_catalog.=) 1 DO NOTHING
            $sql$ USING _now, _changed_by, _changed_by_name, _correlation_id, _reason, _extra;
            GET DIAGNOSTICS _written = ROW_COUNT;
            EXECUTE $sql$SELECT pg_catalog.count(*) FROM (SELECT n.* FROM new_rows AS n) AS s$sql$ INTO _expected;
            IF _written OPERATOR(pg_catalog.<) _expected THEN
                RAISE EXCEPTION 'tidemark: a concurrent transaction started a history chain of %.% that this statement also starts', TG_TABLE_SCHEMA, TG_TABLE_NAME
                      USING ERRCODE = 'serialization_failure';
            END IF;
        END IF;
    ELSIF TG_OP OPERATOR(pg_catalog.=) 'UPDATE' THEN
        -- Old and new rows are paired by primary key. A key that only the old rows have was
        -- moved away (its chain ends with a tombstone); one that only the new rows have starts a chain.
        IF (SELECT pg_catalog.count(*) FROM new_rows) OPERATOR(pg_catalog.<=) 64 THEN
            WITH gone AS (SELECT o.* FROM old_rows AS o WHERE NOT EXISTS (SELECT 1 FROM new_rows AS n WHERE n."id" OPERATOR(pg_catalog.=) o."id")),
                 closed AS (
                     UPDATE "public"."policies_stmt_history" AS h
                        SET valid_to = GREATEST(_now, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
                      WHERE h."id" OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT g."id" FROM gone AS g)) AND h.valid_to OPERATOR(pg_catalog.=) 'infinity'
                     RETURNING h."id", h.valid_to, h.chain_no)
            INSERT INTO "public"."policies_stmt_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
            SELECT g."id", g."number", g."premium", g."status", g."holder", g."tags", g."terms", g."location", COALESCE(c.valid_to, _now), COALESCE(c.valid_to, _now), 3, COALESCE(c.chain_no, 1), _changed_by, _changed_by_name, _correlation_id, _reason, _extra
              FROM gone AS g LEFT JOIN closed AS c ON c."id" OPERATOR(pg_catalog.=) g."id";
            -- Rows where no versioned column changed write nothing (json, xml, ... compared as text).
            WITH changed AS (
                     SELECT n.* FROM new_rows AS n
                      WHERE EXISTS (SELECT 1 FROM old_rows AS o WHERE o."id" OPERATOR(pg_catalog.=) n."id"
                                       AND NOT (COALESCE(n."id" OPERATOR(pg_catalog.=) o."id", n."id" IS NULL AND o."id" IS NULL)
                                                            AND COALESCE(n."number" OPERATOR(pg_catalog.=) o."number", n."number" IS NULL AND o."number" IS NULL)
                                                            AND COALESCE(n."premium" OPERATOR(pg_catalog.=) o."premium", n."premium" IS NULL AND o."premium" IS NULL)
                                                            AND COALESCE(n."status" OPERATOR(pg_catalog.=) o."status", n."status" IS NULL AND o."status" IS NULL)
                                                            AND COALESCE(n."holder" OPERATOR(pg_catalog.=) o."holder", n."holder" IS NULL AND o."holder" IS NULL)
                                                            AND COALESCE(n."tags" OPERATOR(pg_catalog.=) o."tags", n."tags" IS NULL AND o."tags" IS NULL)
                                                            AND COALESCE(n."terms"::pg_catalog.text OPERATOR(pg_catalog.=) o."terms"::pg_catalog.text, n."terms"::pg_catalog.text IS NULL AND o."terms"::pg_catalog.text IS NULL)
                                                            AND COALESCE(n."location"::pg_catalog.text OPERATOR(pg_catalog.=) o."location"::pg_catalog.text, n."location"::pg_catalog.text IS NULL AND o."location"::pg_catalog.text IS NULL)))),
                 closed AS (
                     UPDATE "public"."policies_stmt_history" AS h
                        SET valid_to = GREATEST(_now, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
                      WHERE h."id" OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT g."id" FROM changed AS g)) AND h.valid_to OPERATOR(pg_catalog.=) 'infinity'
                     RETURNING h."id", h.valid_to, h.chain_no)
            INSERT INTO "public"."policies_stmt_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
            SELECT g."id", g."number", g."premium", g."status", g."holder", g."tags", g."terms", g."location", COALESCE(c.valid_to, _now), 'infinity', 2, COALESCE(c.chain_no, 1), _changed_by, _changed_by_name, _correlation_id, _reason, _extra
              FROM changed AS g LEFT JOIN closed AS c ON c."id" OPERATOR(pg_catalog.=) g."id";
            INSERT INTO "public"."policies_stmt_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
            SELECT s."id", s."number", s."premium", s."status", s."holder", s."tags", s."terms", s."location", GREATEST(_now, l.valid_to), 'infinity', 1, COALESCE(l.chain_no, 0) OPERATOR(pg_catalog.+) 1, _changed_by, _changed_by_name, _correlation_id, _reason, _extra
              FROM (SELECT n.* FROM new_rows AS n WHERE NOT EXISTS (SELECT 1 FROM old_rows AS o WHERE o."id" OPERATOR(pg_catalog.=) n."id")) AS s
              LEFT JOIN LATERAL (
                    SELECT h.valid_to, h.chain_no FROM "public"."policies_stmt_history" AS h
                     WHERE h."id" OPERATOR(pg_catalog.=) s."id"
                     ORDER BY h.valid_from DESC, h.valid_to DESC
                     LIMIT 1
                       FOR UPDATE) AS l ON true
            ON CONFLICT ("id", chain_no) WHERE operation OPERATOR(pg_catalog.=) 1 DO NOTHING;
            GET DIAGNOSTICS _written = ROW_COUNT;
            _expected := (SELECT pg_catalog.count(*) FROM (SELECT n.* FROM new_rows AS n WHERE NOT EXISTS (SELECT 1 FROM old_rows AS o WHERE o."id" OPERATOR(pg_catalog.=) n."id")) AS s);
            IF _written OPERATOR(pg_catalog.<) _expected THEN
                RAISE EXCEPTION 'tidemark: a concurrent transaction started a history chain of %.% that this statement also starts', TG_TABLE_SCHEMA, TG_TABLE_NAME
                      USING ERRCODE = 'serialization_failure';
            END IF;
        ELSE
            EXECUTE $sql$
            WITH gone AS (SELECT o.* FROM old_rows AS o WHERE NOT EXISTS (SELECT 1 FROM new_rows AS n WHERE n."id" OPERATOR(pg_catalog.=) o."id")),
                 closed AS (
                     UPDATE "public"."policies_stmt_history" AS h
                        SET valid_to = GREATEST($1, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
                      WHERE h."id" OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT g."id" FROM gone AS g)) AND h.valid_to OPERATOR(pg_catalog.=) 'infinity'
                     RETURNING h."id", h.valid_to, h.chain_no)
            INSERT INTO "public"."policies_stmt_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
            SELECT g."id", g."number", g."premium", g."status", g."holder", g."tags", g."terms", g."location", COALESCE(c.valid_to, $1), COALESCE(c.valid_to, $1), 3, COALESCE(c.chain_no, 1), $2, $3, $4, $5, $6
              FROM gone AS g LEFT JOIN closed AS c ON c."id" OPERATOR(pg_catalog.=) g."id"
            $sql$ USING _now, _changed_by, _changed_by_name, _correlation_id, _reason, _extra;
            -- Rows where no versioned column changed write nothing (json, xml, ... compared as text).
            EXECUTE $sql$
            WITH changed AS (
                     SELECT n.* FROM new_rows AS n
                      WHERE EXISTS (SELECT 1 FROM old_rows AS o WHERE o."id" OPERATOR(pg_catalog.=) n."id"
                                       AND NOT (COALESCE(n."id" OPERATOR(pg_catalog.=) o."id", n."id" IS NULL AND o."id" IS NULL)
                                                            AND COALESCE(n."number" OPERATOR(pg_catalog.=) o."number", n."number" IS NULL AND o."number" IS NULL)
                                                            AND COALESCE(n."premium" OPERATOR(pg_catalog.=) o."premium", n."premium" IS NULL AND o."premium" IS NULL)
                                                            AND COALESCE(n."status" OPERATOR(pg_catalog.=) o."status", n."status" IS NULL AND o."status" IS NULL)
                                                            AND COALESCE(n."holder" OPERATOR(pg_catalog.=) o."holder", n."holder" IS NULL AND o."holder" IS NULL)
                                                            AND COALESCE(n."tags" OPERATOR(pg_catalog.=) o."tags", n."tags" IS NULL AND o."tags" IS NULL)
                                                            AND COALESCE(n."terms"::pg_catalog.text OPERATOR(pg_catalog.=) o."terms"::pg_catalog.text, n."terms"::pg_catalog.text IS NULL AND o."terms"::pg_catalog.text IS NULL)
                                                            AND COALESCE(n."location"::pg_catalog.text OPERATOR(pg_catalog.=) o."location"::pg_catalog.text, n."location"::pg_catalog.text IS NULL AND o."location"::pg_catalog.text IS NULL)))),
                 closed AS (
                     UPDATE "public"."policies_stmt_history" AS h
                        SET valid_to = GREATEST($1, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
                      WHERE h."id" OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT g."id" FROM changed AS g)) AND h.valid_to OPERATOR(pg_catalog.=) 'infinity'
                     RETURNING h."id", h.valid_to, h.chain_no)
            INSERT INTO "public"."policies_stmt_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
            SELECT g."id", g."number", g."premium", g."status", g."holder", g."tags", g."terms", g."location", COALESCE(c.valid_to, $1), 'infinity', 2, COALESCE(c.chain_no, 1), $2, $3, $4, $5, $6
              FROM changed AS g LEFT JOIN closed AS c ON c."id" OPERATOR(pg_catalog.=) g."id"
            $sql$ USING _now, _changed_by, _changed_by_name, _correlation_id, _reason, _extra;
            EXECUTE $sql$
            INSERT INTO "public"."policies_stmt_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
            SELECT s."id", s."number", s."premium", s."status", s."holder", s."tags", s."terms", s."location", GREATEST($1, l.valid_to), 'infinity', 1, COALESCE(l.chain_no, 0) OPERATOR(pg_catalog.+) 1, $2, $3, $4, $5, $6
              FROM (SELECT n.* FROM new_rows AS n WHERE NOT EXISTS (SELECT 1 FROM old_rows AS o WHERE o."id" OPERATOR(pg_catalog.=) n."id")) AS s
              LEFT JOIN LATERAL (
                    SELECT h.valid_to, h.chain_no FROM "public"."policies_stmt_history" AS h
                     WHERE h."id" OPERATOR(pg_catalog.=) s."id"
                     ORDER BY h.valid_from DESC, h.valid_to DESC
                     LIMIT 1
                       FOR UPDATE) AS l ON true
            ON CONFLICT ("id", chain_no) WHERE operation OPERATOR(pg_catalog.=) 1 DO NOTHING
            $sql$ USING _now, _changed_by, _changed_by_name, _correlation_id, _reason, _extra;
            GET DIAGNOSTICS _written = ROW_COUNT;
            EXECUTE $sql$SELECT pg_catalog.count(*) FROM (SELECT n.* FROM new_rows AS n WHERE NOT EXISTS (SELECT 1 FROM old_rows AS o WHERE o."id" OPERATOR(pg_catalog.=) n."id")) AS s$sql$ INTO _expected;
            IF _written OPERATOR(pg_catalog.<) _expected THEN
                RAISE EXCEPTION 'tidemark: a concurrent transaction started a history chain of %.% that this statement also starts', TG_TABLE_SCHEMA, TG_TABLE_NAME
                      USING ERRCODE = 'serialization_failure';
            END IF;
        END IF;
    ELSE
        -- DELETE
        IF (SELECT pg_catalog.count(*) FROM old_rows) OPERATOR(pg_catalog.<=) 64 THEN
            WITH gone AS (SELECT o.* FROM old_rows AS o),
                 closed AS (
                     UPDATE "public"."policies_stmt_history" AS h
                        SET valid_to = GREATEST(_now, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
                      WHERE h."id" OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT g."id" FROM gone AS g)) AND h.valid_to OPERATOR(pg_catalog.=) 'infinity'
                     RETURNING h."id", h.valid_to, h.chain_no)
            INSERT INTO "public"."policies_stmt_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
            SELECT g."id", g."number", g."premium", g."status", g."holder", g."tags", g."terms", g."location", COALESCE(c.valid_to, _now), COALESCE(c.valid_to, _now), 3, COALESCE(c.chain_no, 1), _changed_by, _changed_by_name, _correlation_id, _reason, _extra
              FROM gone AS g LEFT JOIN closed AS c ON c."id" OPERATOR(pg_catalog.=) g."id";
        ELSE
            EXECUTE $sql$
            WITH gone AS (SELECT o.* FROM old_rows AS o),
                 closed AS (
                     UPDATE "public"."policies_stmt_history" AS h
                        SET valid_to = GREATEST($1, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
                      WHERE h."id" OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT g."id" FROM gone AS g)) AND h.valid_to OPERATOR(pg_catalog.=) 'infinity'
                     RETURNING h."id", h.valid_to, h.chain_no)
            INSERT INTO "public"."policies_stmt_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
            SELECT g."id", g."number", g."premium", g."status", g."holder", g."tags", g."terms", g."location", COALESCE(c.valid_to, $1), COALESCE(c.valid_to, $1), 3, COALESCE(c.chain_no, 1), $2, $3, $4, $5, $6
              FROM gone AS g LEFT JOIN closed AS c ON c."id" OPERATOR(pg_catalog.=) g."id"
            $sql$ USING _now, _changed_by, _changed_by_name, _correlation_id, _reason, _extra;
        END IF;
    END IF;
    RETURN NULL;
END;
$tidemark$;

-- Nobody else may attach this SECURITY DEFINER function to a table of their own.
REVOKE ALL ON FUNCTION "public"."policies_stmt_history_write"() FROM PUBLIC;

-- TRUNCATE fires no row trigger; this closes every open version instead of leaving them open.
CREATE OR REPLACE FUNCTION "public"."policies_stmt_history_truncate"()
    RETURNS trigger
    LANGUAGE plpgsql
    SECURITY DEFINER
AS $tidemark$
DECLARE
    -- Change context: transaction-local settings pushed by the application; '' means absent.
    -- (NULLIF would resolve its = through the caller's search_path, so the test is spelled out.)
    _now             pg_catalog.timestamptz := pg_catalog.now();
    _changed_by      pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.changed_by', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.changed_by', true) END;
    _changed_by_name pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.changed_by_name', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.changed_by_name', true) END;
    _correlation_id  pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.correlation_id', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.correlation_id', true) END;
    _reason          pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.reason', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.reason', true) END;
    _extra           pg_catalog.jsonb := (CASE WHEN pg_catalog.current_setting('tidemark.extra', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.extra', true) END)::pg_catalog.jsonb;
BEGIN
    IF TG_TABLE_SCHEMA OPERATOR(pg_catalog.<>) 'public' OR TG_TABLE_NAME OPERATOR(pg_catalog.<>) 'policies_stmt' THEN
        RAISE EXCEPTION 'tidemark: % was generated for public.policies_stmt, not for %.%', TG_NAME, TG_TABLE_SCHEMA, TG_TABLE_NAME
              USING ERRCODE = 'insufficient_privilege';
    END IF;
    -- TRUNCATE deletes every row without firing row triggers: close every open version and
    -- write its tombstone, exactly as a DELETE of each row would have.
    WITH closed AS (
        UPDATE "public"."policies_stmt_history" AS h
           SET valid_to = GREATEST(_now, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
         WHERE h.valid_to OPERATOR(pg_catalog.=) 'infinity'
        RETURNING h."id", h."number", h."premium", h."status", h."holder", h."tags", h."terms", h."location", h.valid_to, h.chain_no
    )
    INSERT INTO "public"."policies_stmt_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
    SELECT c."id", c."number", c."premium", c."status", c."holder", c."tags", c."terms", c."location", c.valid_to, c.valid_to, 3, c.chain_no, _changed_by, _changed_by_name, _correlation_id, _reason, _extra
      FROM closed AS c;
    RETURN NULL;
END;
$tidemark$;

-- Nobody else may attach this SECURITY DEFINER function to a table of their own.
REVOKE ALL ON FUNCTION "public"."policies_stmt_history_truncate"() FROM PUBLIC;

-- Every statement's changes are recorded set-based, in the same statement, from its transition tables.
CREATE OR REPLACE TRIGGER "policies_stmt_history_ins_trg"
    AFTER INSERT ON "public"."policies_stmt" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "public"."policies_stmt_history_write"();

-- Updates: old and new rows are paired by primary key.
CREATE OR REPLACE TRIGGER "policies_stmt_history_upd_trg"
    AFTER UPDATE ON "public"."policies_stmt" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "public"."policies_stmt_history_write"();

-- Deletes.
CREATE OR REPLACE TRIGGER "policies_stmt_history_del_trg"
    AFTER DELETE ON "public"."policies_stmt" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "public"."policies_stmt_history_write"();

-- TRUNCATE policy: CLOSE_VERSIONS.
CREATE OR REPLACE TRIGGER "policies_stmt_history_truncate_trg"
    AFTER TRUNCATE ON "public"."policies_stmt"
    FOR EACH STATEMENT EXECUTE FUNCTION "public"."policies_stmt_history_truncate"();

-- The table as it was at an instant, as its own row type, so point-in-time joins are plain
-- SQL: SELECT * FROM public.policies_stmt_as_of('2024-01-01') AS p JOIN ... Runs with the caller's rights.
CREATE OR REPLACE FUNCTION "public"."policies_stmt_as_of"(at timestamptz)
    RETURNS SETOF "public"."policies_stmt"
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
     WHERE r.source_schema = 'public' AND r.source_table = 'policies_stmt';
    IF at < _horizon THEN
        RAISE EXCEPTION 'tidemark: history of public.policies_stmt before % was pruned; ask for an instant at or after it', _horizon
              USING ERRCODE = 'data_exception';
    END IF;
    RETURN QUERY
    SELECT h."id", h."number", h."premium", h."status", h."holder", h."tags", h."terms", h."location", NULL::bytea AS "document"
      FROM "public"."policies_stmt_history" AS h
     WHERE tstzrange(h.valid_from, h.valid_to) @> at;
END;
$tidemark$;

-- Register the table, its versioned columns and the hash of its generated function.
INSERT INTO "tidemark"."temporal_tables" (source_schema, source_table, history_schema, history_table,
        key_columns, versioned_columns, orphan_columns, options, function_hash)
VALUES ('public', 'policies_stmt', 'public', 'policies_stmt_history',
        '["id"]',
        '[{"name":"id","type":"bigint"},{"name":"number","type":"character varying(20)"},{"name":"premium","type":"public.money_amount"},{"name":"status","type":"public.policy_status"},{"name":"holder","type":"text COLLATE pg_catalog.\"C\""},{"name":"tags","type":"text[]"},{"name":"terms","type":"json"},{"name":"location","type":"point"}]',
        '[]',
        '{"settingsPrefix":"tidemark","truncatePolicy":"CLOSE_VERSIONS","triggerMode":"STATEMENT","periodIndex":true,"sessionUserColumn":false,"transactionIdColumn":false,"excluded":["document"]}',
        'c3342b82116c7013ddbb2dbbccd31ab80e8e097cf47752f5affdef7e1fe04cfa')
ON CONFLICT (source_schema, source_table) DO UPDATE
   SET key_columns = EXCLUDED.key_columns, versioned_columns = EXCLUDED.versioned_columns,
       orphan_columns = EXCLUDED.orphan_columns, options = EXCLUDED.options,
       function_hash = EXCLUDED.function_hash, evolved_at = pg_catalog.now();

