package io.tidemark.spring.boot.autoconfigure;

import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The application.yml of a README section, read out of the README, so that what the README tells a user to write
 * is what the test application runs with: by default the root README's "Spring Boot" section. Added as the
 * lowest-precedence property source: a test overrides only where the README's values cannot work here (the database
 * URL, the export folder, the replication role).
 */
public final class ReadmeYaml implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    private final Path readme;
    private final String heading;

    /** The root README's "Spring Boot" section. */
    public ReadmeYaml() {
        this(Path.of(System.getProperty("user.dir")).resolveSibling("README.md"), "## Spring Boot");
    }

    /** @param heading the section's heading line, as written */
    public ReadmeYaml(Path readme, String heading) {
        this.readme = readme;
        this.heading = heading;
    }

    /** The first YAML block of the root README's "Spring Boot" section. */
    public static String text() {
        return new ReadmeYaml().yaml();
    }

    /** The first YAML block of the section. */
    public String yaml() {
        Pattern sectionYaml = Pattern.compile("(?ms)^" + Pattern.quote(heading) + "\\n.*?^```yaml\\n(.*?)^```");
        try {
            Matcher matcher = sectionYaml.matcher(Files.readString(readme, StandardCharsets.UTF_8));
            if (!matcher.find()) {
                throw new IllegalStateException(readme + " has no ```yaml block in a section \"" + heading + "\"");
            }
            return matcher.group(1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        try {
            List<PropertySource<?>> sources = new YamlPropertySourceLoader().load(readme + " (" + heading + ")",
                    new ByteArrayResource(yaml().getBytes(StandardCharsets.UTF_8)));
            sources.forEach(source -> context.getEnvironment().getPropertySources().addLast(source));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
