-- Tidemark JDBC table destination: its two tables in the target database.
-- The position table holds, per destination and tracked object, the last page applied to the
-- target table; it is written in the same transaction as the page, so a page is applied once.
-- The stage table holds the pages of a FULL export until its last page replaces the table's
-- content. Safe to run again.
CREATE TABLE IF NOT EXISTS "sales"."tidemark_destination_position" (
    destination_name text        NOT NULL,
    object_name      text        NOT NULL,
    from_version     bigint          NULL, -- NULL until the first page is applied
    to_version       bigint          NULL,
    page_number      integer         NULL,
    page_count       integer         NULL,
    idempotency_key  text            NULL,
    sync_type        text            NULL, -- FULL or DIFF
    applied_at       timestamptz     NULL,
    -- the position the last page replaced: returned by the statement that records a page
    previous_from_version bigint     NULL,
    previous_to_version   bigint     NULL,
    previous_page_number  integer    NULL,
    previous_page_count   integer    NULL,
    previous_sync_type    text       NULL,
    PRIMARY KEY (destination_name, object_name)
);

CREATE TABLE IF NOT EXISTS "sales"."tidemark_destination_stage" (
    destination_name text    NOT NULL,
    object_name      text    NOT NULL,
    page_number      integer NOT NULL,
    ordinal          integer NOT NULL,
    change_json      text    NOT NULL, -- the change as the procedure returned it
    PRIMARY KEY (destination_name, object_name, page_number, ordinal)
);
