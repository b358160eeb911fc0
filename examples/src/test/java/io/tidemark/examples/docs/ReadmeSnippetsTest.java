package io.tidemark.examples.docs;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Java snippet of the user documents (README.md, docs/, each module's README), and the README's XML dependency
 * block, is a tagged region of a source file the build compiles and runs, and every tagged region is in a document,
 * verbatim: after dropping the tag lines and
 * the region's common indentation, the text is the same character for character. The dependency block of the Quick
 * start is the consumer project's, so what the README tells a user to declare is what the consumer build declares.
 *
 * <p>Regions are marked {@code // tag::name[]} ... {@code // end::name[]} (in XML, inside comments). The sources
 * are the snippet tests in examples/src/test/java/io/tidemark/examples/readme and the consumer project in
 * examples/src/it/consumer, which the examples build runs with maven-invoker-plugin.
 */
class ReadmeSnippetsTest {

    private static final Pattern FENCE = Pattern.compile("(?m)^```(java|xml)\\n(.*?)^```", Pattern.DOTALL);
    private static final Pattern TAG = Pattern.compile(
            "(?m)^[ \\t]*(?://|<!--)[ \\t]*tag::([\\w-]+)\\[][^\\n]*\\n(.*?)^[ \\t]*(?://|<!--)[ \\t]*end::\\1\\[][^\\n]*$",
            Pattern.DOTALL);

    private final Path root = RepositoryFiles.root();

    @Test
    void every_java_and_xml_snippet_of_the_documents_is_a_compiled_region_and_every_region_is_documented() {
        Map<String, String> regions = regions();
        assertThat(regions).as("tagged regions").containsKeys(
                "consumer/QuickStart.java#quickstart", "consumer/QuickStartTest.java#test", "consumer/pom.xml#dependencies");

        List<String> documented = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (Path document : documents()) {
            Matcher fence = FENCE.matcher(RepositoryFiles.read(document));
            while (fence.find()) {
                if (fence.group(1).equals("xml") && !document.equals(root.resolve("README.md"))) {
                    continue;   // only the README's dependency block is the consumer project's
                }
                String snippet = normalise(fence.group(2));
                documented.add(snippet);
                if (!regions.containsValue(snippet)) {
                    problems.add(root.relativize(document) + ": this " + fence.group(1) + " snippet is not a tagged"
                            + " region of a compiled source (add it to examples/src/test/java/io/tidemark/examples/"
                            + "readme or fix the difference):\n" + snippet);
                }
            }
        }
        regions.forEach((name, region) -> {
            if (!documented.contains(region)) {
                problems.add(name + " is not in any document verbatim:\n" + region);
            }
        });
        assertThat(problems).isEmpty();
    }

    @Test
    void a_changed_character_is_noticed() {
        String quickStart = regions().get("consumer/QuickStart.java#quickstart");
        String readme = RepositoryFiles.read(root.resolve("README.md"));
        assertThat(readme).contains(quickStart);
        assertThat(normalise("    a\n      b\n")).isEqualTo("a\n  b\n");
        assertThat(readme).doesNotContain(quickStart.replace("public.items_changes", "public.get_item_changes"));
    }

    private List<Path> documents() {
        return RepositoryFiles.textFiles(root).stream()
                .filter(file -> file.equals(root.resolve("README.md"))
                        || file.startsWith(root.resolve("docs"))
                        || root.relativize(file).getNameCount() == 2
                                && file.getFileName().toString().startsWith("README"))
                .filter(file -> RepositoryFiles.extension(file).equals("md"))
                .collect(Collectors.toList());
    }

    /** Every tagged region of the snippet sources, by "file#tag". */
    private Map<String, String> regions() {
        Path readmeSnippets = root.resolve("examples/src/test/java/io/tidemark/examples/readme");
        Path consumer = root.resolve("examples/src/it/consumer");
        Map<String, String> regions = new LinkedHashMap<>();
        for (Path file : RepositoryFiles.textFiles(root)) {
            String prefix = file.startsWith(consumer) ? "consumer/" : file.startsWith(readmeSnippets) ? "readme/" : null;
            if (prefix == null) {
                continue;
            }
            Matcher tag = TAG.matcher(RepositoryFiles.read(file));
            while (tag.find()) {
                regions.put(prefix + file.getFileName() + "#" + tag.group(1), normalise(tag.group(2)));
            }
        }
        return regions;
    }

    /** Drops the common indentation and trailing blanks; keeps everything else. */
    static String normalise(String text) {
        List<String> lines = List.of(text.replace("\r\n", "\n").split("\n", -1));
        int indent = lines.stream().filter(line -> !line.isBlank())
                .mapToInt(line -> line.length() - line.stripLeading().length()).min().orElse(0);
        StringBuilder out = new StringBuilder();
        for (String line : lines) {
            out.append(line.isBlank() ? "" : line.substring(indent).stripTrailing()).append('\n');
        }
        return out.toString().replaceAll("\\n+$", "\n");
    }
}
