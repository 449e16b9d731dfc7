"""Generated accounts and the dataset directory that carries them.

A dataset is one user's account (chats, messages, read states, pinned and archived
chats, notification settings, presences and the recent past the server replays as its
update log), every value a pure function of a seed and a spec. ``account_plan`` plans
the chats, ``message_rows`` draws each message from counter-based hashes
(``counter_hash``) in conversations (``conversation``, with the scripts and lines of
``talk_scripts``, ``talk_lines`` and ``channel_posts``) among peers ``peer_names``
names, ``account_tables`` derives the per-chat tables, ``generator`` assembles a
``DemoDataset`` in this process, and ``files`` (with the row format of ``rows``) reads
the directory and ``writing`` writes it. Live traffic talks on with ``live_talk``, edits with
``text_edits`` and renames with ``renames``. The mock server (``sync.server``) loads
datasets and ``spark_tools`` writes large ones on Spark from the same row functions, so
both paths agree byte for byte.

Of this project's packages it imports only ``postbox`` (its value types); other packages
use the names exported here.
"""

from dataset.account_plan import DEMO_NOW, AccountPlan, AccountSpec, ChatPlan, plan_account
from dataset.account_tables import AccountTables, account_tables
from dataset.files import (
    COLUMNS,
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST_NAME,
    DataFile,
    DatasetError,
    DatasetExistsError,
    Manifest,
    MessageRow,
    dataset_directory_problem,
    iter_message_rows,
    message_from_row,
    message_to_row,
    read_dataset,
    read_manifest,
)
from dataset.generator import (
    MAX_DAYS,
    MAX_MESSAGES,
    MAX_PEERS,
    SEARCH_WORD,
    DemoDataset,
    assemble_dataset,
    build_dataset,
    demo_spec,
    describe_media,
    generate_dataset,
    live_message,
)
from dataset.live_talk import LastMessage, LiveTalk
from dataset.message_rows import (
    ChatRows,
    Deletion,
    MessageFate,
    Piece,
    generate_slice,
    iter_slice,
    plan_slices,
)
from dataset.renames import renamed
from dataset.rows import build_message
from dataset.text_edits import added_caption, draft_of, edited, has_typo
from dataset.writing import write_dataset, write_dataset_with, write_message_part

__all__ = [
    "COLUMNS",
    "DEMO_NOW",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MANIFEST_NAME",
    "MAX_DAYS",
    "MAX_MESSAGES",
    "MAX_PEERS",
    "SEARCH_WORD",
    "AccountPlan",
    "AccountSpec",
    "AccountTables",
    "ChatPlan",
    "ChatRows",
    "LastMessage",
    "LiveTalk",
    "DataFile",
    "DatasetError",
    "DatasetExistsError",
    "Deletion",
    "DemoDataset",
    "Manifest",
    "MessageFate",
    "MessageRow",
    "Piece",
    "account_tables",
    "added_caption",
    "assemble_dataset",
    "build_dataset",
    "build_message",
    "dataset_directory_problem",
    "demo_spec",
    "draft_of",
    "edited",
    "describe_media",
    "generate_dataset",
    "generate_slice",
    "has_typo",
    "iter_message_rows",
    "iter_slice",
    "live_message",
    "message_from_row",
    "message_to_row",
    "plan_account",
    "plan_slices",
    "read_dataset",
    "read_manifest",
    "renamed",
    "write_dataset",
    "write_dataset_with",
    "write_message_part",
]
