-- Run by spring.sql.init in TidemarkAutoConfigurationTest: a change function the engine's start-up check requires.
CREATE FUNCTION public.init_items_changes(request json) RETURNS json LANGUAGE sql AS $$ SELECT '{}'::json $$;
