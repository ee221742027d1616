"""What each page shows, gathered from the :class:`~causantic.facade.Memory` the CLI and MCP server use.

Each function takes the opened memory and the page's parsed inputs
and returns the template's context. Errors a person can act on (an unknown project, a bad date)
are raised as :class:`~causantic.errors.CausanticError` and shown on the page by the app.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from markupsafe import Markup, escape

from causantic import write_waits
from causantic.config import db_path, described_settings, load_config, vector_path
from causantic.dashboard.map_labels import VIEWBOX, MapLabel, layouts, short_label
from causantic.dashboard.story import story_of
from causantic.dashboard.text import names_linked, project_href, short_time
from causantic.errors import CausanticError, NoMemoryYet
from causantic.facade import Memory
from causantic.home import is_team_memory
from causantic.retrieval import browse
from causantic.retrieval.browse import TIMELINE_PAGE
from causantic.retrieval.forget import ForgetResult, nothing_to_forget, others_note, space_note
from causantic.retrieval.format import Reread, counted, mixes_stores, reread_note, search_summary
from causantic.retrieval.listing import in_no_topic_line, no_topics_line
from causantic.retrieval.options import FORGET_THRESHOLD
from causantic.retrieval.prompt_report import PROMPTS_HEADING, added_text, explain_prompt, recent_prompts
from causantic.runs import PROMPT_HOOK, HookRun, read_status
from causantic.wording import sentence

FORGET_PREVIEW_MAX = 500  # the most chunks one confirmation may delete: all of them are listed
STALE_INGEST_DAYS = 7
SEARCH_KINDS = ("search", "recall", "predict")
MAP_LABELS = 40  # the largest topics are candidates for a label on the map (those that do not overlap)
MAP_WIDTH, MAP_HEIGHT, MAP_COLOURS = 600, 400, 12  # the topic map's points' span and palette (style.css)
ONLY_MINE = "“Only my chunks”"  # the forget page's switch, as the others note names it


T = TypeVar("T")


class Derived:
    """What pages derive from memory, kept until memory changes.

    Counting, grouping and laying out 100k chunks costs more than a page may take, and memory
    changes only when something is ingested or forgotten. Values are keyed by the store's change
    stamp (any commit by any process, or by this server), so an ingest shows on the next view.
    """

    def __init__(self, limit: int = 64) -> None:
        self._stamp: tuple[int, ...] | None = None
        self._values: dict[Hashable, Any] = {}
        self._limit = limit

    def get(self, memory: Memory, key: Hashable, compute: Callable[[], T]) -> T:
        stamp = memory.change_stamp()
        if stamp != self._stamp:
            self._values.clear()
            self._stamp = stamp
        if key not in self._values:
            if len(self._values) >= self._limit:
                self._values.pop(next(iter(self._values)))  # the oldest
            self._values[key] = compute()
        value: T = self._values[key]
        return value


@dataclass(frozen=True, slots=True)
class Health:
    level: str  # "error" or "warn"
    text: str


def overview(memory: Memory, derived: Derived) -> dict[str, Any]:
    view = derived.get(memory, "overview", memory.overview)
    status = read_status()  # the hooks' file, not memory: read every time
    hooks = hook_status(status)
    ingests = memory.ingests_running()  # a file per running ingest, not memory: read every time
    reread = derived.get(memory, "files_to_reread", memory.files_to_reread)
    no_topics = None
    if view.vectors and not view.counts["clusters"]:  # why, as the topics page and `causantic clusters` say it
        coverage = derived.get(memory, "topic_coverage", memory.topic_coverage)
        no_topics = no_topics_line(coverage, memory.config.clustering.min_cluster_size, ingesting=bool(ingests))
    return {
        "o": view,
        "hooks": hooks,
        "ingests": ingests,
        # What `causantic hook status` says of each recent prompt, in its words.
        "prompts": [explain_prompt(run) for run in recent_prompts(status)],
        "prompts_heading": PROMPTS_HEADING,
        "warnings": _warnings(memory, view, hooks, reread, no_topics, ingesting=bool(ingests)),
        # The database holds the vectors; only the ANN index files lie beside it.
        "disk": int(view.counts["sqlite_bytes"]) + view.vector_file_bytes,  # type: ignore[call-overload]
    }


def hook_status(status: dict[str, HookRun]) -> list[dict[str, Any]]:
    """Each hook's last run, newest first (the prompt hook's outcome: whether it added memory);
    empty when no hook has run or the file is unreadable."""
    runs = [
        {"hook": name, **run, **({"outcome": added_text(run)} if name == PROMPT_HOOK else {})}
        for name, run in status.items()
    ]
    return sorted(runs, key=lambda r: str(r.get("lastRun", "")), reverse=True)


def _warnings(
    memory: Memory,
    view: browse.Overview,
    hooks: list[dict[str, Any]],
    reread: Reread,
    no_topics: str | None,
    *,
    ingesting: bool,
) -> list[Health]:
    from causantic.embedding import is_available

    out: list[Health] = []
    if unavailable := memory.team_unavailable:  # the figures are the local store's alone, as `causantic stats` warns
        out.append(Health("warn", f"These are local memory's figures only. {unavailable.message}"))
    if gap := memory.team_schema_note:  # what this member goes without, as `causantic stats` notes it
        out.append(Health("warn", sentence(gap)))
    if not view.counts["chunks"]:  # not "run batch-ingest" while one is finding the files to read
        empty = (
            "Memory is empty so far: the ingest running now is reading your sessions."
            if ingesting
            else "Memory is empty: run `causantic batch-ingest` to read your sessions."
        )
        out.append(Health("warn", empty))
    model = memory.config.embedding.model
    if not is_available(model):
        out.append(
            Health(
                "error",
                f"The embedding model {model} is not on this machine: search runs "
                "keyword-only (see `causantic models`).",
            )
        )
    if view.without_vectors:
        out.append(  # as search says it: while an ingest runs, the newest chunks wait for their vectors
            Health(
                "warn",
                f"{counted(view.without_vectors, 'chunk')} {'has' if view.without_vectors == 1 else 'have'} no vector "
                "yet: a running ingest is embedding them, or run `causantic embed`.",
            )
        )
    # One text per store ("on", "on (PostgreSQL full-text search)", "off (…)"), joined by "; " when two answer.
    off = [part for part in str(view.counts["keyword_index"]).split("; ") if not part.startswith("on")]
    if off:
        out.append(Health("warn", f"Keyword index {'; '.join(off)}: search runs vector-only."))
    if reread:
        out.append(Health("warn", reread_note(reread)))
    if no_topics:
        out.append(Health("warn", no_topics))
    out.extend(
        Health(
            "error",
            f"Hook {run['hook']} failed at {short_time(run.get('lastRun'))}: "
            f"{run.get('error') or run.get('outcome') or 'no detail'}.",
        )
        for run in hooks
        if run.get("success") is False
    )
    if view.last_ingest:
        age = datetime.now(UTC) - datetime.fromisoformat(view.last_ingest.replace("Z", "+00:00"))
        if age.days >= STALE_INGEST_DAYS:
            out.append(
                Health("warn", f"Nothing was ingested for {age.days} days: are the hooks installed (`causantic init`)?")
            )
    return out


def projects(memory: Memory, derived: Derived) -> dict[str, Any]:
    """Every project with its chunks and sessions, as `causantic list-projects` lists them (the same
    call: team memory's projects say whose sessions they hold)."""
    found = derived.get(memory, "projects", memory.projects)
    # Team memory not answering: its projects are missing, as `causantic list-projects` warns.
    down = memory.team_unavailable
    return {"projects": found, "team": any(p.members for p in found), "unavailable": down and down.message}


def _known_linked(exc: NoMemoryYet) -> Markup:
    """A new folder's answer, the projects it names each a link to its page."""
    return names_linked(str(exc), (), exc.known, project_href)


def sessions(memory: Memory, derived: Derived, project: str, page_text: str = "") -> dict[str, Any]:
    """A page of a project's timeline: page 1 the newest sessions, 2 the ones before them, …"""
    page = _page(page_text)
    offset = (page - 1) * TIMELINE_PAGE
    try:
        found = derived.get(memory, ("timeline", project, page), lambda: memory.timeline(project, offset=offset))
    except NoMemoryYet as exc:  # a new project's folder: an answer, as the CLI prints it and the MCP tools give it
        return {"timeline": None, "folder": project, "nothing_yet": _known_linked(exc)}
    pages = max(1, -(-found.total // TIMELINE_PAGE))
    if page > pages:
        raise CausanticError(
            f"Page {page} is past the last: {found.project.name} has {counted(found.total, 'session')}, "
            f"{counted(pages, 'page')} of {TIMELINE_PAGE}."
        )
    return {"timeline": found, "page": page, "pages": pages, "first": offset + 1, "last": offset + len(found.sessions)}


def _page(text: str, pages: str = "the newest sessions, 2 the ones before them") -> int:
    """A page number from the address ('' is the first), or a CausanticError saying what one is
    (``pages``: what page 1 and 2 hold)."""
    if not text:
        return 1
    if not text.isdigit() or int(text) < 1:
        raise CausanticError(f"Page {text!r} is not a page number: 1 is {pages}.")
    return int(text)


def session(memory: Memory, derived: Derived, session_id: str, at: str | None) -> dict[str, Any]:
    def build() -> tuple[browse.SessionView, dict[str, list[Link]]]:
        view = memory.session_view(session_id)
        return view, _links(view)

    view, links = derived.get(memory, ("session", session_id), build)
    return {"s": view, "at": at, "links": links}


@dataclass(frozen=True, slots=True)
class Link:
    arrow: str  # "→" out of the chunk, "←" into it
    kind: str  # the edge's reference type
    chunk_id: str  # the other end
    session_id: str | None  # the other end's session when it is another session
    time: str


def _links(view: browse.SessionView) -> dict[str, list[Link]]:
    """Per chunk, the edges worth showing: all but the plain next/previous-turn links in this session."""
    out: dict[str, list[Link]] = {}
    for chunk_id, edges in view.edges.items():
        for edge in edges:
            outgoing = edge.source == chunk_id
            other = edge.target if outgoing else edge.source
            elsewhere = view.elsewhere.get(other)
            if edge.reference_type == "within-chain" and elsewhere is None:
                continue
            out.setdefault(chunk_id, []).append(
                Link(
                    "→" if outgoing else "←",
                    edge.reference_type,
                    other,
                    elsewhere.session_id if elsewhere else None,
                    elsewhere.start_time if elsewhere else "",
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class SearchForm:
    q: str = ""
    kind: str = "search"
    project: str = ""
    agent: str = ""
    since: str = ""  # YYYY-MM-DD
    until: str = ""
    member: str = ""  # team memory: one member's chunks (search only)


def project_names(memory: Memory, derived: Derived) -> list[str]:
    return derived.get(memory, "project_names", memory.project_names)


def on_team(memory: Memory) -> bool:
    """Whether memory is team memory, where members exist (their filters show there only)."""
    return is_team_memory(memory.config.storage)


def search(memory: Memory, derived: Derived, form: SearchForm) -> dict[str, Any]:
    context: dict[str, Any] = {
        "form": form,
        "kinds": SEARCH_KINDS,
        "result": None,
        "story": None,
        "undated": None,
        "projects": project_names(memory, derived),
        "team": (team := on_team(memory)),
        # The members to choose from, so that a misspelt name cannot quietly find nothing.
        "members": derived.get(memory, "team_members", memory.team_members) if team else [],
        "anyone": None,
        "nothing_yet": None,
    }
    if not form.q.strip():
        return context
    try:
        return _answer(memory, form, context)
    except NoMemoryYet as exc:  # a new project's folder as the filter: an answer, as the CLI and MCP tools give it
        return {**context, "nothing_yet": _known_linked(exc)}


def _answer(memory: Memory, form: SearchForm, context: dict[str, Any]) -> dict[str, Any]:
    """``context`` with the search's, recall's or predict's answer to ``form``."""
    if form.kind not in SEARCH_KINDS:
        raise CausanticError(f"Unknown kind {form.kind!r}: choose search, recall or predict.")
    project, agent = form.project or None, form.agent or None
    if form.kind == "search":
        since, until = _date(form.since, "from"), _date(form.until, "to")
        if since is not None and until is not None and until < since:  # in the dates as typed, not as widened
            raise CausanticError(f"The To date {form.until} is before the From date {form.since}.")
        until = _through(until, form.until)
        context["result"] = result = memory.search(
            form.q, project=project, agent=agent, user=form.member.strip() or None, since=since, until=until
        )
        context["shown"] = result.shown_relevance  # what people read: never rising down the list
        context["summary"] = search_summary(result)  # the CLI's and the MCP tool's words, weak hits counted apart
        context["mixed"] = mixes_stores([h.chunk for h in result.hits])  # local chunks marked, as the CLI's
    else:
        if form.since or form.until:  # recall and predict take no dates: say so rather than ignore them
            context["undated"] = f"From and To filter search only: {form.kind} looked at every date."
        if form.member.strip():  # nor members
            context["anyone"] = f"Member filters search only: {form.kind} looked at every member's memory."
        ask = memory.recall if form.kind == "recall" else memory.predict
        context["story"] = story = story_of(ask(form.q, project=project, agent=agent))
        context["mixed"] = mixes_stores([step.chunk for step in story.steps])
    return context


def _date(text: str, name: str) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).replace(tzinfo=UTC)
    except ValueError as exc:
        raise CausanticError(f"The {name} date {text!r} is not a date like 2026-05-01.") from exc


def _through(day: datetime | None, text: str) -> datetime | None:
    """The page's To is a day picker: a bare date means through the end of that day, so From and
    To on one day find that day's chunks (a time given in the address is taken as it is)."""
    return day + timedelta(days=1) if day is not None and len(text) == len("2026-05-01") else day


def topics(memory: Memory, derived: Derived, page_text: str = "") -> dict[str, Any]:
    """The topics page: a page of ``dashboard.topicsPage`` topics of the list (1 the largest), the map of all."""
    page = _page(page_text, "the largest topics, 2 the next ones")
    size = memory.config.dashboard.topics_page
    found = derived.get(memory, "topics", lambda: _topics(memory))
    if found["topics"]:
        total = len(found["topics"])
        pages = -(-total // size)
        if page > pages:
            raise CausanticError(
                f"Page {page} is past the last: memory has {counted(total, 'topic')}, "
                f"{counted(pages, 'page')} of {size}."
            )
        first = (page - 1) * size
        listed = found["topics"][first : first + size]
        return {
            **found,
            "listed": listed,
            "page": page,
            "pages": pages,
            "first": first + 1,
            "last": first + len(listed),
        }
    # Why there are none, as `causantic clusters` says it; whether an ingest runs is read every time.
    smallest = memory.config.clustering.min_cluster_size
    return {**found, "no_topics": no_topics_line(found["coverage"], smallest, ingesting=bool(memory.ingests_running()))}


def _topics(memory: Memory) -> dict[str, Any]:
    found = memory.topic_sizes()
    drawn = memory.topic_map(found) if found else None
    # Beside team memory each store numbers its own topics: a topic is (store, id), on the map as in the list.
    colour = {(t.store, t.id): i % MAP_COLOURS for i, t in enumerate(found)}
    # Thousands of dots: built as one string here, since a template loop over them costs more than
    # the rest of the page. Every value is escaped; a topic's label and colour once per topic. A dot
    # is for the mouse: out of the Tab order (a keyboard crossed 900 dots to reach the topic list),
    # its topic reached by its label or the list.
    labels = {(t.store, t.id): t.label for t in found}
    tails: dict[tuple[str | None, int], str] = {}

    def tail(store: str | None, topic_id: int) -> str:
        if (store, topic_id) not in tails:
            label = escape(labels.get((store, topic_id), ""))
            tails[store, topic_id] = f'class="c{colour.get((store, topic_id), 0)}"><title>{label}</title></circle></a>'
        return tails[store, topic_id]

    dots = Markup(
        "".join(
            f'<a href="/session/{escape(p.session_id)}?at={chunk}#c-{chunk}" class="pt" tabindex="-1">'
            f'<circle cx="{p.x * MAP_WIDTH:.1f}" cy="{MAP_HEIGHT - p.y * MAP_HEIGHT:.1f}" r="2.6" '
            f"{tail(p.store, p.topic_id)}"
            for p in (drawn.points if drawn else [])
            for chunk in (escape(p.chunk_id),)
        )
    )
    named = [
        MapLabel(_topic_link(t.topic_id, t.store), short_label(t.label), t.x * MAP_WIDTH, MAP_HEIGHT - t.y * MAP_HEIGHT)
        for t in (drawn.topics[:MAP_LABELS] if drawn else [])
    ]
    stores = any(t.store for t in found)
    coverage = memory.topic_coverage()
    return {
        "topics": found,
        "dots": dots,
        "label_layouts": layouts(named),
        "viewbox": " ".join(f"{v:g}" for v in VIEWBOX),
        "colour": colour,
        "stores": stores,
        "left_out": in_no_topic_line(coverage),
        "coverage": coverage,
    }


def _topic_link(topic_id: int, store: str | None) -> str:
    """A topic's page: the local store's beside team memory says so (each store numbers its own)."""
    return f"/topics/{topic_id}" + ("?store=local" if store == "local" else "")


def topic(memory: Memory, derived: Derived, topic_id: int, store: str | None = None) -> dict[str, Any]:
    found, chunks = derived.get(memory, ("topic", store, topic_id), lambda: memory.topic_members(topic_id, store))
    return {"topic": found, "chunks": chunks}


@dataclass(frozen=True, slots=True)
class ForgetForm:
    project: str = ""
    before: str = ""
    after: str = ""
    session: str = ""
    query: str = ""
    threshold: float = FORGET_THRESHOLD
    only_mine: bool = False  # team memory: the forgetting member's own chunks only

    def run(self, memory: Memory, *, dry_run: bool, only_ids: frozenset[str] | None = None) -> ForgetResult:
        """The same rules as ``causantic forget``; the preview lists every match (up to FORGET_PREVIEW_MAX)."""
        if not self.project:
            raise CausanticError("Choose a project.")
        # An empty field is no filter; anything else, spaces only or a too short session id included,
        # goes to forget as typed, which refuses it (read as no filter, it would widen the preview).
        return memory.forget(
            self.project,
            before=_date(self.before, "before"),
            after=_date(self.after, "after"),
            session_id=self.session or None,
            query=self.query or None,
            threshold=self.threshold,
            only_mine=self.only_mine,
            dry_run=dry_run,
            only_ids=only_ids,
            preview_size=FORGET_PREVIEW_MAX,
        )


def forget_form(memory: Memory, derived: Derived, form: ForgetForm) -> dict[str, Any]:
    return {
        "form": form,
        "projects": project_names(memory, derived),
        "team": on_team(memory),
        "preview": None,
        "done": None,
    }


def forget_preview(memory: Memory, derived: Derived, form: ForgetForm) -> dict[str, Any]:
    """The same rules as ``causantic forget`` without ``--yes``; every match is listed."""
    result = form.run(memory, dry_run=True)
    return {
        **forget_form(memory, derived, form),
        "preview": result,
        "nothing": nothing_to_forget(result, "Similarity at least {}"),  # the CLI's sentence
        "others": others_note(result, ONLY_MINE),  # other members' chunks would refuse the deletion
        "too_many": result.count > FORGET_PREVIEW_MAX,
        "limit": FORGET_PREVIEW_MAX,
    }


def forget_confirm(memory: Memory, derived: Derived, form: ForgetForm, shown: frozenset[str]) -> dict[str, Any]:
    """Delete what the preview listed, and only that (chunks matching now but not shown stay)."""
    if not shown:
        raise CausanticError("Nothing was previewed: preview first, then confirm.")
    if len(shown) > FORGET_PREVIEW_MAX:
        raise CausanticError(f"At most {FORGET_PREVIEW_MAX} chunks can be deleted at once here.")
    with write_waits.write("forget"):  # named to a process that waits for it ("the dashboard's forget started at …")
        result = form.run(memory, dry_run=False, only_ids=shown)
    return {**forget_form(memory, derived, form), "done": result, "space": space_note(result)}


def settings(memory: Memory) -> dict[str, Any]:
    sources: dict[str, str] = {}
    config = load_config(sources=sources, home=memory.home)  # the memory served, not $CAUSANTIC_HOME's
    rows = [asdict(setting) for setting in described_settings(config, sources)]
    paths = [("home", memory.home), ("database", db_path(config)), ("vectors", vector_path(config))]
    return {"rows": rows, "paths": paths}
