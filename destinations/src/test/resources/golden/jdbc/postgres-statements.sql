-- lock the position row
-- Creates the row on first use; otherwise a no-op update that locks it until the page commits,
-- so two deliveries of one page (two processes) are applied one after the other.
INSERT INTO "sales"."tidemark_destination_position" AS p (destination_name, object_name)
VALUES (?, ?)
ON CONFLICT (destination_name, object_name) DO UPDATE
   SET applied_at = p.applied_at
RETURNING p.from_version, p.to_version, p.page_number, p.page_count, p.sync_type

-- upsert, every column
INSERT INTO "sales"."Order Lines" ("order_id", "line", "Product Name", "qty", "price")
VALUES (?, ?, ?, ?, ?)
ON CONFLICT ("order_id", "line") DO UPDATE
   SET "Product Name" = EXCLUDED."Product Name",
       "qty" = EXCLUDED."qty",
       "price" = EXCLUDED."price"

-- upsert, the key and the first other column ($changed)
INSERT INTO "sales"."Order Lines" ("order_id", "line", "Product Name")
VALUES (?, ?, ?)
ON CONFLICT ("order_id", "line") DO UPDATE
   SET "Product Name" = EXCLUDED."Product Name"

-- update of some columns ($changed, updates only)
UPDATE "sales"."Order Lines"
   SET "Product Name" = ?
 WHERE "order_id" = ?
   AND "line" = ?

-- upsert, the key only
INSERT INTO "sales"."Order Lines" ("order_id", "line")
VALUES (?, ?)
ON CONFLICT ("order_id", "line") DO NOTHING

-- delete
DELETE FROM "sales"."Order Lines"
 WHERE "order_id" = ?
   AND "line" = ?

-- FULL: replace the content
-- A FULL export replaces the table's content; DELETE (not TRUNCATE) so that readers keep seeing
-- the old content until the transaction that writes the new one commits.
DELETE FROM "sales"."Order Lines"

-- FULL: stage a page
INSERT INTO "sales"."tidemark_destination_stage" (destination_name, object_name, page_number, ordinal, change_json)
VALUES (?, ?, ?, ?, ?)

-- FULL: read a staged page
SELECT change_json
  FROM "sales"."tidemark_destination_stage"
 WHERE destination_name = ?
   AND object_name = ?
   AND page_number = ?
 ORDER BY ordinal

-- FULL: forget the staged pages
DELETE FROM "sales"."tidemark_destination_stage"
 WHERE destination_name = ?
   AND object_name = ?

-- write the position
UPDATE "sales"."tidemark_destination_position"
   SET from_version = ?,
       to_version = ?,
       page_number = ?,
       page_count = ?,
       idempotency_key = ?,
       sync_type = ?,
       applied_at = now()
 WHERE destination_name = ?
   AND object_name = ?

