package io.tidemark.benchmarks.history;

import io.tidemark.history.Db;

import javax.sql.DataSource;

/**
 * Two tables that are not product shapes but measure what any history trigger of Tidemark's kind costs, in the same
 * run as everything else, so the write targets can be read against what is physically possible:
 *
 * <ul>
 *   <li>{@code bench_bare}: a row trigger with the same attributes as Tidemark's ({@code SECURITY DEFINER}, pinned
 *       {@code search_path}) whose body writes nothing. Its overhead is the floor of every row trigger.</li>
 *   <li>{@code bench_bare_invoker}: the same empty trigger without {@code SECURITY DEFINER} and without the pinned
 *       {@code search_path}, as the reference trigger's function is declared; the difference between the two is what
 *       those two attributes cost.</li>
 *   <li>{@code bench_one}: a row trigger that records every change as exactly one inserted row (new values for
 *       INSERT and UPDATE, old values for DELETE, the transaction's start and the change context) into an
 *       append-only table with a single index: no lookup, no update, no second index. It is the cheapest trigger
 *       that still writes a history row per changed row, without the clamp or any invariant.</li>
 *   <li>{@code bench_cur}: the shape of the {@code temporal_tables} extension and of SQL Server's system-versioned
 *       tables, reduced to its cost: the current version stays in the table, which carries its start and change
 *       context in six extra columns filled by column defaults (so an INSERT fires no trigger at all); a
 *       {@code BEFORE UPDATE} trigger writes the superseded version, with its period, as one row and stamps the new
 *       one; an {@code AFTER DELETE} trigger writes the deleted version. No clamp lookup, no invariant index, and
 *       the extra columns are visible to (and writable by) the application.</li>
 * </ul>
 */
final class DesignBounds {

    static final String BARE = "bench_bare";
    static final String BARE_INVOKER = "bench_bare_invoker";
    static final String ONE_ROW = "bench_one";
    static final String CURRENT_IN_TABLE = "bench_cur";
    static final String CURRENT_COLUMNS = ", tm_valid_from timestamptz NOT NULL DEFAULT now(),"
            + " tm_changed_by text DEFAULT NULLIF(pg_catalog.current_setting('tidemark.changed_by', true), ''),"
            + " tm_changed_by_name text DEFAULT NULLIF(pg_catalog.current_setting('tidemark.changed_by_name', true), ''),"
            + " tm_correlation_id text DEFAULT NULLIF(pg_catalog.current_setting('tidemark.correlation_id', true), ''),"
            + " tm_reason text DEFAULT NULLIF(pg_catalog.current_setting('tidemark.reason', true), ''),"
            + " tm_extra jsonb DEFAULT NULLIF(pg_catalog.current_setting('tidemark.extra', true), '')::jsonb";

    private DesignBounds() {
    }

