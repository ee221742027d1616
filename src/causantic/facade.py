"""``Memory``: the one door to ingest, search, the episodic answers and the store's upkeep.

    from causantic import Memory

    with Memory("/tmp/my-memory") as memory:
        memory.ingest(["~/.claude/projects"])
        answer = memory.recall("how did we fix the login redirect loop")
        for episode in answer.episodes:
            ...

A ``Memory`` owns one store (SQLite, vectors) in a data directory (``home``; default from
:func:`causantic.config.causantic_home`) and the configuration it was opened with: the defaults and
files as :func:`causantic.config.load_config` reads them (the user file being that home's
``config.json``), then ``overrides`` (dotted keys, as in ``causantic config``). With team memory
(``storage.backend`` postgres) it owns two: the team's PostgreSQL and the local store beside it
(``team.shareProjects`` says which projects go where); its methods hide which store answers, and
fuse the two where both may. An ``embedder`` may be passed in to share one loaded model between
several memories. The CLI, the MCP server, the hooks, the dashboard and the benchmarks all call
these methods, so a rule (a query check, a refusal, a default) holds the same everywhere.

Results are frozen: the retrieval dataclasses (a search's hits, an answer's episodes, a
reconstruction) for programs and text renderings, and for everything else the pydantic models of
:mod:`causantic.retrieval.output`, which are also the one JSON shape of ``--json`` and MCP.
Heavy parts (the embedding runtime, the ingest pipeline, clustering) load inside the methods that
need them, so importing this module stays cheap for ``causantic --help`` and the hooks.
"""

from __future__ import annotations

import functools
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from causantic import __version__
from causantic.errors import CausanticError, InvalidQuery, ProjectNotFound, StoreError, checked_query
from causantic.files import absolute
from causantic.home import causantic_home, is_team_memory
from causantic.retrieval.options import FORGET_THRESHOLD, SESSIONS_LISTED, TIMELINE_SESSIONS
from causantic.services import ProjectShare as ProjectShare  # what `team join` says, for the CLI
from causantic.services import Services, TeamAndLocal, TeamDown, member_name, open_store, team_members
from causantic.services import TeamJoin as TeamJoin
from causantic.services import team_init as team_init  # team memory's set-up and status, for the CLI
from causantic.services import team_join as team_join
from causantic.services import team_leave as team_leave
from causantic.services import team_status as team_status

if TYPE_CHECKING:
    from causantic.config import Config, Source
    from causantic.embedding import Embedder
    from causantic.ingest.pipeline import ProgressCallback
    from causantic.ingest.topics import ClusterReport
    from causantic.retrieval.browse import Overview, SessionView, Timeline, TopicSize
    from causantic.retrieval.episodes import EpisodeAnswer
    from causantic.retrieval.forget import ForgetResult, PruneResult
    from causantic.retrieval.format import Reread
    from causantic.retrieval.listing import HeldTwice, ProjectSummary, SessionList, TopicCoverage, TopicSummary
    from causantic.retrieval.output import EmbedOut, IngestOut, IngestRunningOut, StatsOut, VacuumOut
    from causantic.retrieval.reconstruct import Reconstruction
    from causantic.retrieval.regroup import ProjectMove
    from causantic.retrieval.search import SearchRequest, SearchResult
    from causantic.retrieval.topic_map import TopicMap
    from causantic.store.records import DiskShortfall, VectorHealth
    from causantic.store.records import StoredChunk as StoredChunk  # a result type of topic_members

Progress = Callable[[int, int], None]  # (done, total)
Answer = TypeVar("Answer")
Topic = TypeVar("Topic", "TopicSummary", "TopicSize")  # a topic listed with its store beside team memory
TOPIC_MAP_CACHE = "cache/topic-map.json"


