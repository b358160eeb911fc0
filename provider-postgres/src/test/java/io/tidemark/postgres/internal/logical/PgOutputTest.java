package io.tidemark.postgres.internal.logical;

import io.tidemark.postgres.internal.logical.PgOutput.Begin;
import io.tidemark.postgres.internal.logical.PgOutput.Commit;
import io.tidemark.postgres.internal.logical.PgOutput.Delete;
import io.tidemark.postgres.internal.logical.PgOutput.Insert;
import io.tidemark.postgres.internal.logical.PgOutput.Relation;
import io.tidemark.postgres.internal.logical.PgOutput.Truncate;
import io.tidemark.postgres.internal.logical.PgOutput.Update;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The pgoutput messages as the protocol documents them, built byte by byte. */
class PgOutputTest {

    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final DataOutputStream out = new DataOutputStream(bytes);

    private ByteBuffer message() {
        return ByteBuffer.wrap(bytes.toByteArray());
    }

    private void string(String s) throws IOException {
        out.write(s.getBytes(StandardCharsets.UTF_8));
        out.write(0);
    }

    private void tuple(String... values) throws IOException {
        out.writeShort(values.length);
        for (String v : values) {
            if (v == null) {
                out.write('n');
            } else if (v.equals("<toast>")) {
                out.write('u');
            } else {
                byte[] text = v.getBytes(StandardCharsets.UTF_8);
                out.write('t');
                out.writeInt(text.length);
                out.write(text);
            }
        }
    }

    @Test
    void begin_and_commit_give_the_transaction_and_the_end_of_its_commit_record() throws IOException {
        out.write('B');
        out.writeLong(0x1_0000_0100L);
        out.writeLong(123_456L);
        out.writeInt(777);
        assertThat(PgOutput.parse(message())).isEqualTo(new Begin(0x1_0000_0100L, 777));
        bytes.reset();
        out.write('C');
        out.write(0);
        out.writeLong(0x100L);
        out.writeLong(0x128L);
        out.writeLong(123_456L);
        assertThat(PgOutput.parse(message())).isEqualTo(new Commit(0x100L, 0x128L));
    }

    @Test
    void a_relation_names_its_columns_types_and_key() throws IOException {
        out.write('R');
        out.writeInt(16384);
        string("public");
        string("items");
        out.write('d');
        out.writeShort(2);
        out.write(1);
        string("id");
        out.writeInt(23);
        out.writeInt(-1);
        out.write(0);
        string("name");
        out.writeInt(25);
        out.writeInt(-1);
        Relation r = (Relation) PgOutput.parse(message());
        assertThat(r.schema()).isEqualTo("public");
        assertThat(r.name()).isEqualTo("items");
        assertThat(r.columns()).containsExactly(new PgOutput.Column(true, "id", 23),
                new PgOutput.Column(false, "name", 25));
    }

    @Test
    void rows_keep_nulls_text_and_unchanged_large_values_apart() throws IOException {
        out.write('I');
        out.writeInt(16384);
        out.write('N');
        tuple("7", null, "<toast>", "é");
        Insert insert = (Insert) PgOutput.parse(message());
        assertThat(insert.relation()).isEqualTo(16384);
        assertThat(insert.row().kind(1)).isEqualTo(PgOutput.NULL);
        assertThat(insert.row().kind(2)).isEqualTo(PgOutput.UNCHANGED_TOAST);
        assertThat(new String(insert.row().value(3), StandardCharsets.UTF_8)).isEqualTo("é");
    }

    @Test
    void an_update_may_carry_the_old_key_or_the_old_row_and_a_delete_one_of_them() throws IOException {
        out.write('U');
        out.writeInt(1);
        out.write('K');
        tuple("1", null);
        out.write('N');
        tuple("2", "b");
        Update keyChange = (Update) PgOutput.parse(message());
        assertThat(keyChange.oldIsKey()).isTrue();
        assertThat(new String(keyChange.old().value(0), StandardCharsets.UTF_8)).isEqualTo("1");
        bytes.reset();
        out.write('U');
        out.writeInt(1);
        out.write('N');
        tuple("2", "c");
        assertThat(((Update) PgOutput.parse(message())).old()).isNull();
        bytes.reset();
        out.write('D');
        out.writeInt(1);
        out.write('O');
        tuple("2", "c");
        Delete delete = (Delete) PgOutput.parse(message());
        assertThat(delete.oldIsKey()).isFalse();
        assertThat(delete.old().size()).isEqualTo(2);
    }

    @Test
    void a_truncate_lists_its_tables_and_messages_without_use_are_skipped_whole() throws IOException {
        out.write('T');
        out.writeInt(2);
        out.write(0);
        out.writeInt(10);
        out.writeInt(11);
        assertThat(((Truncate) PgOutput.parse(message())).relations()).containsExactly(10, 11);
        bytes.reset();
        out.write('O');
        out.writeLong(5);
        string("origin");
        ByteBuffer origin = message();
        assertThat(PgOutput.parse(origin)).isEqualTo(new PgOutput.Other('O'));
        assertThat(origin.hasRemaining()).isFalse();
    }

    @Test
    void a_malformed_message_fails_with_what_was_expected() throws IOException {
        out.write('I');
        out.writeInt(1);
        out.write('X');
        assertThatThrownBy(() -> PgOutput.parse(message())).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("expected 'N'");
    }
}
