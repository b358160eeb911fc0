-- The demo's source table, its capture trigger and its change function.
--
-- The capture is gap-free: every outbox row carries the xid8 of the transaction that wrote it, and the change
-- function only returns rows of transactions older than the oldest one still running (the xmin horizon), using
-- that xid as the row's version. A transaction that is still open can therefore never be overtaken by a later
-- one (the loss described in DESIGN.md, "The in-flight transaction gap").

CREATE TABLE public.items (
    item_code   text PRIMARY KEY,
    description text,
    price       numeric(10, 2)
);

CREATE TABLE public.items_outbox (
    id          bigserial PRIMARY KEY,
    xact_id     xid8    NOT NULL DEFAULT pg_current_xact_id(),
    operation   char(1) NOT NULL,
    item_code   text    NOT NULL,
    description text,
    price       numeric(10, 2)
);

CREATE INDEX items_outbox_xact_idx ON public.items_outbox (xact_id, id);

CREATE FUNCTION public.items_capture() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO public.items_outbox (operation, item_code) VALUES ('D', OLD.item_code);
        RETURN OLD;
    END IF;
    INSERT INTO public.items_outbox (operation, item_code, description, price)
    VALUES (CASE TG_OP WHEN 'INSERT' THEN 'I' ELSE 'U' END, NEW.item_code, NEW.description, NEW.price);
    RETURN NEW;
END;
$$;

CREATE TRIGGER items_capture AFTER INSERT OR UPDATE OR DELETE ON public.items
FOR EACH ROW EXECUTE FUNCTION public.items_capture();

-- {"fromVersion": N, "mode": "sync"|"seed", "maxRows": M} -> the contract's JSON document.
CREATE FUNCTION public.get_item_changes(payload json) RETURNS json
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    from_version bigint  := COALESCE((payload ->> 'fromVersion')::bigint, 0);
    seeding      boolean := COALESCE(payload ->> 'mode', 'sync') = 'seed';
    max_rows     integer := (payload ->> 'maxRows')::integer;
    horizon      xid8    := pg_snapshot_xmin(pg_current_snapshot());
    -- Everything below the horizon is finished for good: the next version to hand out is at least this.
    settled      bigint  := horizon::text::bigint - 1;
    rows_json    json;
    last_version bigint;
BEGIN
    IF NOT seeding THEN
        WITH pending AS (
            SELECT o.*, o.xact_id::text::bigint AS version
              FROM public.items_outbox o
             WHERE o.xact_id > from_version::text::xid8
               AND o.xact_id < horizon
        ), per_transaction AS (
            -- maxRows is honoured by whole transactions: a version is never split across two calls.
            SELECT version, sum(count(*)) OVER (ORDER BY version) - count(*) AS rows_before
              FROM pending GROUP BY version
        ), chosen AS (
            SELECT p.* FROM pending p JOIN per_transaction t USING (version)
             WHERE max_rows IS NULL OR t.rows_before < max_rows
        )
        SELECT json_agg(json_build_object(
                   '$operation',  c.operation,
                   '$version',    c.version,
                   'ItemCode',    c.item_code,
                   'Description', c.description,
                   'Price',       c.price) ORDER BY c.version, c.id),
               max(c.version)
          INTO rows_json, last_version
          FROM chosen c;
    END IF;

    RETURN json_build_object(
        'Metadata', json_build_object('Sync', json_build_object(
            'Version', COALESCE(last_version, GREATEST(settled, from_version)), 'Type', 'Diff', 'ReasonCode', 0)),
        'Data', COALESCE(rows_json, '[]'::json));
END;
$$;