    static void create(DataSource ds) {
        Db.exec(ds, """
                CREATE TABLE bench_bare (%1$s);
                CREATE FUNCTION bench_bare_write() RETURNS trigger LANGUAGE plpgsql
                    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
                AS $$ BEGIN RETURN NULL; END $$;
                CREATE TRIGGER bench_bare_trg AFTER INSERT OR UPDATE OR DELETE ON bench_bare
                    FOR EACH ROW EXECUTE FUNCTION bench_bare_write();

                CREATE TABLE bench_bare_invoker (%1$s);
                CREATE FUNCTION bench_bare_invoker_write() RETURNS trigger LANGUAGE plpgsql
                AS $$ BEGIN RETURN NULL; END $$;
                CREATE TRIGGER bench_bare_invoker_trg AFTER INSERT OR UPDATE OR DELETE ON bench_bare_invoker
                    FOR EACH ROW EXECUTE FUNCTION bench_bare_invoker_write();

                CREATE TABLE bench_one (%1$s);
                CREATE TABLE bench_one_history (history_id bigint GENERATED ALWAYS AS IDENTITY, id bigint,
                    account int, amount numeric(12,2), status text, note text, updated_at timestamptz,
                    valid_from timestamptz NOT NULL, operation smallint NOT NULL, changed_by text,
                    changed_by_name text, correlation_id text, reason text, extra jsonb);
                CREATE INDEX bench_one_history_key_idx ON bench_one_history (id, history_id DESC);
                CREATE FUNCTION bench_one_write() RETURNS trigger LANGUAGE plpgsql
                    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
                AS $$
                DECLARE
                    _row public.bench_one;
                BEGIN
                    IF TG_OP = 'DELETE' THEN _row := OLD; ELSE _row := NEW; END IF;
                    INSERT INTO public.bench_one_history (id, account, amount, status, note, updated_at, valid_from,
                            operation, changed_by, changed_by_name, correlation_id, reason, extra)
                    VALUES (_row.id, _row.account, _row.amount, _row.status, _row.note, _row.updated_at,
                            pg_catalog.now(), CASE TG_OP WHEN 'INSERT' THEN 1 WHEN 'UPDATE' THEN 2 ELSE 3 END,
                            NULLIF(pg_catalog.current_setting('tidemark.changed_by', true), ''),
                            NULLIF(pg_catalog.current_setting('tidemark.changed_by_name', true), ''),
                            NULLIF(pg_catalog.current_setting('tidemark.correlation_id', true), ''),
                            NULLIF(pg_catalog.current_setting('tidemark.reason', true), ''),
                            NULLIF(pg_catalog.current_setting('tidemark.extra', true), '')::jsonb);
                    RETURN NULL;
                END $$;
                CREATE TRIGGER bench_one_trg AFTER INSERT OR UPDATE OR DELETE ON bench_one
                    FOR EACH ROW EXECUTE FUNCTION bench_one_write();

                CREATE TABLE bench_cur (%1$s%2$s);
                CREATE TABLE bench_cur_history (history_id bigint GENERATED ALWAYS AS IDENTITY, id bigint,
                    account int, amount numeric(12,2), status text, note text, updated_at timestamptz,
                    valid_from timestamptz NOT NULL, valid_to timestamptz NOT NULL, operation smallint NOT NULL,
                    changed_by text, changed_by_name text, correlation_id text, reason text, extra jsonb);
                CREATE INDEX bench_cur_history_key_idx ON bench_cur_history (id, valid_from DESC);
                CREATE FUNCTION bench_cur_supersede() RETURNS trigger LANGUAGE plpgsql
                    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
                AS $$
                BEGIN
                    IF (NEW.id, NEW.account, NEW.amount, NEW.status, NEW.note, NEW.updated_at)
                       IS NOT DISTINCT FROM (OLD.id, OLD.account, OLD.amount, OLD.status, OLD.note, OLD.updated_at) THEN
                        NEW.tm_valid_from := OLD.tm_valid_from;
                        RETURN NEW;
                    END IF;
                    NEW.tm_valid_from := GREATEST(pg_catalog.now(), OLD.tm_valid_from + interval '1 microsecond');
                    NEW.tm_changed_by := NULLIF(pg_catalog.current_setting('tidemark.changed_by', true), '');
                    NEW.tm_changed_by_name := NULLIF(pg_catalog.current_setting('tidemark.changed_by_name', true), '');
                    NEW.tm_correlation_id := NULLIF(pg_catalog.current_setting('tidemark.correlation_id', true), '');
                    NEW.tm_reason := NULLIF(pg_catalog.current_setting('tidemark.reason', true), '');
                    NEW.tm_extra := NULLIF(pg_catalog.current_setting('tidemark.extra', true), '')::jsonb;
                    INSERT INTO public.bench_cur_history (id, account, amount, status, note, updated_at, valid_from,
                            valid_to, operation, changed_by, changed_by_name, correlation_id, reason, extra)
                    VALUES (OLD.id, OLD.account, OLD.amount, OLD.status, OLD.note, OLD.updated_at, OLD.tm_valid_from,
                            NEW.tm_valid_from, 2, OLD.tm_changed_by, OLD.tm_changed_by_name, OLD.tm_correlation_id,
                            OLD.tm_reason, OLD.tm_extra);
                    RETURN NEW;
                END $$;
                CREATE TRIGGER bench_cur_upd_trg BEFORE UPDATE ON bench_cur
                    FOR EACH ROW EXECUTE FUNCTION bench_cur_supersede();
                CREATE FUNCTION bench_cur_delete() RETURNS trigger LANGUAGE plpgsql
                    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
                AS $$
                BEGIN
                    INSERT INTO public.bench_cur_history (id, account, amount, status, note, updated_at, valid_from,
                            valid_to, operation, changed_by, changed_by_name, correlation_id, reason, extra)
                    VALUES (OLD.id, OLD.account, OLD.amount, OLD.status, OLD.note, OLD.updated_at, OLD.tm_valid_from,
                            GREATEST(pg_catalog.now(), OLD.tm_valid_from + interval '1 microsecond'), 3,
                            OLD.tm_changed_by, OLD.tm_changed_by_name, OLD.tm_correlation_id, OLD.tm_reason,
                            OLD.tm_extra);
                    RETURN NULL;
                END $$;
                CREATE TRIGGER bench_cur_del_trg AFTER DELETE ON bench_cur
                    FOR EACH ROW EXECUTE FUNCTION bench_cur_delete();
                """.formatted(BenchSchema.COLUMNS, CURRENT_COLUMNS));
    }
}