class Memory:
    def __init__(
        self,
        home: str | Path | None = None,
        *,
        config: Config | None = None,
        overrides: dict[str, Any] | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        paths: dict[str, Any] = {}
        self.home = causantic_home() if home is None else Path(home).expanduser()
        if config is None:
            from causantic.config import load_config

            config = load_config(home=self.home)  # that home's config.json, not $CAUSANTIC_HOME's
        if home is not None:
            # The store the CLI opens for this home: its paths where the configuration names none (db_path()
            # defaults to $CAUSANTIC_HOME, which may be another home); a path it names wins, as in the CLI.
            defaults = {"storage.dbPath": self.home / "memory.db", "storage.vectorPath": self.home / "vectors"}
            named = {"storage.dbPath": config.storage.db_path, "storage.vectorPath": config.storage.vector_path}
            paths = {key: str(path) for key, path in defaults.items() if not named[key]}
        if paths or overrides:
            config = config.with_overrides({**paths, **(overrides or {})})
        self.config = config
        # Team memory (storage.backend postgres) keeps unshared projects in the local store beside it;
        # search, recall, predict, reconstruct and ingest use both (the rest reads the main one).
        self._team: TeamAndLocal | None = None
        self._single: Services | None = None
        if is_team_memory(config.storage):
            self._team = TeamAndLocal(config, self.home, embedder)
        else:
            self._single = Services(config, open_store(config), home=self.home, _embedder=embedder)

    @property
    def _services(self) -> Services:
        """The store single-store answers read: the one, or team memory (the local store while it is down)."""
        if self._team is not None:
            return self._team.main
        assert self._single is not None
        return self._single

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._team is not None:
            self._team.close()
        elif self._single is not None:
            self._single.close()

    def warm_up(self) -> None:
        """Open the vector index and load the embedding model now, so the first search does not wait
        (nothing loads while no vector is stored)."""
        if self._services.vectors.count() > 0:
            self._services.embedder.embed_query("warm up")

    @contextmanager
    def tidied_while_open(self) -> Iterator[None]:
        """For a process that keeps memory open between requests (the MCP server, the dashboard): a
        background thread empties the local file's write-ahead log every ``storage.idleCheckpointSeconds``
        once no process is writing to it (the store's ``tidy``), so a log that a reader kept through an
        ingest does not stay on disk until the next ingest. Searches run beside it, on their own
        connections."""
        every = self.config.storage.idle_checkpoint_seconds
        local = self._team.local if self._team is not None else self._single
        if not every or local is None:
            yield
            return
        stop = threading.Event()

        def tidy() -> None:
            while not stop.wait(every):
                with suppress(CausanticError):  # a broken store is the next request's to report
                    local.store.tidy()

        worker = threading.Thread(target=tidy, name="causantic-tidy", daemon=True)
        worker.start()
        try:
            yield
        finally:
            stop.set()
            worker.join()

    # ---- writing ---------------------------------------------------------------------------

    def ingest(
        self,
        paths: Sequence[str | Path],
        *,
        force: bool = False,
        embed: bool = True,
        workers: int = 1,
        on_progress: ProgressCallback | None = None,
        on_discovered: Progress | None = None,
        on_embed_progress: Progress | None = None,
        as_examples: bool = False,
    ) -> IngestOut:
        """Ingest transcript files and folders (idempotent: unchanged files are skipped); what it did.

        ``as_examples``: the bundled example sessions, kept apart from real memory (see
        :func:`causantic.ingest.service.ingest_paths`)."""
        from causantic.ingest.service import ingest_paths, ingest_routed, shared_projects
        from causantic.retrieval.output import ingest_out

        options: dict[str, Any] = {
            "force": force,
            "embed": embed,
            "workers": workers,
            "on_progress": on_progress,
            "on_discovered": on_discovered,
            "on_embed_progress": on_embed_progress,
            "as_examples": as_examples,
        }
        targets = [Path(p).expanduser() for p in paths]
        if self._team is None:
            return ingest_out(ingest_paths(self._services, targets, **options))
        if as_examples:  # the bundled examples are nobody's work: never shared with a team
            return ingest_out(ingest_paths(self._team.local_store(), targets, **options))
        team, share = self._team, self.config.team
        team.reconnect()
        up = team.team
        report = ingest_routed(
            team.main if up is None else (team.local if share.share_projects != "all" else None),
            up if share.share_projects else None,
            shared_projects(share, up.store if up is not None else None),
            targets,
            team.team_down.message if share.share_projects and team.team_down else None,
            **options,
        )
        return ingest_out(report)

    def holds_real_sessions(self) -> bool:
        """Whether memory holds sessions besides the bundled examples."""
        from causantic.ingest.service import holds_real_sessions

        return holds_real_sessions(self._services.store)

    def embed_pending(self, on_progress: Progress | None = None) -> EmbedOut:
        """Embed every chunk that has no vector yet (resumable at any point)."""
        from causantic.ingest.service import embed_pending

        added = sum(embed_pending(s, on_progress=on_progress) for s in self._every_store().values())
        return self._embedded(added)

    def reindex(self, on_progress: Progress | None = None) -> EmbedOut:
        """Re-embed every chunk with the configured model, from scratch."""
        from causantic.ingest.service import reindex

        added = reindex(self._services, on_progress=on_progress)
        return self._embedded(added)

    def _embedded(self, added: int) -> EmbedOut:
        from causantic.retrieval.output import EmbedOut

        vectors = self._services.vectors
        count = sum(s.vectors.count() for s in self._every_store().values())
        return EmbedOut(model=vectors.model_id, vectors_added=added, vector_count=count)

    def recluster(self, on_progress: Callable[[str], None] | None = None) -> ClusterReport:
        """Group every embedded chunk into topics (a full HDBSCAN run; continuing topics keep their ids)."""
        from causantic.ingest.topics import recluster

        s = self._services
        report = recluster(s.store, s.vectors, s.config.clustering, on_progress=on_progress)
        s.store.release_space()  # the old topics' memberships were replaced
        return report

    def forget(
        self,
        project: str,
        *,
        before: datetime | None = None,
        after: datetime | None = None,
        session_id: str | None = None,
        query: str | None = None,
        threshold: float = FORGET_THRESHOLD,
        whole_project: bool = False,
        dry_run: bool = True,
        expected: int | None = None,
        only_ids: frozenset[str] | None = None,
        only_mine: bool = False,
        preview_size: int = 5,
    ) -> ForgetResult:
        """Preview (the default) or delete chosen chunks of one project, or the whole project.

        No filter means the whole project. A real run given ``expected`` (the previewed count)
        deletes nothing when the matches have changed since; given ``only_ids`` (what a preview
        listed) it deletes only those; :meth:`forget_previewed` deletes exactly what a preview
        matched. ``only_mine`` keeps to this member's chunks in team memory (refused for a project in
        local memory, where every chunk is theirs). A ``query`` compares meanings, so it is refused
        while no vectors are stored (it would match nothing and look like success)."""
        from causantic.retrieval.forget import ForgetRequest, forget

        if query is not None:
            query = checked_query(query)
        request = ForgetRequest(
            project,
            _utc(before),
            _utc(after),
            session_id,
            query,
            threshold,
            dry_run,
            whole_project=whole_project,
            expected=expected,
            only_ids=only_ids,
            only_mine=only_mine,
        )

        def run(s: Services) -> ForgetResult:
            # Members exist in team memory only (the local store beside it runs as SQLite).
            team = is_team_memory(s.config.storage)
            asked = replace(request, member=member_name(self.config) if team else None)
            if query and s.vectors.count() == 0:
                raise CausanticError(
                    "Forgetting by query compares meanings, and no vectors are stored yet (run `causantic embed`); "
                    "use before, after or session instead."
                )
            return forget(s.store, s.vectors, s.embedder.embed_query if query else None, asked, preview_size)

        # Never the local store because team memory failed: a deletion goes only where its preview looked.
        return self._where_project_lives(run, when_down=False)

    def prune(self, before: datetime, *, dry_run: bool = True) -> PruneResult:
        """Preview (the default) or delete every chunk of every project older than ``before``: the
        retention a user runs now and then. Local memory only: in team memory each project is
        forgotten on its own (:meth:`forget`), by whoever may."""
        from causantic.retrieval.forget import delete_pruned, prune

        s = self._services
        if is_team_memory(s.config.storage):
            raise CausanticError(
                "Pruning every project at once is for local memory; in team memory forget one project at a time "
                "(causantic forget PROJECT --before DATE), since other members' chunks are theirs."
            )
        preview = prune(s.store, _utc(before) or before)
        return preview if dry_run or not preview.count else delete_pruned(s.store, s.vectors, preview)

    def prune_previewed(self, preview: PruneResult) -> PruneResult:
        """Delete exactly the chunks a :meth:`prune` preview matched (any ingested since stay)."""
        from causantic.retrieval.forget import delete_pruned

        s = self._services
        return delete_pruned(s.store, s.vectors, preview)

    def vacuum(self) -> VacuumOut:
        """Rebuild the local SQLite file without the free space deleted memory left in it, and turn on
        incremental auto-vacuum, so later forgets give their space back by themselves. Team memory's
        PostgreSQL looks after its own (autovacuum) and is left alone."""
        from causantic.retrieval.output import VacuumOut

        stores = self._every_store().values()
        for services in stores:
            if shortfalls := services.store.vacuum_shortfalls():
                raise StoreError(_no_room_to_vacuum(shortfalls))
        before, after = [], []
        for services in stores:
            then, now = services.store.vacuum()
            before.append(then)
            after.append(now)
        return VacuumOut(
            bytes_before=sum(s.total for s in before),
            bytes_after=sum(s.total for s in after),
            free_before=sum(s.free_bytes for s in before),
            reclaims=all(s.reclaims for s in after),
            reclaimed_before=all(s.reclaims for s in before),
        )

    def forget_previewed(self, preview: ForgetResult) -> ForgetResult:
        """Delete exactly the chunks a :meth:`forget` preview matched (any ingested since stay)."""
        from causantic.retrieval.forget import delete_previewed

        local = self._local_beside_team()
        previewed_local = bool(preview.preview) and all(chunk.user is None for chunk, _ in preview.preview)
        s = local if local is not None and previewed_local else self._services
        return delete_previewed(s.store, s.vectors, preview)

    def merge_projects(self, source: str, into: str, *, dry_run: bool = True) -> ProjectMove:
        """Preview (the default) or move every session and folder of the project ``source`` into
        ``into``, which ``source`` is then gone into: clones of one repository recorded apart before
        clones were joined (:mod:`causantic.retrieval.regroup`)."""
        from causantic.retrieval.regroup import merge_preview

        return self._move(lambda s, member: merge_preview(s.store, source, into, member), dry_run)

    def split_project(self, folder: str, *, project: str | None = None, dry_run: bool = True) -> ProjectMove:
        """Preview (the default) or move the sessions recorded in ``folder`` (or below it) out of
        their project into one of their own, which later sessions there join: two projects from one
        template that kept its ``origin`` were joined as clones of one repository."""
        from causantic.retrieval.regroup import split_preview

        where = str(absolute(folder))
        return self._move(lambda s, member: split_preview(s.store, where, project, member), dry_run)

    def move_previewed(self, preview: ProjectMove) -> ProjectMove:
        """Move exactly the sessions a :meth:`merge_projects` or :meth:`split_project` preview listed;
        nothing when they changed since."""
        from causantic.retrieval.regroup import apply_move

        return self._where_project_lives(lambda s: apply_move(s.store, preview, self._member_of(s)), when_down=False)

    def _move(self, preview_of: Callable[[Services, str | None], ProjectMove], dry_run: bool) -> ProjectMove:
        """A merge's or split's preview (``preview_of``, given the store's services and this member),
        moved unless ``dry_run`` or it names no session."""
        from causantic.retrieval.regroup import apply_move

        def run(s: Services) -> ProjectMove:
            member = self._member_of(s)
            preview = preview_of(s, member)
            if dry_run or not preview.session_ids:
                return preview
            return apply_move(s.store, preview, member, as_previewed=False)  # no one saw it: what is there now

        return self._where_project_lives(run, when_down=False)

    def _member_of(self, s: Services) -> str | None:
        """This machine's member in team memory; None in local memory, where every chunk is theirs."""
        return member_name(self.config) if is_team_memory(s.config.storage) else None

    # ---- answers ---------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        project: str | None = None,
        agent: str | None = None,
        source: Source | None = None,
        user: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        days_back: float | None = None,
        limit: int | None = None,
        max_tokens: int | None = None,
        mode: Literal["hybrid", "keyword", "vector"] | None = None,
        here: str | None = None,
    ) -> SearchResult:
        """The best-matching chunks, most relevant first. ``source`` keeps one coding agent's
        sessions (claude-code, codex or gemini), ``user`` one team member's (team memory); times
        without a zone are UTC. ``here``, the asker's working directory, ranks its project's
        matches higher (``retrieval.hereBoost``) without keeping to it as ``project`` does."""
        from causantic.retrieval.format import is_weak
        from causantic.retrieval.search import SearchRequest

        since, until = _window(since, until, days_back)
        request = SearchRequest(
            checked_query(query),
            project=project,
            agent=agent,
            source=source,
            user=user,
            since=since,
            until=until,
            limit=limit,
            max_tokens=max_tokens,
            mode=mode,
            here=here,
        )
        result = self._from_both(lambda s, r: s.searcher.search(r), request, self._fuse_search)
        if project is not None and all(is_weak(r) for r in result.shown_relevance):
            wider = {"agent": agent, "source": source, "user": user, "since": since, "until": until, "mode": mode}
            result = replace(result, notes=[*result.notes, *self._elsewhere(query, project, **wider)])
        if user is not None and self._team is None and user != (me := member_name(self.config)):
            # not "no matching chunks": no local chunk can be another member's
            note = (
                "the user filter picks a member's chunks in team memory, and no team memory is configured: "
                f"this memory is local and every chunk in it is {me}'s, none {user}'s"
            )
            result = replace(result, notes=[note])
        elif user is not None and not result.hits and self._team is not None and self._team.team is not None:
            # A misspelt member finds nothing; "no matching chunks" would read as "they never did this".
            known = self.team_members()
            if self._team.team is not None and user not in known:  # still answering: the list is whole
                note = f"no member named {user!r} has anything in team memory (members: {', '.join(known) or 'none'})"
                result = replace(result, notes=[*result.notes, note])
        return result

    def recall(
        self,
        query: str,
        *,
        project: str | None = None,
        agent: str | None = None,
        max_tokens: int | None = None,
        mode: Literal["episodes", "chain"] | None = None,
        here: str | None = None,
    ) -> EpisodeAnswer:
        """The story behind something: the turns that led to the best matches, as episodes each told
        in time order, the best match's session first (``episodes.order``); ``here`` as for
        :meth:`search`, and its project's relevant episode leads."""
        from causantic.retrieval.search import SearchRequest

        request = SearchRequest(checked_query(query), project=project, agent=agent, max_tokens=max_tokens, here=here)
        answer = self._from_both(lambda s, r: s.episodes.recall(r, mode), request, self._fuse_episodes)
        return self._episodes_elsewhere(answer, query, project, agent)

    def predict(
        self,
        context: str,
        *,
        project: str | None = None,
        agent: str | None = None,
        max_tokens: int | None = None,
        mode: Literal["episodes", "chain"] | None = None,
        here: str | None = None,
    ) -> EpisodeAnswer:
        """What came next after work like this: episodes as :meth:`recall` tells them."""
        from causantic.retrieval.search import SearchRequest

        request = SearchRequest(
            checked_query(context, "context"), project=project, agent=agent, max_tokens=max_tokens, here=here
        )
        answer = self._from_both(lambda s, r: s.episodes.predict(r, mode), request, self._fuse_episodes)
        return self._episodes_elsewhere(answer, context, project, agent)

    def _episodes_elsewhere(
        self, answer: EpisodeAnswer, query: str, project: str | None, agent: str | None
    ) -> EpisodeAnswer:
        """``answer`` with :meth:`_elsewhere`'s note when it keeps to a project and tells nothing relevant,
        its episodes then cut to ``episodes.elsewhereTokens`` (:func:`~causantic.retrieval.episodes.shortened`)."""
        from causantic.retrieval.episodes import shortened
        from causantic.retrieval.format import is_weak

        if project is None or not all(is_weak(e.relevance) for e in answer.episodes):
            return answer
        note = self._elsewhere(query, project, agent=agent)
        if note:  # the relevant answer is elsewhere: the weak episodes here are not worth their tokens
            answer = shortened(answer, self.config.episodes.elsewhere_tokens)
        return replace(answer, notes=(*answer.notes, *note))

    def _elsewhere(self, query: str, project: str, **filters: Any) -> list[str]:
        """Asked of one project, which holds nothing relevant: the other projects that do, each with
        its best match's relevance (:func:`~causantic.retrieval.format.elsewhere_note`). Asked with
        the working directory as project about another project's fix, recall told three weakly
        related episodes of its own and never said that another project held the fix at 65%. The
        other projects are searched with the answer's other ``filters``."""
        from causantic.retrieval.format import elsewhere_note
        from causantic.retrieval.listing import resolve_project

        asked = self._where_project_lives(lambda s: resolve_project(s.store, project)).name
        wider = self.search(query, **filters)
        note = elsewhere_note(asked, [h.chunk.project for h in wider.hits], wider.shown_relevance)
        return [note] if note else []

    def reconstruct(
        self,
        project: str,
        *,
        session_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        days_back: float | None = None,
        previous_session: bool = False,
        current_session_id: str | None = None,
        keep_newest: bool = True,
        agent: str | None = None,
        max_tokens: int | None = None,
        full: bool = False,
        page: int = 1,
        limit: int | None = None,
    ) -> Reconstruction:
        """A project's sessions in time order: one entry each (the timeline), or their text."""
        from causantic.retrieval.reconstruct import ReconstructRequest, reconstruct

        since, until = _window(since, until, days_back)
        request = ReconstructRequest(
            project,
            session_id=session_id,
            since=since,
            until=until,
            previous_session=previous_session,
            current_session_id=current_session_id,
            keep_newest=keep_newest,
            agent=agent,
            max_tokens=max_tokens,
            full=full,
            page=page,
            limit=limit or TIMELINE_SESSIONS,
        )
        budget = self.config.tokens.mcp_max_response
        return self._where_project_lives(lambda s: reconstruct(s.store, request, budget))

    # ---- team memory: two stores, one answer -----------------------------------------------

    def _local_beside_team(self) -> Services | None:
        """The local store beside reachable team memory (None: one store answers everything)."""
        team = self._team
        return team.local if team is not None and team.team is not None else None

    def _every_store(self) -> dict[str, Services]:
        """The stores an account of all memory reads (and embedding fills): team memory and the local store beside it
        ('team', 'local', as search's ``store`` names them), or the one store (named '')."""
        team = self._team
        if team is not None:
            team.reconnect()
        if team is None or team.team is None or team.local is None:
            return {"": self._services}
        return {"team": team.team, "local": team.local}

    def _where_project_lives(self, run: Callable[[Services], Answer], *, when_down: bool = True) -> Answer:
        """``run`` on the store that holds the project it names: team memory for a shared project,
        else the local store (also when team memory stops answering, unless not ``when_down``)."""
        team = self._team
        if team is not None:
            team.reconnect()
        local = self._local_beside_team()
        try:
            return run(self._services)
        except ProjectNotFound as exc:
            if local is not None:
                return run(local)
            if team is not None and team.team is None:
                down = "unreachable" if team.team_down and team.team_down.reason == "unreachable" else "unavailable"
                raise type(exc)(f"{exc} Team memory is {down}, and shared projects live there.") from exc
            raise
        except StoreError as down:
            if team is None or team.team is None or not when_down:
                raise
            team.lost(down)
            try:
                return run(team.main)
            except ProjectNotFound:
                raise down from None

    def _from_both(
        self,
        run: Callable[[Services, SearchRequest], Answer],
        request: SearchRequest,
        fuse: Callable[[dict[str, Answer], SearchRequest, list[str]], Answer],
    ) -> Answer:
        """``run`` on team memory and on the local store beside it, fused; on the one store otherwise.

        Team memory unavailable (unreachable, or its schema behind, at opening or now) answers from
        the local store with a note saying so. A project only one store knows is searched there; a
        ``user`` filter keeps the local store only when it names this machine's member (local chunks
        are all theirs)."""
        team = self._team
        mine = request.user is None or request.user == member_name(self.config)  # local chunks are all theirs
        if team is None:  # local memory only
            return run(self._services, replace(request, user=None) if mine else request)
        team.reconnect()
        answers: dict[str, Answer] = {}
        notes: list[str] = []
        missing: list[ProjectNotFound] = []
        if team.team is not None:
            try:
                answers["team"] = run(team.team, request)
            except ProjectNotFound as exc:
                missing.append(exc)
            except StoreError as exc:
                team.lost(exc)
        if team.team is None:
            why = (team.team_down.message if team.team_down else "").rstrip(".")
            notes.append(f"team memory unavailable: {why}; answering from local memory only")
        local = team.local if team.team is not None else team.main
        # Another member's rows while team memory is down: the local store has none, and says so.
        if local is not None and (mine or not answers):
            try:
                answers["local"] = run(local, replace(request, user=None) if mine else request)
            except ProjectNotFound as exc:
                missing.append(exc)
        if not answers:
            raise missing[0]
        return fuse(answers, request, notes)

    def _fuse_search(self, results: dict[str, SearchResult], request: SearchRequest, notes: list[str]) -> SearchResult:
        from causantic.retrieval.federated import fused_search

        cfg = self.config
        return fused_search(
            results,
            rrf_k=cfg.retrieval.rrf_k,
            limit=request.limit or cfg.retrieval.default_limit,
            max_tokens=request.max_tokens or cfg.tokens.mcp_max_response,
            notes=notes,
            here_boost=cfg.retrieval.here_boost,
        )

    def _fuse_episodes(
        self, answers: dict[str, EpisodeAnswer], request: SearchRequest, notes: list[str]
    ) -> EpisodeAnswer:
        from causantic.retrieval.federated import fused_episodes

        cfg = self.config
        return fused_episodes(
            answers,
            rrf_k=cfg.retrieval.rrf_k,
            limit=request.limit or cfg.retrieval.default_limit,
            max_episodes=cfg.episodes.max_episodes,
            max_tokens=request.max_tokens or cfg.episodes.max_tokens,  # an answer's budget, as from one store
            notes=notes,
            weak_anchors=cfg.episodes.weak_anchors,
            side_share=cfg.episodes.side_share,
            here_boost=cfg.retrieval.here_boost,
            order=cfg.episodes.order,
        )

    # ---- what memory holds -----------------------------------------------------------------

    @property
    def keyword_search(self) -> bool:
        """Whether this SQLite has FTS5 (without it, search runs on vectors alone)."""
        return self._services.store.fts_enabled

    def team_members(self) -> list[str]:
        """The members with chunks in team memory, by name (none in local memory, or while team memory
        is unreachable: the dashboard offers them as the search's member filter)."""
        team = self._team
        if team is None:
            return []
        team.reconnect()
        if team.team is None:
            return []
        try:
            return team_members(self.config)
        except StoreError as down:
            team.lost(down)
            return []

    @property
    def team_unavailable(self) -> TeamDown | None:
        """Why team memory is not answering (unreachable, refusing this login, its schema behind),
        when it is configured and not (listings then hold local memory alone), else None."""
        team = self._team
        return team.team_down if team is not None and team.team is None else None

    @property
    def team_schema_note(self) -> str | None:
        """What this member goes without while team memory lacks schema changes they can do without
        (it answers all the same), and who runs what to end it; else None."""
        team = self._team
        return team.team.store.schema_note if team is not None and team.team is not None else None

    def projects(self) -> list[ProjectSummary]:
        """Projects holding memory, most recently active first (team memory's and your local ones)."""
        from causantic.retrieval.listing import list_projects, projects_beside

        found = list_projects(self._services.store)
        local = self._local_beside_team()
        return found if local is None else projects_beside(found, list_projects(local.store))

    def sessions(
        self,
        project: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        days_back: float | None = None,
        limit: int = SESSIONS_LISTED,
        agent: str | None = None,
    ) -> SessionList:
        """A project's sessions, newest first (at most ``limit``), and how many matched in all."""
        from causantic.retrieval.listing import SessionList, list_sessions

        since, until = _window(since, until, days_back)
        proj, sessions, total = self._where_project_lives(
            lambda s: list_sessions(s.store, project, since=since, until=until, limit=limit, agent=agent)
        )
        newest = None
        if not total and (since or until):
            newest = next(iter(self._where_project_lives(lambda s: list_sessions(s.store, project, limit=1))[1]), None)
        return SessionList(proj.name, proj.path, tuple(sessions), total, newest)

    def project(self, name: str) -> ProjectSummary:
        """The project a name, path or folder inside it names (:class:`ProjectNotFound` when none or several)."""
        from causantic.errors import ProjectNotFound
        from causantic.retrieval.listing import resolve_project

        found = self._where_project_lives(lambda s: resolve_project(s.store, name))
        summary = next((p for p in self.projects() if p.path == found.path), None)
        if summary is None:  # a project whose chunks were all forgotten
            raise ProjectNotFound(f"Project {found.name!r} holds no memory.")
        return summary

    def topics(self, project: str | None = None) -> list[TopicSummary]:
        """Topics (HDBSCAN clusters) with a label, size and date range; sizes count ``project`` only when given.
        Team memory beside the local store: both stores' topics, largest first, each labelled with its
        ``store`` (each store clusters its own chunks)."""
        from causantic.retrieval.listing import list_topics

        return self._topics_of_every_store(lambda s: list_topics(s.store, s.vectors.model_id, project))

    def topic_coverage(self, project: str | None = None) -> TopicCoverage:
        """How many chunks (of ``project`` when given) there are and how many are in a topic; beside
        team memory, both stores' together, a session both hold (kept locally, then uploaded) counted
        once: team memory's copy, as :meth:`stats` counts it."""
        from causantic.retrieval.listing import TopicCoverage, topic_coverage

        stores = self._every_store()
        twice = list(_sessions_held_twice(stores))
        found: list[TopicCoverage] = []
        missing: list[ProjectNotFound] = []
        for name, s in stores.items():
            elsewhere = twice if name == "local" else []
            try:
                found.append(topic_coverage(s.store, s.vectors.model_id, project, counted_elsewhere=elsewhere))
            except ProjectNotFound as exc:  # a project lives in one of the two stores
                missing.append(exc)
        if not found:
            raise missing[0]
        return TopicCoverage(
            sum(c.chunks for c in found), sum(c.in_topics for c in found), any(c.clustered for c in found)
        )

    # ---- browsing (the dashboard's pages) --------------------------------------------------

    def overview(self) -> Overview:
        """What memory holds and how fresh it is, from counts that stay cheap at any size."""
        from causantic.retrieval.browse import combined_overview, overview
        from causantic.retrieval.listing import without_sessions

        stores = self._every_store()
        found = [overview(s.store, s.vectors) for s in stores.values()]
        if len(found) == 1:
            return found[0]
        combined = combined_overview(*found)
        twice = _held_twice(stores)
        if twice is None:
            return combined
        return replace(
            combined,
            counts=without_sessions(combined.counts, twice),
            vectors=combined.vectors - twice.vectors,
            without_vectors=combined.without_vectors - (twice.chunks - twice.vectors),
        )

    def holds_transcript(self, path: Path) -> bool:
        """Whether memory holds this transcript file as it is now: an ingest marked it at its current
        size and modification time (in any store). False when the file is gone or has changed since."""
        path = absolute(path)  # as ingest names the files it marks
        try:
            st = path.stat()
        except OSError:
            return False
        return any(
            s.store.unchanged_file_rules(str(path), st.st_size, st.st_mtime_ns) is not None
            for s in self._every_store().values()
        )

    def files_to_reread(self) -> Reread:
        """The transcript files the next ingest reads again: ingested under older ingest rules (from
        any folder: those outside the agents' are counted by folder), or with no mark at all though
        their session is in memory (a migration cleared the marks), among the files `batch-ingest`
        reads by default."""
        from causantic.retrieval.format import Reread

        stores = self._every_store()
        marks = {name: s.store.file_rules() for name, s in stores.items()}
        paths = _files_to_reread(marks)
        older = Reread(0)
        if paths:  # the agents' folders come from the configuration module (pydantic): only when needed
            from causantic.config import agent_folder_paths

            older = Reread(len(paths), _outside(paths, agent_folder_paths(self.config)))
        # Marks go with the sessions ingest writes, so only a migration that cleared them all (SQLite's
        # m008) leaves sessions without one: only then are the agents' folders walked, which would
        # otherwise cost every `stats` a discovery of every transcript file (and its imports). Team
        # memory's marks are each member's: a member with none beside the others' sessions is no such case.
        if not any(s.store.file_marks_cleared() for s in stores.values()):
            return older
        from causantic.config import agent_folders
        from causantic.ingest.pipeline import unmarked_files_of_held_sessions

        marked = {path for held in marks.values() for path in held}
        held = [s.store for s in stores.values()]
        unmarked = unmarked_files_of_held_sessions(held, marked, agent_folders(self.config))
        return replace(older, files=older.files + unmarked)

    def ingests_running(self) -> list[IngestRunningOut]:
        """The ingests writing this home's memory now (a batch-ingest, the hooks' worker), oldest first;
        empty when none runs. Read each time: not memory, a file each ingest keeps while it runs."""
        from causantic.ingest_runs import running_ingests
        from causantic.retrieval.output import ingest_running_out

        return [ingest_running_out(run) for run in running_ingests(self.home)]

    def change_stamp(self) -> tuple[int, ...]:
        """Changes whenever memory does (any commit, by any process, in either store): what derived views
        are keyed by."""
        return tuple(n for s in self._every_store().values() for n in s.store.change_stamp())

    def project_names(self) -> list[str]:
        from causantic.retrieval.browse import project_names

        return sorted({name for s in self._every_store().values() for name in project_names(s.store)}, key=str.casefold)

    def timeline(self, project: str, *, offset: int = 0) -> Timeline:
        """A project's sessions, newest first (from ``offset``), with titles and their agent trees."""
        from causantic.retrieval.browse import timeline

        return self._where_project_lives(lambda s: timeline(s.store, project, offset=offset))

    def session_view(self, session_id: str) -> SessionView:
        """One session's text, agent by agent (:class:`SessionNotFound` when memory holds no such session)."""
        from causantic.retrieval.browse import SessionNotFound, session_view

        try:
            return session_view(self._services.store, session_id)
        except SessionNotFound:
            local = self._local_beside_team()  # a session of a project not shared
            if local is None:
                raise
            return session_view(local.store, session_id)

    def topic_sizes(self) -> list[TopicSize]:
        """Every topic with its size, largest first; both stores' (labelled) beside team memory."""
        from causantic.retrieval.browse import topic_sizes

        return self._topics_of_every_store(lambda s: topic_sizes(s.store, s.vectors.model_id))

    def _topics_of_every_store(self, listed: Callable[[Services], list[Topic]]) -> list[Topic]:
        """``listed`` of the one store; beside team memory, of both stores, each topic labelled with
        its ``store``, largest first (each store clusters its own chunks). A project one store does
        not know is listed from the other."""
        stores = self._every_store()
        if len(stores) == 1:
            return listed(self._services)
        found: list[Topic] = []
        missing: list[ProjectNotFound] = []
        for name, services in stores.items():
            try:
                found += [replace(t, store=name) for t in listed(services)]
            except ProjectNotFound as exc:  # a project lives in one of the two stores
                missing.append(exc)
        if len(missing) == len(stores):
            raise missing[0]
        return sorted(found, key=lambda t: -t.size)

    def topic_members(self, topic_id: int, store: str | None = None) -> tuple[TopicSummary, list[StoredChunk]]:
        """A topic and its chunks nearest its centre; ``store`` 'local' reads the local store's beside team memory."""
        from causantic.retrieval.browse import topic_members

        s = self._every_store().get("local", self._services) if store == "local" else self._services
        topic, chunks = topic_members(s.store, s.vectors.model_id, topic_id)
        return (replace(topic, store=store) if store else topic), chunks

    def topic_map(self, topics: Sequence[TopicSize]) -> TopicMap:
        """The 2-D map of the topics, cached in ``<home>/cache`` while the topics stay the same. Beside
        team memory it draws both stores' topics, each point and topic labelled with its ``store``."""
        from causantic.retrieval.topic_map import MapSource, topic_map

        sources = []
        for name, s in self._every_store().items():  # one store: named '', its topics with no store
            drawn = [(t.id, t.label, t.size) for t in topics if t.store == (name or None)]
            sources.append(MapSource(s.store, s.vectors, drawn, name or None))
        return topic_map(sources, self.home / TOPIC_MAP_CACHE)

    def stats(self) -> StatsOut:
        """Counts of what memory holds. A vector index that cannot be read does not hide the
        rest: its figures are null and ``vector_error`` says why (the CLI and MCP alike); unreachable
        team memory leaves the local store's figures, and ``team_unavailable`` says why; a team
        database behind this release that members work without says what they go without
        (``team_schema_note``)."""
        from causantic.retrieval.listing import combined_counts, stats, topics_off, without_sessions
        from causantic.retrieval.output import (
            EdgeCounts,
            StatsOut,
            StoreShare,
            TeamUnavailableOut,
            project_out,
            source_counts,
        )
        from causantic.retrieval.search import MISSING_ANN_FILE

        stores = self._every_store()
        unavailable = self.team_unavailable
        reread = self.files_to_reread()
        each = {name: stats(services.store) for name, services in stores.items()}
        twice = _held_twice(stores)
        combined = without_sessions(functools.reduce(combined_counts, each.values()), twice)
        counts: dict[str, Any] = dict(combined)
        health: dict[str, VectorHealth | None] = {}
        errors: list[str] = []
        vector_bytes: int | None = 0
        vector_file_bytes: int | None = 0
        for name, services in stores.items():
            try:
                health[name] = services.vectors.health(fresh=True)
                if vector_bytes is not None and vector_file_bytes is not None:
                    vector_bytes += services.vectors.size_bytes()
                    vector_file_bytes += services.vectors.file_bytes()
            except (CausanticError, OSError) as exc:
                health[name], vector_bytes, vector_file_bytes = None, None, None
                errors.append(f"{name}: {exc}" if name else str(exc))
        read = [h for h in health.values() if h is not None]
        # The index that needs attention shows: one store's missing ANN file is worth the warning.
        ann = "error" if errors else next((h.ann for h in read if h.ann not in ("ready", "not needed")), read[0].ann)
        shares = {
            name: StoreShare(
                chunk_count=part["chunks"],
                session_count=part["sessions"],
                project_count=part["projects"],
                vector_count=None if found is None else found.vectors,
            )
            for (name, part), found in zip(each.items(), health.values(), strict=True)
        }
        projects = [project_out(p) for p in self.projects()]
        return StatsOut(
            version=__version__,
            chunk_count=counts["chunks"],
            vector_count=None if errors else sum(h.vectors for h in read) - (twice.vectors if twice else 0),
            chunks_without_vectors=None
            if errors
            else sum(h.missing for h in read) - (twice.chunks - twice.vectors if twice else 0),
            vector_index=ann,
            vector_index_note=next((h.ann_note or MISSING_ANN_FILE for h in read if h.ann == "missing"), None),
            vector_error="; ".join(errors) or None,
            edges=EdgeCounts(**counts["edges"]),
            session_count=counts["sessions"],
            project_count=len(projects) if len(stores) > 1 else counts["projects"],  # a project both hold: once
            agent_count=counts["agents"],
            agents=counts["agent_names"],
            topic_count=counts["clusters"],
            topics_off=topics_off(),
            skipped_line_count=counts["skipped_lines"],
            keyword_index=counts["keyword_index"],
            sources={k: source_counts(v) for k, v in counts["sources"].items()},
            members={k: source_counts(v) for k, v in counts.get("members", {}).items()},
            sqlite_bytes=counts["sqlite_bytes"],
            journal_bytes=counts["journal_bytes"],
            free_bytes=counts["free_bytes"],
            vector_bytes=vector_bytes,
            vector_file_bytes=vector_file_bytes,
            projects=projects,
            stores=shares if len(stores) > 1 else {},
            team_unavailable=None if unavailable is None else TeamUnavailableOut(**asdict(unavailable)),
            team_schema_note=self.team_schema_note,
            ingests_running=self.ingests_running(),
            files_under_older_rules=reread.files,
            older_rules_elsewhere=dict(reread.elsewhere),
        )


