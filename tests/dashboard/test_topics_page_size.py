"""The dashboard's topic list comes in pages of `dashboard.topicsPage` topics (20 unless set)."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_files import write_session

from causantic.config import Config
from causantic.dashboard import pages
from causantic.errors import CausanticError
from causantic.facade import Memory

SUBJECTS = [
    ("postgres autovacuum", "table bloat"),
    ("kubernetes pod", "eviction"),
    ("webpack bundle", "code splitting"),
    ("rust borrow checker", "lifetimes"),
    ("css grid", "column layout"),
    ("git rebase", "merge conflicts"),
]


@pytest.fixture(scope="module")
def topics_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("topics-page")
    for n, (thing, trouble) in enumerate(SUBJECTS):
        turns = [
            (f"Why does the {thing} show {trouble} again ({k})?", f"The {thing} {trouble} is fixed ({k}).")
            for k in range(5)
        ]
        write_session(root / "projects", f"/work/p{n}", f"dddddddd-0000-4000-8000-{n:012d}", turns)
    with Memory(root / "home", overrides={"clustering.minClusterSize": 3}) as memory:
        assert memory.ingest([root / "projects"]).errors == []
        assert memory.recluster().clusters >= 4
    return root / "home"


def test_the_topic_list_shows_as_many_topics_a_page_as_dashboard_topics_page_says(topics_home: Path) -> None:
    assert Config().dashboard.topics_page == 20  # the documented default
    with Memory(topics_home) as memory:
        everything = pages.topics(memory, pages.Derived())
        total = len(everything["topics"])
        assert everything["pages"] == 1 and len(everything["listed"]) == total  # fewer than 20: one page
    with Memory(topics_home, overrides={"dashboard.topicsPage": 2}) as memory:
        first, second = (pages.topics(memory, pages.Derived(), n) for n in ("1", "2"))
        assert (len(first["listed"]), first["pages"]) == (2, -(-total // 2))
        assert (second["first"], second["last"]) == (3, 4)
        assert first["listed"] + second["listed"] == everything["topics"][:4]  # largest first, page by page
        with pytest.raises(CausanticError, match=r"pages of 2\.$"):
            pages.topics(memory, pages.Derived(), str(first["pages"] + 1))
