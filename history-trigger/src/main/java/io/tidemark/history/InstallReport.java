package io.tidemark.history;

import java.util.List;

/**
 * What {@link TemporalTable#install} did.
 *
 * @param created    true when this call created the history; false when it was installed already
 * @param seededRows open versions written for rows that existed before the trigger (0 when not created)
 * @param repairs    when installed already: what was repaired (empty when nothing had drifted)
 */
public record InstallReport(boolean created, long seededRows, List<String> repairs) {
    public InstallReport {
        repairs = List.copyOf(repairs);
    }
}