def _files_to_reread(marks: dict[str, dict[str, int]]) -> list[str]:
    """The files the next ingest reads again because the rules changed since (each store's marks, by
    path): a file one store holds under older rules and the other under today's is left to the
    other (:func:`causantic.ingest.pipeline.ingest`), and a file both hold under older rules (a
    project shared after it was kept locally, then uploaded) is read again once, by the store that
    takes its project: one file, counted once."""
    from causantic.ingest import rules

    older = {path for held in marks.values() for path, version in held.items() if version < rules.VERSION}
    return sorted(path for path in older if not any(held.get(path, -1) >= rules.VERSION for held in marks.values()))


def _outside(paths: Sequence[str], folders: Sequence[Path]) -> tuple[tuple[str, int], ...]:
    """The files of ``paths`` in none of ``folders`` (the agents'), counted by folder, most first: the
    folder they share when it is not the file system's root, else each file's own."""
    roots = [str(absolute(folder)) for folder in folders]
    outside = [p for p in paths if not any(p == r or p.startswith(r.rstrip(os.sep) + os.sep) for r in roots)]
    if not outside:
        return ()
    shared = os.path.dirname(outside[0]) if len(outside) == 1 else os.path.commonpath(outside)
    if shared != os.path.dirname(shared):  # not the root of a file system
        return ((shared, len(outside)),)
    by_folder = Counter(os.path.dirname(p) for p in outside)
    return tuple(sorted(by_folder.items(), key=lambda item: (-item[1], item[0])))


