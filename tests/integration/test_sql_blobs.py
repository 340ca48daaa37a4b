"""Blobs by reference: stored once per session, swept when unreferenced, never shared."""

from __future__ import annotations

import hashlib

import pytest
import sqlalchemy as sa

from sqlmemory import DocumentBlock, ImageBlock, Message, SqlStorage, estimate_tokens
from tests.support.cases import PDF_BYTES, PIL_FORMATS, image_bytes, image_tokens, png_header_only
from tests.support.tables import BLOBS, BLOCKS, blob_rows, orphan_blobs, row_counts

SID = "blobs"
PNG_A = image_bytes(100, 50, seed=1)
PNG_B = image_bytes(100, 50, seed=2)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def picture(message_id: str, data: bytes = PNG_A) -> Message:
    return Message.user([f"picture {message_id}", ImageBlock(data, "image/png")], id=message_id)


def blobs_of(engine: sa.Engine, session_id: str | None = None) -> list[dict[str, object]]:
    with engine.connect() as conn:
        return blob_rows(conn, session_id)


def orphans(engine: sa.Engine) -> list[tuple[str, str]]:
    with engine.connect() as conn:
        return orphan_blobs(conn)


def test_the_same_bytes_in_many_messages_are_stored_once(
    storage: SqlStorage, engine: sa.Engine
) -> None:
    storage.append(SID, *(picture(f"batch{i}") for i in range(5)))
    for i in range(5):
        storage.append(SID, picture(f"single{i}"))
    document = DocumentBlock(PDF_BYTES, "application/pdf")
    storage.append(SID, Message.user(["twice", document, document], id="doc"))
    storage.save(SID, [*storage.load(SID), picture("saved"), picture("saved-b", PNG_B)])
    assert [(b["sha256"], b["size"]) for b in blobs_of(engine)] == sorted(
        [(sha(PNG_A), len(PNG_A)), (sha(PNG_B), len(PNG_B)), (sha(PDF_BYTES), len(PDF_BYTES))]
    )
    with engine.connect() as conn:
        references = conn.scalar(
            sa.select(sa.func.count()).select_from(BLOCKS).where(BLOCKS.c.blob_sha256 == sha(PNG_A))
        )
    assert references == 11
    loaded = storage.load(SID)
    assert len(loaded) == 13
    assert all(m.content[1].data == PNG_A for m in loaded[:10] + loaded[11:12])  # type: ignore[union-attr]
    assert loaded[10].content[1].data == loaded[10].content[2].data == PDF_BYTES  # type: ignore[union-attr]


@pytest.mark.parametrize("media_type", sorted(PIL_FORMATS))
def test_image_size_is_kept_with_the_blob(
    storage: SqlStorage, engine: sa.Engine, media_type: str
) -> None:
    data = image_bytes(130, 65, media_type)
    storage.append(SID, Message.user(ImageBlock(data, media_type), id="img"))
    (row,) = blobs_of(engine, SID)
    assert (row["width"], row["height"], row["size"]) == (130, 65, len(data))
    (loaded,) = storage.load(SID)
    assert (loaded.content[0].width, loaded.content[0].height) == (130, 65)  # type: ignore[union-attr]
    assert estimate_tokens(loaded) == 4 + image_tokens(130, 65)


def test_a_documents_blob_has_no_size(storage: SqlStorage, engine: sa.Engine) -> None:
    storage.append(SID, Message.user(DocumentBlock(PDF_BYTES, "application/pdf"), id="d"))
    (row,) = blobs_of(engine, SID)
    assert (row["width"], row["height"], row["size"]) == (None, None, len(PDF_BYTES))


def test_a_header_claiming_a_huge_image_is_accepted_and_sized_from_the_header(
    storage: SqlStorage, engine: sa.Engine
) -> None:
    data = png_header_only(50_000, 50_000)
    message = Message.user(ImageBlock(data, "image/png"), id="huge")
    storage.append(SID, message)
    (row,) = blobs_of(engine, SID)
    assert (row["width"], row["height"]) == (50_000, 50_000)
    (loaded,) = storage.load(SID)
    assert loaded.content[0].data == data  # type: ignore[union-attr]
    assert estimate_tokens(loaded) == 4 + image_tokens(50_000, 50_000)


