package io.tidemark.examples.docs;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every reference in the repository points at something in the repository. A user who clones the project must be
 * able to open whatever a message, a comment or a document names. Checked over every md, java, sql, xml and
 * properties file outside build output:
 * <ul>
 *   <li>markdown links {@code [text](path#anchor)}: the file exists, relative to the linking file, and for a
 *       markdown target the anchor is one of its headings (GitHub's slugs);</li>
 *   <li>mentions of markdown files in any text ({@code docs/contract.md#the-in-flight-transaction-gap},
 *       {@code README.md}): the file exists relative to the mentioning file or one of its folders up to the root,
 *       and so does the anchor when one is given;</li>
 *   <li>no mention of the design notes and reference texts the project was started from, which are not part of
 *       the repository.</li>
 * </ul>
 */
class ReferenceCheckTest {

    /** Spelled in parts, so that this file does not itself mention them. */
    private static final List<String> FORBIDDEN = List.of(
            "DESIGN" + ".md", "procedure-contract" + ".txt", "history-trigger" + ".txt",
            "sqlserver-change-tracking" + ".txt", "shared" + "/");

    private static final Pattern MARKDOWN_LINK = Pattern.compile("(?<!!)\\[(?:[^\\]\\[]|\\[[^\\]]*])*]\\(([^)\\s]+)\\)");
    private static final Pattern MARKDOWN_MENTION =
            Pattern.compile("(?<![\\w./-])((?:\\.{1,2}/)?[\\w./-]*[\\w-]\\.md)(#[\\w-]+)?(?![\\w])");

    private final Path root = RepositoryFiles.root();

    @Test
    void every_reference_resolves_inside_the_repository() {
        List<Path> files = RepositoryFiles.textFiles(root);
        assertThat(files).as("text files found under %s", root).hasSizeGreaterThan(100);
        assertThat(files).contains(root.resolve("README.md"));

        List<String> problems = new ArrayList<>();
        for (Path file : files) {
            String text = RepositoryFiles.read(file);
            checkForbiddenNames(file, text, problems);
            if (RepositoryFiles.extension(file).equals("md")) {
                checkMarkdownLinks(file, text, problems);
            }
            checkMarkdownMentions(file, text, problems);
        }
        assertThat(problems).as("references that do not resolve to a file in the repository").isEmpty();
    }

    @Test
    void github_slugs_are_computed_as_github_does() {
        assertThat(MarkdownAnchors.slug("The in-flight transaction gap")).isEqualTo("the-in-flight-transaction-gap");
        assertThat(MarkdownAnchors.slug("`ProcedureContractVerifier`")).isEqualTo("procedurecontractverifier");
        assertThat(MarkdownAnchors.slug("Building, CI")).isEqualTo("building-ci");
        assertThat(MarkdownAnchors.slug("WATERMARK_SOURCE_CHANGED")).isEqualTo("watermark_source_changed");
        assertThat(MarkdownAnchors.of("# A\n```\n# not a heading\n```\n## A\n")).containsExactly("a", "a-1");
    }

    @Test
    void the_check_finds_a_broken_link_a_broken_anchor_and_a_forbidden_name() {
        Path readme = root.resolve("README.md");
        List<String> problems = new ArrayList<>();
        // Spelled in parts, so that this file does not itself hold broken references.
        checkMarkdownLinks(readme, "see [x](docs/missing" + ".md) and [y](docs/contract" + ".md#no-such-heading)",
                problems);
        checkMarkdownMentions(readme, "see docs/nothing-here" + ".md", problems);
        checkMarkdownMentions(readme, "<exclude>META-INF/LICENSE" + ".md</exclude>", problems);   // inside a jar: fine
        checkForbiddenNames(readme, "as " + FORBIDDEN.get(0) + " says", problems);
        assertThat(problems).hasSize(4);
    }

    private void checkForbiddenNames(Path file, String text, List<String> problems) {
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            for (String name : FORBIDDEN) {
                if (lines[i].contains(name)) {
                    problems.add(where(file, i) + " names " + name + ", which is not in the repository: "
                            + lines[i].trim());
                }
            }
        }
    }

    private void checkMarkdownLinks(Path file, String text, List<String> problems) {
        String[] lines = withoutCodeFences(text).split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            Matcher link = MARKDOWN_LINK.matcher(lines[i]);
            while (link.find()) {
                String target = link.group(1);
                if (target.matches("^[a-z][a-z0-9+.-]*:.*")) {
                    continue;   // http:, https:, mailto: are not files of the repository
                }
                int hash = target.indexOf('#');
                String path = hash < 0 ? target : target.substring(0, hash);
                String anchor = hash < 0 ? null : target.substring(hash + 1);
                Path resolved = path.isEmpty() ? file : file.getParent().resolve(path).normalize();
                check(file, i, target, Optional.of(resolved), anchor, problems);
            }
        }
    }

    private void checkMarkdownMentions(Path file, String text, List<String> problems) {
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            Matcher mention = MARKDOWN_MENTION.matcher(lines[i]);
            while (mention.find()) {
                String path = mention.group(1);
                if (path.startsWith("META-INF/")) {
                    continue;   // a file inside a jar (the benchmark jar's shade filters), not one of the repository
                }
                String anchor = mention.group(2) == null ? null : mention.group(2).substring(1);
                check(file, i, path + (anchor == null ? "" : "#" + anchor), findUpwards(file, path), anchor,
                        problems);
            }
        }
    }

    /** A mention resolves against the mentioning file's folder or any folder above it, up to the root. */
    private Optional<Path> findUpwards(Path file, String path) {
        for (Path dir = file.getParent(); dir != null && dir.startsWith(root); dir = dir.getParent()) {
            Path candidate = dir.resolve(path).normalize();
            if (Files.isRegularFile(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    private void check(Path file, int line, String reference, Optional<Path> target, String anchor,
                       List<String> problems) {
        if (target.isEmpty() || !Files.exists(target.get()) || !target.get().startsWith(root)) {
            problems.add(where(file, line) + " refers to " + reference + ", which is not a file of the repository");
            return;
        }
        if (anchor != null && !anchor.isEmpty()
                && target.get().getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".md")
                && !MarkdownAnchors.of(RepositoryFiles.read(target.get())).contains(anchor)) {
            problems.add(where(file, line) + " refers to " + reference + ", but " + root.relativize(target.get())
                    + " has no heading with the anchor #" + anchor);
        }
    }

    /** Links inside code blocks are code, not links; their lines stay, blank, so line numbers still match. */
    private static String withoutCodeFences(String markdown) {
        StringBuilder out = new StringBuilder();
        boolean inFence = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.trim().startsWith("```")) {
                inFence = !inFence;
                out.append('\n');
                continue;
            }
            out.append(inFence ? "" : line).append('\n');
        }
        return out.toString();
    }

    private String where(Path file, int line) {
        return root.relativize(file) + ":" + (line + 1);
    }
}
