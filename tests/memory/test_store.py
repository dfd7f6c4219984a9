"""The user's memory store, the same tests on both engines: a SQLite file in the test's folder
and a fresh database of a real PostgreSQL server (`support.postgres`). What is filed is found
by its words (stemmed), ranked, filtered and listed; a key is filed once; a secret is stored
redacted; a forgotten entry is gone — from the SQLite file's bytes too; a server that is not
there is named without its password; and where the memory is comes from
`$LIGHTSCIENTIST_MEMORY`.

Not unit tests: half of them talk to a PostgreSQL server the session starts.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.postgres import PASSWORD

from lightscientist_jupyter.errors import MemoryUnavailable
from lightscientist_jupyter.memory import Entry, Hit, MemoryStore, NewEntry, location, open_store
from lightscientist_jupyter.memory.entries import MAX_TEXT_CHARS
from lightscientist_jupyter.memory.postgres import PostgresMemory
from lightscientist_jupyter.memory.sqlite import SqliteMemory
from lightscientist_jupyter.vocab import MemoryKind

A, B = "/home/me/warmup-study", "/home/me/tokenizer-study"


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    """An empty store of each engine (a test taking it runs once on each)."""
    made: MemoryStore
    if request.param == "sqlite":
        made = SqliteMemory(tmp_path / "memory.sqlite3")
    else:
        made = PostgresMemory(request.getfixturevalue("pg_url"))
    yield made
    made.close()


def lesson(text: str, key: str, project: str = A, **more: object) -> NewEntry:
    return NewEntry(MemoryKind.LESSON, text, project, key, **more)


def texts(found: list[Hit] | list[Entry]) -> list[str]:
    """The texts of the hits of a search or of listed entries, in their order."""
    return [(item.entry if isinstance(item, Hit) else item).text for item in found]


OTHER_LESSONS = (
    "Pin the dataset's version before the first experiment.",
    "Plots need their axes labelled with units.",
    "Batch size 64 fit in the GPU's memory; 128 did not.",
    "Three seeds are too few for a difference of half a point.",
    "Adam with default betas was stable for the CNN.",
    "Dropout of 0.5 hurt the small model.",
)
"""Lessons holding none of the queries' words: a store of a few entries ranks oddly (BM25
gives no weight to a word that half of the entries hold)."""


def test_a_search_finds_by_a_word_and_ranks_the_entry_holding_more_of_the_query_first(store):
    for n, text in enumerate(OTHER_LESSONS):
        store.add(lesson(text, f"other{n}", project=B))
    store.add(lesson("The learning rate of 0.1 made the MLP diverge after 200 steps.", "l1"))
    store.add(lesson("Linear warmup over 500 steps let the MLP train at learning rate 0.1.", "l2"))
    store.add(lesson("A learning rate sweep needs five seeds per point.", "l3"))
    store.add(lesson("The tokenizer's vocabulary of 32k pieces was enough.", "l4"))

    assert texts(store.search("tokenizer")) == [
        "The tokenizer's vocabulary of 32k pieces was enough."
    ]
    found = texts(store.search("warmup for the MLP's learning rate", 5))
    assert found == [
        "Linear warmup over 500 steps let the MLP train at learning rate 0.1.",  # 4 words
        "The learning rate of 0.1 made the MLP diverge after 200 steps.",  # 3
        "A learning rate sweep needs five seeds per point.",  # 2
    ]
    assert len(store.search("learning rate", 2)) == 2
    assert store.search("the and of", 5) == []  # no word to search by
    assert store.search("warmup", 0) == []


def test_a_word_finds_its_other_forms(store):
    store.add(lesson("Three warmups were compared on the MLP.", "l1"))
    store.add(lesson("Cosine decay after a warmup helped.", "l2"))
    assert sorted(texts(store.search("warmup"))) == [
        "Cosine decay after a warmup helped.",
        "Three warmups were compared on the MLP.",
    ]
    assert len(store.search("warmups")) == 2


def test_the_same_key_in_a_project_is_filed_once_the_last_kept(store):
    """A stage visit finished again (after a rewind, or in a folder made anew) replaces its
    entry: one entry a key, and what it says now is what the search finds."""
    first = store.add(lesson("Warmup worked.", "lesson:done#1"))
    assert first.text == "Warmup worked." and first.project == A
    second = store.add(lesson("Warmup failed.", "lesson:done#1"))
    assert second.text == "Warmup failed."
    again = store.add(lesson("Warmup helped elsewhere.", "lesson:done#1", project=B))
    assert again.id not in (first.id, second.id)
    assert store.count() == 2
    assert store.get(second.id) == second
    assert texts(store.entries(project=A)) == ["Warmup failed."]
    assert [h.entry.text for h in store.search("worked", project=A)] == []


def test_kinds_and_projects_filter_what_is_found_and_listed(store):
    store.add(lesson("Warmup helped the MLP.", "a1", at=1.0))
    store.add(NewEntry(MemoryKind.FINDING, "Warmup: accuracy 0.91 against 0.88.", A, "a2", at=2.0))
    store.add(lesson("Warmup did nothing for the tokenizer.", "b1", project=B, at=3.0))
    store.add(NewEntry(MemoryKind.PAPER, "Goyal et al.: warmup for large batches.", "", "p1"))

    assert sorted(texts(store.search("warmup", 5, kinds=["lesson"]))) == [
        "Warmup did nothing for the tokenizer.",
        "Warmup helped the MLP.",
    ]
    assert sorted(texts(store.search("warmup", 5, project=A))) == [
        "Warmup helped the MLP.",
        "Warmup: accuracy 0.91 against 0.88.",
    ]
    assert sorted(texts(store.search("warmup", 5, exclude_project=A))) == [
        "Goyal et al.: warmup for large batches.",
        "Warmup did nothing for the tokenizer.",
    ]
    assert texts(store.search("warmup", 5, kinds=["finding", "paper"], exclude_project="")) == [
        "Warmup: accuracy 0.91 against 0.88."
    ]
    assert texts(store.entries(kinds=["lesson"], project=A)) == ["Warmup helped the MLP."]
    assert texts(store.entries(project="")) == ["Goyal et al.: warmup for large batches."]


def test_entries_come_newest_first_and_a_limit_keeps_the_newest(store):
    for key, at in (("k1", 100.0), ("k2", 300.0), ("k3", 200.0)):
        store.add(lesson(f"Lesson {key}.", key, at=at))
    assert texts(store.entries()) == ["Lesson k2.", "Lesson k3.", "Lesson k1."]
    assert texts(store.entries(limit=2)) == ["Lesson k2.", "Lesson k3."]
    listed = store.entries(limit=1)[0]
    assert (listed.kind, listed.key, listed.at, listed.project_name) == (
        "lesson",
        "k2",
        300.0,
        "warmup-study",
    )


def test_a_forgotten_entry_is_found_no_more(store):
    kept = store.add(lesson("Warmup helped the MLP.", "k1"))
    gone = store.add(lesson("Warmup with a zanzibarite schedule broke the MLP.", "k2"))
    assert kept is not None and gone is not None
    assert store.forget(gone.id) is True

    assert texts(store.search("warmup zanzibarite")) == ["Warmup helped the MLP."]
    assert store.search("zanzibarite") == []
    assert texts(store.entries()) == ["Warmup helped the MLP."]
    assert store.get(gone.id) is None and store.count() == 1
    assert store.forget(gone.id) is False
    assert store.forget(10**9) is False
    assert store.add(lesson("Filed again under its old key.", "k2")) is not None


def test_a_secret_is_stored_redacted_a_nul_dropped_and_a_long_text_cut(store):
    key = "sk-" + "A1b2C3d4E5f6G7h8J9"
    added = store.add(lesson(f"The run used {key} to reach the model;\x00 warmup helped.", "k1"))
    assert added is not None
    stored = store.get(added.id)
    assert stored is not None and stored == added
    assert stored.text == "The run used [REDACTED] to reach the model; warmup helped."
    assert key not in "".join(texts(store.search("warmup model")))

    long = store.add(lesson("warmup " * 1000, "k2"))
    assert long is not None and len(long.text) <= MAX_TEXT_CHARS
    assert long.text.endswith(" … (cut)") and store.get(long.id) == long


def test_entries_outlive_the_store_that_filed_them(store, tmp_path):
    added = store.add(lesson("Warmup helped.", "k1", stage="experiment.loop", visit=2))
    store.close()
    where = str(tmp_path / "memory.sqlite3") if isinstance(store, SqliteMemory) else store.url
    with open_store(where) as again:  # (the table is there: made by the first open)
        assert again.get(added.id) == added
        assert again.entries()[0].origin() == "warmup-study, experiment.loop#2"


def test_threads_of_one_kernel_share_a_store(store):
    def file_some(thread: int) -> None:
        for n in range(20):
            store.add(lesson(f"Lesson {n} of thread {thread}: warmup.", f"t{thread}-{n}"))

    threads = [threading.Thread(target=file_some, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.count() == 80 and len(store.search("warmup", 100)) == 80


def test_a_server_restart_between_two_calls_goes_unnoticed(own_postgres):
    url = own_postgres.new_database()
    with PostgresMemory(url) as store:
        added = store.add(lesson("Warmup helped.", "k1"))
        own_postgres.stop()
        with pytest.raises(MemoryUnavailable) as down:
            store.search("warmup")
        assert str(down.value).startswith(
            f"memory: cannot search the PostgreSQL database '{url.rsplit('/', 1)[1]}' on "
            f"127.0.0.1:{own_postgres.port} as user 'postgres': the server is unreachable"
        )
        own_postgres.start()
        assert [hit.entry for hit in store.search("warmup")] == [added]
        own_postgres.stop()
        own_postgres.start()
        assert store.add(lesson("Warmup helped again.", "k2")) is not None
        assert store.count() == 2


def test_a_forgotten_text_leaves_the_sqlite_file(tmp_path):
    path = tmp_path / "memory.sqlite3"
    with SqliteMemory(path) as store:
        for n in range(50):  # enough for the index to have pages of its own
            store.add(lesson(f"Warmup lesson number {n} of many.", f"k{n}"))
        gone = store.add(lesson("Warmup with a zanzibarite schedule broke the MLP.", "secret"))
        assert gone is not None

        def files() -> bytes:
            return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())

        assert b"zanzibarite" in files()
        assert store.forget(gone.id)
        assert b"zanzibarite" not in files()
        assert store.count() == 50


def test_the_postgres_store_is_named_without_its_password(pg_url, postgres):
    with PostgresMemory(pg_url) as store:
        assert store.where == pg_url.replace(f":{PASSWORD}@", "@")
    database = pg_url.rsplit("/", 1)[1]
    with pytest.raises(MemoryUnavailable) as wrong:
        open_store(pg_url.replace(PASSWORD, "not-it"))
    assert str(wrong.value) == (
        f"memory: cannot open the PostgreSQL database '{database}' on 127.0.0.1:{postgres.port} "
        "as user 'postgres': wrong password (it comes from the URL, PGPASSWORD or ~/.pgpass); "
        "fix that, or set $LIGHTSCIENTIST_MEMORY to another store (a file, or another "
        "postgresql:// URL)"
    )


def test_a_server_that_is_not_there_is_named_without_the_password():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(MemoryUnavailable) as caught:
        open_store(f"postgresql://me:hunter2@127.0.0.1:{port}/lab")
    assert str(caught.value) == (
        f"memory: cannot open the PostgreSQL database 'lab' on 127.0.0.1:{port} as user 'me': "
        "the server is unreachable (is PostgreSQL running there?); fix that, or set "
        "$LIGHTSCIENTIST_MEMORY to another store (a file, or another postgresql:// URL)"
    )
    assert "hunter2" not in str(caught.value)


def test_where_the_memory_is_comes_from_the_environment(monkeypatch, tmp_path, own_memory):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert location() == str(own_memory)  # every test has its own
    url = "postgresql://team@db.lab:5433/memory"
    assert location({"LIGHTSCIENTIST_MEMORY": f" {url} "}) == url
    assert location({"LIGHTSCIENTIST_MEMORY": "~/notes/memory.db"}) == str(
        tmp_path / "notes" / "memory.db"
    )
    data = tmp_path / "data"
    assert location({"XDG_DATA_HOME": str(data)}) == str(data / "lightscientist/memory.sqlite3")
    assert location({"LIGHTSCIENTIST_MEMORY": ""}) == str(
        tmp_path / ".local/share/lightscientist/memory.sqlite3"
    )


def test_the_default_store_is_a_private_sqlite_file_made_on_first_use(own_memory):
    assert not own_memory.exists()
    with open_store() as store:
        assert isinstance(store, SqliteMemory) and store.where == str(own_memory)
        assert store.add(lesson("Warmup helped.", "k1")) is not None
    assert own_memory.stat().st_mode & 0o777 == 0o600


def test_a_search_whose_filters_leave_out_the_best_matches_still_finds_the_rest(store):
    """SQLite ranks the index's best matches before its filters (`sqlite.POOL`); when the
    filters leave out all of them, the search ranks every match: the project's own hundred
    best matches hide nothing of another's."""
    for n in range(100):
        store.add(lesson(f"Warmup warmup warmup schedule {n}.", f"own#{n}", project=A))
    store.add(lesson("A long note on many things, warmup among them.", "other#1", project=B))
    found = store.search("warmup schedule", 3, exclude_project=A)
    assert texts(found) == ["A long note on many things, warmup among them."]
    assert len(store.search("warmup schedule", 3)) == 3
