"""The dashboard's routes: parse the request, call one function of :mod:`pages`, render a template.

One :class:`~causantic.facade.Memory` is opened for the server's life (like the MCP server's
lifespan) and used by one request at a time, behind a lock, in a worker thread: SQLite handles are
not shared across concurrent transactions, and the event loop stays free to serve static files.
Static assets are read from the package once at start into memory and served by name from that
table, so no request path ever reaches the filesystem (and there is no directory to list).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager
from importlib import resources
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from causantic import __version__, write_waits
from causantic.dashboard import map_labels, pages, text
from causantic.dashboard.security import ASGIApp, Guard, Secrets
from causantic.errors import CausanticError, ProjectNotFound
from causantic.facade import Memory
from causantic.retrieval import options
from causantic.retrieval.browse import SessionNotFound, TopicNotFound
from causantic.retrieval.forget import chunks_forgotten
from causantic.retrieval.format import WEAK_MARK, byte_size, counted, is_weak, short_session
from causantic.retrieval.listing import known_folder
from causantic.retrieval.relevance import marked_terms
from causantic.sources import SOURCE_NAMES
from causantic.wording import ago

STATIC_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}
NAV = [
    ("overview", "/", "Overview"),
    ("projects", "/projects", "Projects"),
    ("search", "/search", "Search"),
    ("topics", "/topics", "Topics"),
    ("forget", "/forget", "Forget"),
    ("settings", "/settings", "Settings"),
]

Opener = Callable[[], AbstractContextManager[Memory]]


def create_app(secrets: Secrets, opener: Opener = Memory) -> ASGIApp:
    """The guarded ASGI app; memory opens when the server starts and closes when it stops."""
    held: dict[str, Memory] = {}
    lock = threading.Lock()
    templates = _templates(secrets)
    assets = _static_assets()
    derived = pages.Derived()  # used under the lock, like the memory

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        # Each of its writes (an upgrade of memory's database at opening, a forget, the log's idle
        # clean-up) is named to a process that waits for it: "the dashboard's forget started at 10:02 UTC".
        with write_waits.serving("the dashboard"), opener() as memory, memory.tidied_while_open():
            held["memory"] = memory
            yield
            held.clear()

    def page(
        name: str, template: str, build: Callable[[Memory], dict[str, Any]]
    ) -> Callable[[Request], Awaitable[Response]]:
        """A route handler: ``build`` runs on the memory under the lock, then ``template`` renders."""

        async def handler(request: Request) -> Response:
            def run() -> Response:
                with lock:
                    started = time.perf_counter()
                    partial = request.headers.get("x-partial") == "results" and template == "search.html"
                    # A search form swaps in its results only: its error is the notice alone, not a
                    # whole page (header and all) inside the results.
                    failed = "_error.html" if partial else "error.html"
                    # A session, topic or project page that names none is not found; a form's unknown
                    # project is a bad value.
                    pages_of = (SessionNotFound, TopicNotFound)
                    missing = (*pages_of, ProjectNotFound) if name == "projects" else pages_of
                    try:
                        context = build(held["memory"])
                    except missing as exc:
                        return _render(templates, failed, request, name, {"message": _offered(request, exc)}, 404)
                    except CausanticError as exc:
                        return _render(templates, failed, request, name, {"message": _offered(request, exc)}, 400)
                    gathered = time.perf_counter()
                    chosen = f"_{template}" if partial else template
                    response = _render(templates, chosen, request, name, context, 200)
                    # Server-Timing: what the page cost on the server, split into the service calls
                    # and the rendering (browsers show it; benchmarks/dashboard.py reads it).
                    response.headers["server-timing"] = (
                        f"data;dur={(gathered - started) * 1e3:.2f}, "
                        f"render;dur={(time.perf_counter() - gathered) * 1e3:.2f}"
                    )
                    return response

            return await run_in_threadpool(run)

        return handler

    async def overview(request: Request) -> Response:
        return await page("overview", "overview.html", lambda s: pages.overview(s, derived))(request)

    async def projects(request: Request) -> Response:
        return await page("projects", "projects.html", lambda s: pages.projects(s, derived))(request)

    async def sessions(request: Request) -> Response:
        project, number = request.query_params.get("name", ""), request.query_params.get("page", "")
        return await page("projects", "sessions.html", lambda s: pages.sessions(s, derived, project, number))(request)

    async def session(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        at = request.query_params.get("at")
        return await page("projects", "session.html", lambda s: pages.session(s, derived, session_id, at))(request)

    async def search(request: Request) -> Response:
        q = request.query_params
        form = pages.SearchForm(
            q.get("q", ""),
            q.get("kind", "search"),
            q.get("project", ""),
            q.get("agent", ""),
            q.get("from", ""),
            q.get("to", ""),
            q.get("member", ""),
        )
        return await page("search", "search.html", lambda s: pages.search(s, derived, form))(request)

    async def topics(request: Request) -> Response:
        number = request.query_params.get("page", "")
        return await page("topics", "topics.html", lambda s: pages.topics(s, derived, number))(request)

    async def topic(request: Request) -> Response:
        topic_id = request.path_params["topic_id"]
        store = "local" if request.query_params.get("store") == "local" else None  # beside team memory
        return await page("topics", "topic.html", lambda s: pages.topic(s, derived, topic_id, store))(request)

    async def forget_form(request: Request) -> Response:
        form = pages.ForgetForm(
            project=request.query_params.get("project", ""), session=request.query_params.get("session", "")
        )
        return await page("forget", "forget.html", lambda s: pages.forget_form(s, derived, form))(request)

    async def forget_preview(request: Request) -> Response:
        form = await _forget_form(request)
        return await page("forget", "forget.html", lambda s: pages.forget_preview(s, derived, form))(request)

    async def forget_confirm(request: Request) -> Response:
        data = await request.form()
        form = await _forget_form(request)
        shown = frozenset(str(v) for v in data.getlist("id"))
        return await page("forget", "forget.html", lambda s: pages.forget_confirm(s, derived, form, shown))(request)

    async def settings(request: Request) -> Response:
        return await page("settings", "settings.html", pages.settings)(request)

    async def static(request: Request) -> Response:
        found = assets.get(request.path_params["name"])
        if found is None:
            return Response("Not found.", 404, media_type="text/plain")
        body, media_type = found
        return Response(body, media_type=media_type, headers={"cache-control": "max-age=3600"})

    routes = [
        Route("/", overview),
        Route("/projects", projects),
        Route("/project", sessions),
        Route("/session/{session_id}", session),
        Route("/search", search),
        Route("/topics", topics),
        Route("/topics/{topic_id:int}", topic),
        Route("/forget", forget_form),
        Route("/forget/preview", forget_preview, methods=["POST"]),
        Route("/forget/confirm", forget_confirm, methods=["POST"]),
        Route("/settings", settings),
        Route("/static/{name}", static),
    ]

    async def not_served(request: Request, exc: Exception) -> Response:
        # An unknown address (a mistyped link, /topics/abc) gets the dashboard's own error page with
        # its way back, not a bare "Not Found"; a form address opened without its form says so.
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        message = (
            "This address is a form's answer: open the form and submit it."
            if status == 405
            else f"Nothing is served at {request.url.path}."
        )
        return _render(templates, "error.html", request, "", {"message": message}, status)

    handlers = {404: not_served, 405: not_served}
    return Guard(Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers), secrets)


async def _forget_form(request: Request) -> pages.ForgetForm:
    data = await request.form()
    try:
        threshold = float(str(data.get("threshold") or options.FORGET_THRESHOLD))
    except ValueError:
        threshold = -1.0  # forget() refuses it with its own message
    return pages.ForgetForm(
        str(data.get("project", "")),
        str(data.get("before", "")),
        str(data.get("after", "")),
        str(data.get("session", "")),
        str(data.get("query", "")),
        threshold,
        bool(data.get("only_mine")),  # a ticked box is sent, an unticked one is not
    )


def _offered(request: Request, exc: CausanticError) -> str | Markup:
    """The error's message; an unknown project's names in it (the nearest, and the known ones it
    lists) link to this address with each in its place, or, where that is no link (a form's POST),
    to each project's page."""
    if not isinstance(exc, ProjectNotFound) or not (exc.meant or exc.known):
        return str(exc)
    asked = request.query_params.multi_items()
    href = text.project_href
    if request.method == "GET" and any(value == exc.asked for _, value in asked):

        def href(name: str) -> str:
            return f"{request.url.path}?" + urlencode([(k, name if v == exc.asked else v) for k, v in asked])

    return text.names_linked(str(exc), exc.meant, exc.known, href)


def _render(
    templates: Environment, template: str, request: Request, nav: str, context: dict[str, Any], status: int
) -> HTMLResponse:
    html = templates.get_template(template).render(**context, active=nav, path=request.url.path)
    return HTMLResponse(html, status)


def _templates(secrets: Secrets) -> Environment:
    env = Environment(
        loader=PackageLoader("causantic.dashboard", "templates"),
        autoescape=select_autoescape(default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        csrf=secrets.csrf,
        nav=NAV,
        version=__version__,
        qs=_qs,
        weak_mark=WEAK_MARK,
        chunks_forgotten=chunks_forgotten,
        threshold_option=options.THRESHOLD,  # the forget form's bounds, as the CLI's and the MCP tool's
        source_names=SOURCE_NAMES,
    )
    env.filters.update(
        short_time=text.short_time,
        time_span=text.time_span,
        ago=ago,
        size=byte_size,
        percent=text.percent,
        sections=text.sections,
        highlight=text.highlight,
        terms=marked_terms,
        commands=text.commands,
        gist=text.gist,
        as_json=_as_json,
        counted=counted,
        weak=is_weak,
        folder=known_folder,  # none for a Gemini project known by its folder's hash alone
        short_session=short_session,  # as the answers name a session: 13 characters of a Codex id
    )
    return env


def _as_json(value: object) -> str:
    """A setting as it would be written in config.json (escaped later by autoescaping); a secret
    (storage.postgresUrl) as its mask, which is what str() of it gives."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _qs(**params: object) -> str:
    return urlencode({k: v for k, v in params.items() if v not in (None, "")})


def _static_assets() -> dict[str, tuple[bytes, str]]:
    """Every shipped asset by file name, read once (the package is the only source of truth), and
    the topic map's label layouts' stylesheet, made once."""
    folder = resources.files("causantic.dashboard") / "static"
    return {
        **{
            item.name: (item.read_bytes(), STATIC_TYPES.get("." + item.name.rsplit(".", 1)[-1], "text/plain"))
            for item in _files(folder)
        },
        "topicmap.css": (map_labels.stylesheet().encode(), STATIC_TYPES[".css"]),  # its bands are Python's
    }


def _files(folder: Any) -> Iterator[Any]:
    yield from (item for item in folder.iterdir() if item.is_file() and not item.name.startswith("."))
