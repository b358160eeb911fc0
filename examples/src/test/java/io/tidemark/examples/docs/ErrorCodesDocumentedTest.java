package io.tidemark.examples.docs;

import io.tidemark.sync.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** docs/operations.md has a section, with cause and remedy, for every ErrorCode there is, and none for a code that is gone. */
class ErrorCodesDocumentedTest {

    @Test
    void every_error_code_has_its_section_in_the_operations_guide() {
        String guide = RepositoryFiles.read(RepositoryFiles.root().resolve("docs/operations.md"));
        Set<String> anchors = MarkdownAnchors.of(guide);
        List<String> codes = Arrays.stream(ErrorCode.values()).map(Enum::name).collect(Collectors.toList());

        List<String> headings = guide.lines().filter(line -> line.startsWith("#### "))
                .map(line -> line.substring(5).trim()).collect(Collectors.toList());
        assertThat(headings).as("error code sections of docs/operations.md").containsExactlyInAnyOrderElementsOf(codes);
        for (String code : codes) {
            assertThat(anchors).contains(MarkdownAnchors.slug(code));
            String section = guide.substring(guide.indexOf("#### " + code + "\n") + code.length() + 6);
            int next = section.indexOf("\n#");
            assertThat((next < 0 ? section : section.substring(0, next)).trim())
                    .as("the text of %s", code).hasSizeGreaterThan(60);
        }
    }
}
