"""Projects put right by hand: merged when clones of one repository were recorded apart (before clones
were joined), split when two projects from one template kept its ``origin`` and were joined.

Each move previews first and moves only the sessions it previewed; real stores on both backends
(PostgreSQL via ``tests/postgres_server.py``), transcripts as Claude Code writes them, checkouts as
`git clone` leaves their ``.git/config``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from transcript_files import git_checkout, write_session

from causantic import Memory
from causantic.cli.main import cli
from causantic.config import Config
from causantic.errors import CausanticError
from causantic.ingest.service import ingest_paths
from causantic.retrieval.regroup import merge_preview, move_summary
from causantic.services import open_services

TEMPLATE = "git@github.com:acme/starter-template.git"


def _session(tmp_path: Path, cwd: Path, n: int, prompt: str) -> Path:
    return write_session(tmp_path / f"t{n}", str(cwd), f"0000000{n}-0000-4000-8000-00000000000{n}", [(prompt, "ok")])


def _ingest(memory: Memory, path: Path, *, embed: bool = False) -> None:
    assert memory.ingest([path], embed=embed).errors == []


def _projects(memory: Memory) -> list[tuple[str, int]]:
    return sorted((p.name, p.sessions) for p in memory.projects())


def test_clones_recorded_apart_merge_as_previewed_and_stay_merged(backend_config: Config, tmp_path: Path) -> None:
    """A release before clones were joined made one project per clone's path; the project a clone
    joins by its cwd stays its own, so the two stayed apart however often they were ingested."""
    alices = git_checkout(tmp_path / "alice" / "api", "git@github.com:acme/api.git")
    bobs = git_checkout(tmp_path / "bob" / "api-service", "https://github.com/acme/api.git")
    with open_services(backend_config) as services:
        for clone in (alices, bobs):  # as the older release made them: by path, no repository
            services.store.resolve_project(str(clone), str(clone))
        for n, clone, said in ((1, alices, "the upload retry backoff"), (2, bobs, "the upload retry is flaky")):
            report = ingest_paths(services, [_session(tmp_path, clone, n, said)], embed=False)
            assert report.errors == []
    with Memory(config=backend_config) as memory:
        assert _projects(memory) == [("api", 1), ("api-service", 1)]
        preview = memory.merge_projects("api-service", "api")
        assert move_summary(preview) == (
            f"1 session (1 chunk) of 'api-service' ({bobs}) would move into 'api' ({alices}); "
            "'api-service' is then gone."
        )
        assert _projects(memory) == [("api", 1), ("api-service", 1)]  # a preview moves nothing
        _ingest(memory, _session(tmp_path, bobs, 3, "the upload retry again"))  # after the preview
        with pytest.raises(CausanticError, match=r"2 sessions \(2 chunks\) of 'api-service' match now, not the 1"):
            memory.move_previewed(preview)
        assert _projects(memory) == [("api", 1), ("api-service", 2)]  # nothing moved
        done = memory.move_previewed(memory.merge_projects("api-service", "api"))
        assert not done.dry_run and _projects(memory) == [("api", 3)]
        _ingest(memory, _session(tmp_path, bobs, 4, "the upload retry once more"))  # bob's folder joins api now
        assert _projects(memory) == [("api", 4)]
        found = memory.search("upload retry", project="api-service", mode="keyword")
        assert len({h.chunk.session_id for h in found.hits}) == 4


def test_two_projects_from_one_template_split_by_folder(backend_config: Config, tmp_path: Path) -> None:
    """Both kept the template's origin, so the second was joined to the first as a clone of it:
    the blog's sessions were listed, searched and forgotten as the shop's."""
    shop = git_checkout(tmp_path / "code" / "shop", TEMPLATE)
    blog = git_checkout(tmp_path / "code" / "blog", TEMPLATE)
    (blog / "src").mkdir()
    with Memory(config=backend_config) as memory:
        for n, cwd, said in ((1, shop, "the cart total"), (2, blog, "the rss feed"), (3, blog / "src", "rss dates")):
            _ingest(memory, _session(tmp_path, cwd, n, said), embed=True)
        assert _projects(memory) == [("shop", 3)]  # joined as clones of one repository
        preview = memory.split_project(str(blog))
        assert move_summary(preview) == (
            f"2 sessions (2 chunks) recorded in {blog} would move out of 'shop' into a project of their own, "
            "'blog'; sessions recorded there later join it."
        )
        memory.move_previewed(preview)
        assert _projects(memory) == [("blog", 2), ("shop", 1)]
        # The moved chunks kept their vectors: found by meaning within their new project.
        assert len(memory.search("syndication feed of posts", project="blog", mode="vector").hits) == 2
        _ingest(memory, _session(tmp_path, blog, 4, "the rss feed again"))
        _ingest(memory, _session(tmp_path, shop, 5, "the cart total again"))
        # Another clone of the template kept in a folder named blog (another member's) joins blog.
        bobs = git_checkout(tmp_path / "bob" / "blog", TEMPLATE)
        _ingest(memory, _session(tmp_path, bobs, 6, "bob's rss feed"))
        assert _projects(memory) == [("blog", 4), ("shop", 2)]
        found = memory.search("rss", project="blog", mode="keyword")
        assert {h.chunk.project for h in found.hits} == {"blog"} and len(found.hits) == 4


def test_split_project_previews_until_told_yes(tmp_path: Path) -> None:
    shop = git_checkout(tmp_path / "code" / "shop", TEMPLATE)
    blog = git_checkout(tmp_path / "code" / "blog", TEMPLATE)
    with Memory() as memory:
        _ingest(memory, _session(tmp_path, shop, 1, "the cart total"))
        _ingest(memory, _session(tmp_path, blog, 2, "the rss feed"))
    runner = CliRunner()
    shown = runner.invoke(cli, ["split-project", str(blog)])
    assert shown.exit_code == 0, shown.output
    assert " ".join(shown.output.split()).startswith(
        f"1 session (1 chunk) recorded in {blog} would move out of 'shop' into a project of its own, 'blog'; "
        "sessions recorded there later join it."
    )
    assert "00000002  1 chunk  the rss feed" in shown.output
    assert shown.output.splitlines()[-1] == "Nothing was moved. Add --yes to move."
    done = json.loads(runner.invoke(cli, ["split-project", str(blog), "--yes", "--json"]).output)
    assert (done["dry_run"], done["into_project"], done["session_ids"]) == (
        False,
        "blog",
        ["00000002-0000-4000-8000-000000000002"],
    )
    listed = json.loads(runner.invoke(cli, ["list-projects", "--json"]).output)["projects"]
    assert sorted((p["name"], p["session_count"]) for p in listed) == [("blog", 1), ("shop", 1)]
    again = runner.invoke(cli, ["split-project", str(shop)])
    assert again.exit_code != 0 and f"{shop} is where 'shop' itself lives" in again.output


def test_a_moves_preview_lists_its_sessions_in_aligned_columns(tmp_path: Path) -> None:
    """Each line was written as it came, so '1 chunk' and '12 chunks' pushed the titles apart, and a
    session id shorter than 8 characters (other agents' fixtures, tests) pulled its line left."""
    old, new = tmp_path / "old-api", tmp_path / "api"
    turns = [(f"the upload retry step {t}", "ok") for t in range(12)]
    write_session(tmp_path / "t1", str(old), "00000001-0000-4000-8000-000000000001", [("the cart total", "ok")])
    write_session(tmp_path / "t2", str(old), "s2", turns, day=2)
    write_session(tmp_path / "t3", str(new), "00000003-0000-4000-8000-000000000003", [("the rss feed", "ok")])
    with Memory() as memory:
        _ingest(memory, tmp_path)
    shown = CliRunner().invoke(cli, ["merge-projects", "old-api", "api"], env={"COLUMNS": "100"})
    assert shown.exit_code == 0, shown.output
    (long,) = [line for line in shown.output.splitlines() if "12 chunks" in line]
    (short,) = [line for line in shown.output.splitlines() if " 1 chunk " in line]
    assert long.index("the upload retry") == short.index("the cart total")


def test_a_merge_preview_counts_what_it_may_not_move_without_reading_the_project_s_chunks(
    backend_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The preview read every chunk of the project leaving (text and all) to count the other members'
    chunks among them: seconds on a large project, for a count the store gives at once."""
    old = git_checkout(tmp_path / "old-api", "git@github.com:acme/old-api.git")
    new = git_checkout(tmp_path / "api", "git@github.com:acme/api.git")
    with Memory(config=backend_config) as memory:
        for n, cwd in ((1, old), (2, old), (3, new)):
            _ingest(memory, _session(tmp_path, cwd, n, f"the upload retry, take {n}"))
    with open_services(backend_config) as services:

        def read_whole(*_: object, **__: object) -> None:
            raise AssertionError("a preview read the project's chunks")

        monkeypatch.setattr(services.store, "chunks_in", read_whole)
        preview = merge_preview(services.store, "old-api", "api", None)
    assert (len(preview.session_ids), preview.chunks, preview.others) == (2, 2, ())
