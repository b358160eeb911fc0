package io.tidemark.examples.springboot;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import java.util.List;
import java.util.Map;

/**
 * The application's own code, which knows nothing of Tidemark: it writes rows. The outbox's triggers capture each
 * change for the engine; the history triggers version it, with the request's user and X-Change-Reason header.
 */
@RestController
public class ItemsController {

    private final JdbcTemplate jdbc;
    private final AuditLog audit;

    public ItemsController(JdbcTemplate jdbc, AuditLog audit) {
        this.jdbc = jdbc;
        this.audit = audit;
    }

    @PutMapping("/items/{code}")
    public Map<String, String> put(@PathVariable("code") String code, @RequestBody String description) {
        jdbc.update("INSERT INTO public.items (item_code, description) VALUES (?, ?)"
                + " ON CONFLICT (item_code) DO UPDATE SET description = excluded.description", code, description);
        return Map.of("item_code", code, "description", description);
    }

    /** Every version of the item: who changed it, why, and when. */
    @GetMapping("/items/{code}/history")
    public List<Map<String, Object>> history(@PathVariable("code") String code) {
        return jdbc.queryForList("SELECT description, changed_by, reason, valid_from, valid_to"
                + " FROM public.items_history WHERE item_code = ? ORDER BY valid_from", code);
    }

    /** What the audit destination received last. */
    @GetMapping("/audit")
    public List<String> audit() {
        return audit.recent();
    }
}
