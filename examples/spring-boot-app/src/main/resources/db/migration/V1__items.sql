-- The application's table.
CREATE TABLE public.items (
    item_code   text PRIMARY KEY,
    description text
);
