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
 * The application.yml of the root README's "Spring Boot" section, read out of README.md, so that what the README
 * tells a user to write is what the test application runs with. Added as the lowest-precedence property source:
 * a test overrides only where the README's values cannot work here (the database URL, the export folder).
 */
public final class ReadmeYaml implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    private static final Pattern SECTION_YAML = Pattern.compile(
            "(?ms)^## Spring Boot\\n.*?^```yaml\\n(.*?)^```");

    /** The first YAML block of the README's "Spring Boot" section. */
    public static String text() {
        Path readme = Path.of(System.getProperty("user.dir")).resolveSibling("README.md");
        try {
            Matcher matcher = SECTION_YAML.matcher(Files.readString(readme, StandardCharsets.UTF_8));
            if (!matcher.find()) {
                throw new IllegalStateException(readme + " has no ```yaml block in a section \"## Spring Boot\"");
            }
            return matcher.group(1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        try {
            List<PropertySource<?>> sources = new YamlPropertySourceLoader().load("README.md (Spring Boot)",
                    new ByteArrayResource(text().getBytes(StandardCharsets.UTF_8)));
            sources.forEach(source -> context.getEnvironment().getPropertySources().addLast(source));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
