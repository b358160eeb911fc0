package io.tidemark.sync.spi;

import org.junit.jupiter.api.Test;

import java.util.OptionalInt;

import static org.assertj.core.api.Assertions.assertThat;

class ChangeRequestTest {

    @Test
    void renders_the_contract_request_exactly() {
        assertThat(ChangeRequest.sync(12345).toJson()).isEqualTo("{\"fromVersion\":12345,\"mode\":\"sync\"}");
        assertThat(ChangeRequest.seed().toJson()).isEqualTo("{\"fromVersion\":0,\"mode\":\"seed\"}");
        assertThat(ChangeRequest.sync(7, OptionalInt.of(500)).toJson())
                .isEqualTo("{\"fromVersion\":7,\"mode\":\"sync\",\"maxRows\":500}");
        assertThat(ChangeRequest.sync(-1, OptionalInt.empty()).toJson()).isEqualTo("{\"fromVersion\":-1,\"mode\":\"sync\"}");
        assertThat(ChangeRequest.sync(Long.MAX_VALUE).fromVersion()).isEqualTo(Long.MAX_VALUE);
        assertThat(ChangeRequest.initialFull(OptionalInt.empty()).toJson())
                .isEqualTo("{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}");
        assertThat(ChangeRequest.initialFull(OptionalInt.of(10)).toJson())
                .isEqualTo("{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true,\"maxRows\":10}");
        assertThat(ChangeRequest.initialFull(OptionalInt.empty()).initial()).isTrue();
        assertThat(ChangeRequest.sync(0).initial()).isFalse();
    }
}
