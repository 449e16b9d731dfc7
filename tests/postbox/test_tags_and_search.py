"""Tag indices, tag summaries and full-text search."""

from __future__ import annotations

import pytest

from postbox import (
    ChangeRecord,
    InvalidSearchQueryError,
    MessageHistoryTagSummary,
    MessageId,
    MessageIndex,
    MessageTags,
    PeerId,
    Postbox,
    StoreMessage,
    TagSummaryKey,
)

PHOTO, LINK = MessageTags.PHOTO, MessageTags.LINK


def test_tagged_messages_are_indexed_per_tag(postbox: Postbox, alice: PeerId) -> None:
    # The server's summaries: nothing yet. Without one the count is unknown (None).
    postbox.run(lambda tx: tx.replace_tag_summary(alice, PHOTO, 0, 0, 0))
    postbox.run(
        lambda tx: tx.add_messages(
            [
                StoreMessage(alice, 0, 1, 10, tags=PHOTO),
                StoreMessage(alice, 0, 2, 20, tags=PHOTO | LINK),
                StoreMessage(alice, 0, 3, 30),
                StoreMessage(alice, 0, 4, 40, tags=LINK),
            ]
        )
    )
    photos = postbox.run(lambda tx: tx.get_tagged_message_indices(alice, PHOTO, 0))
    assert [i.id.id for i in photos] == [2, 1]
    links = postbox.run(
        lambda tx: tx.get_tagged_message_indices(alice, LINK, 0, newest_first=False)
    )
    assert [i.id.id for i in links] == [2, 4]
    assert postbox.run(lambda tx: tx.get_tag_summary(alice, PHOTO, 0)) == MessageHistoryTagSummary(
        2, 2
    )
    assert postbox.run(lambda tx: tx.get_tag_summary(alice, LINK, 0)) is None


def test_edits_and_deletes_update_tags_and_summaries(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.replace_tag_summary(alice, PHOTO, 0, 0, 0))
    postbox.run(
        lambda tx: tx.add_messages([StoreMessage(alice, 0, i, i, tags=PHOTO) for i in (1, 2, 3)])
    )
    records: list[ChangeRecord] = []
    postbox.add_commit_listener(records.append)
    postbox.run(
        lambda tx: tx.update_message(
            MessageId(alice, 0, 2), StoreMessage(alice, 0, 2, 2, tags=LINK)
        )
    )
    postbox.run(lambda tx: tx.delete_messages([MessageId(alice, 0, 3)]))
    photos = postbox.run(lambda tx: tx.get_tagged_message_indices(alice, PHOTO, 0))
    assert photos == [MessageIndex(MessageId(alice, 0, 1), 1)]
    assert postbox.run(lambda tx: tx.get_tag_summary(alice, PHOTO, 0)) == MessageHistoryTagSummary(
        1, 3
    )
    assert TagSummaryKey(alice, int(PHOTO), 0) in records[0].updated_tag_summaries


def test_server_summaries_and_older_messages(postbox: Postbox, alice: PeerId) -> None:
    # The server counts 247 photos up to id 500; a hole fill below that adds nothing,
    # a new photo above it adds one.
    postbox.run(lambda tx: tx.replace_tag_summary(alice, PHOTO, 0, 247, 500))
    postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 100, 100, tags=PHOTO)]))
    assert postbox.run(lambda tx: tx.get_tag_summary(alice, PHOTO, 0)) == MessageHistoryTagSummary(
        247, 500
    )
    postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 501, 501, tags=PHOTO)]))
    assert postbox.run(lambda tx: tx.get_tag_summary(alice, PHOTO, 0)) == MessageHistoryTagSummary(
        248, 501
    )


def test_full_text_search(postbox: Postbox, alice: PeerId, bob: PeerId) -> None:
    postbox.run(
        lambda tx: tx.add_messages(
            [
                StoreMessage(alice, 0, 1, 10, text="Lunch at the café tomorrow?"),
                StoreMessage(alice, 0, 2, 20, text="the train is late again"),
                StoreMessage(bob, 0, 3, 30, text="cafe opens at nine"),
            ]
        )
    )
    hits = postbox.run(lambda tx: tx.search_messages("cafe"))
    assert {i.id for i in hits} == {MessageId(alice, 0, 1), MessageId(bob, 0, 3)}
    hits = postbox.run(lambda tx: tx.search_messages("cafe", peer_id=bob))
    assert [i.id for i in hits] == [MessageId(bob, 0, 3)]
    assert [i.id.id for i in postbox.run(lambda tx: tx.search_messages("tra*"))] == [2]
    postbox.run(lambda tx: tx.delete_messages([MessageId(bob, 0, 3)]))
    postbox.run(
        lambda tx: tx.update_message(
            MessageId(alice, 0, 1), StoreMessage(alice, 0, 1, 10, text="dinner")
        )
    )
    assert postbox.run(lambda tx: tx.search_messages("cafe")) == []
    assert [i.id.id for i in postbox.run(lambda tx: tx.search_messages("dinner"))] == [1]


@pytest.mark.parametrize("query", ['"unterminated', "AND", "a NEAR(", "col:"])
def test_a_malformed_query_is_a_typed_error(postbox: Postbox, alice: PeerId, query: str) -> None:
    postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 1, 10, text="hello")]))
    with pytest.raises(InvalidSearchQueryError, match="cannot search"):
        postbox.run(lambda tx: tx.search_messages(query))
    # The postbox works on.
    assert len(postbox.run(lambda tx: tx.search_messages("hello"))) == 1


def test_an_edit_that_keeps_a_tag_keeps_the_count(postbox: Postbox, alice: PeerId) -> None:
    postbox.run(lambda tx: tx.replace_tag_summary(alice, PHOTO, 0, 0, 0))
    postbox.run(lambda tx: tx.add_messages([StoreMessage(alice, 0, 5, 50, tags=PHOTO)]))
    postbox.run(
        lambda tx: tx.update_message(
            MessageId(alice, 0, 5), StoreMessage(alice, 0, 5, 50, tags=PHOTO, text="caption")
        )
    )
    assert postbox.run(lambda tx: tx.get_tag_summary(alice, PHOTO, 0)) == MessageHistoryTagSummary(
        1, 5
    )