def test_no_unreferenced_blob_survives_evict_save_or_clear(
    storage: SqlStorage, engine: sa.Engine
) -> None:
    doc = DocumentBlock(PDF_BYTES, "application/pdf")
    storage.append(
        SID,
        picture("m1", PNG_A),
        picture("m2", PNG_B),
        Message.user(["doc", doc], id="m3"),
        picture("m4", PNG_A),
        Message.user("text only", id="m5"),
    )
    assert len(blobs_of(engine, SID)) == 3
    assert storage.evict(SID, 3) == 2  # m1 (A, still used by m4) and m2 (B)
    assert orphans(engine) == []
    assert {b["sha256"] for b in blobs_of(engine, SID)} == {sha(PNG_A), sha(PDF_BYTES)}
    loaded = storage.load(SID)
    storage.save(SID, [loaded[1], loaded[2]])  # drops m3, the document's only user
    assert orphans(engine) == []
    assert {b["sha256"] for b in blobs_of(engine, SID)} == {sha(PNG_A)}
    storage.save(SID, [picture("m6", PNG_B)])  # replaces everything, A unreferenced
    assert orphans(engine) == []
    assert {b["sha256"] for b in blobs_of(engine, SID)} == {sha(PNG_B)}
    storage.evict(SID, 0)
    assert blobs_of(engine) == []
    storage.append(SID, picture("m7", PNG_A), picture("m8", PNG_B))
    storage.clear(SID)
    assert blobs_of(engine) == []
    storage.append(SID, picture("m9", PNG_A))
    storage.save(SID, [])
    with engine.connect() as conn:
        assert row_counts(conn) == {"sessions": 0, "messages": 0, "blocks": 0, "blobs": 0}


def test_each_session_has_its_own_copy_of_shared_bytes(
    storage: SqlStorage, engine: sa.Engine
) -> None:
    storage.append("alice", picture("a1"), picture("a2"))
    storage.append("bob", picture("b1"))
    assert [(b["session_id"], b["sha256"]) for b in blobs_of(engine)] == [
        ("alice", sha(PNG_A)),
        ("bob", sha(PNG_A)),
    ]
    assert storage.clear("alice") == 2
    (bob,) = storage.load("bob")
    assert bob.content[1].data == PNG_A  # type: ignore[union-attr]
    assert [b["session_id"] for b in blobs_of(engine)] == ["bob"]
    storage.append("alice", picture("a3"))
    assert storage.evict("bob", 0) == 1
    (alice,) = storage.load("alice")
    assert alice.content[1].data == PNG_A  # type: ignore[union-attr]
    assert [b["session_id"] for b in blobs_of(engine)] == ["alice"]


def test_a_block_cannot_reference_another_sessions_blob(
    storage: SqlStorage, engine: sa.Engine
) -> None:
    storage.append("alice", picture("a1"))
    storage.append("bob", Message.user(["no picture", "second block"], id="b1"))
    with engine.connect() as conn:
        seq = conn.scalar(sa.select(BLOCKS.c.seq).where(BLOCKS.c.session_id == "bob"))
    # The composite foreign key (session_id, blob_sha256) refuses the reference, so no
    # query, however written, can hand bob alice's bytes.
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
        conn.execute(
            BLOCKS.insert().values(
                session_id="bob",
                seq=seq,
                position=5,
                kind="image",
                media_type="image/png",
                blob_sha256=sha(PNG_A),
            )
        )
    with engine.connect() as conn:
        stored = conn.scalars(sa.select(BLOBS.c.session_id)).all()
    assert stored == ["alice"]
    assert [m.text_content() for m in storage.load("bob")] == ["no picture\nsecond block"]


def test_a_pop_keeping_part_of_the_message_keeps_the_bytes_it_still_references(
    storage: SqlStorage, engine: sa.Engine
) -> None:
    both = Message.user(
        ["two pictures", ImageBlock(PNG_A, "image/png"), ImageBlock(PNG_B, "image/png")]
    )
    storage.append(SID, Message.user("first"), both)

    def first_picture(popped: Message) -> list[Message]:
        return [Message.user(list(popped.content[:2]), id="kept")]

    popped = storage._pop_keeping(SID, first_picture)
    assert popped is not None and popped.with_recorded_at(None) == both
    (first, kept) = storage.load(SID)
    assert first.text_content() == "first" and kept.id == "kept"
    assert kept.content[1] == ImageBlock(PNG_A, "image/png")
    assert {b["sha256"] for b in blobs_of(engine, SID)} == {sha(PNG_A)}  # PNG_B went
    assert orphans(engine) == []
    assert storage.count(SID) == 2
