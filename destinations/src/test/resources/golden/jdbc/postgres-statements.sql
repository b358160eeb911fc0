-- record the position, returning the one it replaces
-- Records the page as the position (creating the row on first use) and returns the position it
-- replaces, kept in the previous_* columns: in an ON CONFLICT update the old row is the one locked,
-- so a concurrent delivery of the same page waits here and then sees this one's page.
INSERT INTO "sales"."tidemark_destination_position" AS p
       (destination_name, object_name, from_version, to_version, page_number, page_count,
        idempotency_key, sync_type, applied_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, now())
ON CONFLICT (destination_name, object_name) DO UPDATE
   SET previous_from_version = p.from_version,
       previous_to_version = p.to_version,
       previous_page_number = p.page_number,
       previous_page_count = p.page_count,
       previous_sync_type = p.sync_type,
       from_version = EXCLUDED.from_version,
       to_version = EXCLUDED.to_version,
       page_number = EXCLUDED.page_number,
       page_count = EXCLUDED.page_count,
       idempotency_key = EXCLUDED.idempotency_key,
       sync_type = EXCLUDED.sync_type,
       applied_at = EXCLUDED.applied_at
RETURNING p.previous_from_version, p.previous_to_version, p.previous_page_number,
          p.previous_page_count, p.previous_sync_type

-- upsert, every column
INSERT INTO "sales"."Order Lines" ("order_id", "line", "Product Name", "qty", "price")
VALUES (?, ?, ?, ?, ?)
ON CONFLICT ("order_id", "line") DO UPDATE
   SET "Product Name" = EXCLUDED."Product Name",
       "qty" = EXCLUDED."qty",
       "price" = EXCLUDED."price"

-- upsert, every column, three rows in one statement
INSERT INTO "sales"."Order Lines" ("order_id", "line", "Product Name", "qty", "price")
VALUES (?, ?, ?, ?, ?),
       (?, ?, ?, ?, ?),
       (?, ?, ?, ?, ?)
ON CONFLICT ("order_id", "line") DO UPDATE
   SET "Product Name" = EXCLUDED."Product Name",
       "qty" = EXCLUDED."qty",
       "price" = EXCLUDED."price"

-- upsert, the key and the first other column
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
 WHERE ("order_id", "line") IN (
       (?, ?))

-- delete, three rows in one statement
DELETE FROM "sales"."Order Lines"
 WHERE ("order_id", "line") IN (
       (?, ?),
       (?, ?),
       (?, ?))

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