def _held_twice(stores: dict[str, Services]) -> HeldTwice | None:
    """What team memory and the local store both hold: the sessions kept locally, then uploaded, with
    their local chunks, edges and vectors, and the sub-agents both name; None with one store."""
    from causantic.retrieval.listing import HeldTwice

    if set(stores) != {"team", "local"}:
        return None
    team, local = stores["team"], stores["local"]
    held = _sessions_held_twice(stores)
    figures = local.store.session_figures(list(held), local.vectors.model_id)
    agents = set(team.store.sub_agents()) & set(local.store.sub_agents())
    return HeldTwice(held, figures.edges, figures.vectors, len(agents))


def _sessions_held_twice(stores: dict[str, Services]) -> dict[str, tuple[str, int]]:
    """The sessions the local store holds that team memory holds too (kept locally, then uploaded),
    each with its source and local chunk count; none with one store."""
    if set(stores) != {"team", "local"}:
        return {}
    held = stores["local"].store.session_sizes()
    return {s: held[s] for s in stores["team"].store.session_sizes(list(held))} if held else {}


def _utc(value: datetime | None) -> datetime | None:
    """Times without a zone are UTC (click.DateTime and ISO dates without an offset give those)."""
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


def _window(
    since: datetime | None, until: datetime | None, days_back: float | None
) -> tuple[datetime | None, datetime | None]:
    since, until = _utc(since), _utc(until)
    if days_back is not None:
        if since is not None:
            raise InvalidQuery("Give either days back or a start time, not both.")
        since = datetime.now(UTC) - timedelta(days=days_back)
    if since is not None and until is not None and until <= since:
        raise InvalidQuery(f"The end ({until.isoformat()}) must be later than the start ({since.isoformat()}).")
    return since, until


def _no_room_to_vacuum(shortfalls: Sequence[DiskShortfall]) -> str:
    """What rebuilding the file would write where, against the free space there, and what to do."""
    from causantic.retrieval.format import byte_size

    disks = []
    for disk in shortfalls:
        writes = " and ".join(f"{what} ({byte_size(size)}) in {folder}" for what, folder, size in disk.writes)
        total = f", {byte_size(disk.needed)} on one disk," if len(disk.writes) > 1 else ""
        disks.append(f"{writes}{total} where {byte_size(disk.free)} is free")
    database = shortfalls[0].database
    return (
        f"Not enough free disk space to vacuum {database}: it needs {'; and '.join(disks)}. Free some space, "
        f"or set SQLITE_TMPDIR to a folder on a disk with room for the temporary copy. {database.name} is unchanged."
    )
