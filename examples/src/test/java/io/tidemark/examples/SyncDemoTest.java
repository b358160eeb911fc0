package io.tidemark.examples;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's demo keeps working: it runs here exactly as `mvn -Pdemo` runs it. */
class SyncDemoTest {

    @Test
    void the_demo_shows_inserts_updates_and_deletes_arriving() throws Exception {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        new SyncDemo(new PrintStream(buffer, true, StandardCharsets.UTF_8)).run();
        String output = buffer.toString(StandardCharsets.UTF_8);

        assertThat(output).contains("Seeded: WatermarkState[Items, version=");
        assertThat(output).as("the demo says what its version numbers are before showing them")
                .containsPattern("About the version numbers \\(v\\d+ above, v\\.\\.\\. below\\): a version is the"
                        + " PostgreSQL transaction id of the commit that made the change")
                .contains("the ids in between belong to other transactions, including the engine's own");
        assertThat(output.indexOf("About the version numbers")).isLessThan(output.indexOf("INSERT v"));
        assertThat(output).containsPattern("INSERT v\\d+ \\{\"ItemCode\":\"A-100\",\"Description\":\"Widget\",\"Price\":9.99}");
        assertThat(output).containsPattern("UPDATE v\\d+ \\{\"ItemCode\":\"A-100\",\"Description\":\"Widget\",\"Price\":10.49}");
        assertThat(output).containsPattern("UPDATE v\\d+ \\{\"ItemCode\":\"A-200\",\"Description\":null,\"Price\":24.50} changed \\[Description]");
        assertThat(output).containsPattern("Price\":10.49} changed \\[Price]");
        assertThat(output).containsPattern("DELETE v\\d+ \\{\"ItemCode\":\"A-300\"");
        assertThat(output).contains("Stored after close: WatermarkState[Items, version=").contains("lastError=null");
        assertThat(output).endsWith("Done." + System.lineSeparator());
    }
}
