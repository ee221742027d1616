"""forget held to what a preview showed: chunks that match later, unseen, are never deleted."""

from __future__ import annotations

from datetime import UTC, datetime

from causantic.config import Config
from causantic.examples import SESSIONS_DIR
from causantic.ingest.service import ingest_paths
from causantic.retrieval.forget import ForgetRequest, forget
from causantic.services import open_services


def test_a_confirmation_deletes_only_the_previewed_chunks_among_the_matches() -> None:
    with open_services(Config()) as services:
        ingest_paths(services, [SESSIONS_DIR], embed=False, workers=1)
        request = ForgetRequest("acme-shop", before=datetime(2100, 1, 1, tzinfo=UTC))
        preview = forget(services.store, services.vectors, None, request, preview_size=1000)
        matches = [c.id for c, _ in preview.preview]
        assert preview.count == len(matches) >= 3
        shown = frozenset(matches[: len(matches) // 2])
        done = forget(
            services.store,
            services.vectors,
            None,
            ForgetRequest("acme-shop", before=request.before, dry_run=False, only_ids=shown),
        )
        assert done.deleted == len(shown)
        left = forget(services.store, services.vectors, None, request, preview_size=1000)
        assert {c.id for c, _ in left.preview} == set(matches) - shown
