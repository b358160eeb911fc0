-- The identity-as-version outbox, trigger and change function of docs/contract.md#the-in-flight-transaction-gap, copied
-- verbatim, for comparison: ProcedureContractVerifier reports this function UNSAFE under the in-flight interleaving
-- of docs/contract.md#the-in-flight-transaction-gap, and the outbox benchmarks measure it as the baseline. Do not use it to capture changes.

CREATE TABLE items_outbox (
    id          BIGSERIAL PRIMARY KEY,
    xact_id     xid8    NOT NULL DEFAULT pg_current_xact_id(),
    operation   CHAR(1) NOT NULL,
    item_code   TEXT    NOT NULL,
    description TEXT
);

CREATE INDEX items_outbox_id_idx ON items_outbox (id);

CREATE FUNCTION items_outbox_capture() RETURNS TRIGGER AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO items_outbox (operation, item_code, description)
        VALUES ('D', OLD.item_code, NULL);
        RETURN OLD;
    END IF;

    INSERT INTO items_outbox (operation, item_code, description)
    VALUES (CASE TG_OP WHEN 'INSERT' THEN 'I' ELSE 'U' END, NEW.item_code, NEW.description);
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER items_capture
AFTER INSERT OR UPDATE OR DELETE ON items
FOR EACH ROW EXECUTE FUNCTION items_outbox_capture();

CREATE OR REPLACE FUNCTION get_item_changes(payload json)
RETURNS json AS $$
DECLARE
    from_version BIGINT  := COALESCE((payload ->> 'fromVersion')::BIGINT, 0);
    seeding      BOOLEAN := COALESCE(payload ->> 'mode', 'sync') = 'seed';
    horizon      xid8    := pg_snapshot_xmin(pg_current_snapshot());
    max_version  BIGINT;
    rows_json    json;
BEGIN
    SELECT COALESCE(MAX(id), from_version)
      INTO max_version
      FROM items_outbox
     WHERE xact_id < horizon;

    IF seeding THEN
        RETURN json_build_object(
            'Metadata', json_build_object('Sync', json_build_object(
                'Version', max_version, 'Type', 'Diff', 'ReasonCode', 0)),
            'Data', '[]'::json);
    END IF;

    SELECT COALESCE(json_agg(json_build_object(
               '$operation',  o.operation,
               '$version',    o.id,
               'ItemCode',    o.item_code,
               'Description', o.description
           ) ORDER BY o.id), '[]'::json)
      INTO rows_json
      FROM items_outbox o
     WHERE o.id > from_version
       AND o.xact_id < horizon;

    RETURN json_build_object(
        'Metadata', json_build_object('Sync', json_build_object(
            'Version', max_version, 'Type', 'Diff', 'ReasonCode', 0)),
        'Data', rows_json);
END;
$$ LANGUAGE plpgsql;
