"""Bulky payloads (SVG, HAR or JSON dumps) stay searchable but never lead an answer."""

from __future__ import annotations

import json
from pathlib import Path

from causantic import Memory
from causantic.store.features import bulk_share

SVG = '<path d="' + " ".join(f"M{i}.5,{i * 3}.25L{i * 7}.75,{i * 2}.5C{i}.1,{i}.2,{i}.3Z" for i in range(60)) + '"/>'
HAR = "\n".join(
    json.dumps(
        {
            "request": {
                "method": "GET",
                "url": f"https://vercel.app/old-tokenizer-page?r={i}",
                "headers": [{"name": "x-vercel-redirect", "value": "old tokenizer page"}],
            },
            "response": {"status": 404, "statusText": "vercel redirect did not work"},
        }
    )
    for i in range(8)
)
STORY = (
    "The redirect for the old tokenizer page did not work because Vercel ignores the redirects in "
    "next.config.js for this deployment; moving the redirect into vercel.json fixed it, and the docs "
    "submodule was not checked out on the build, which is why the page 404ed."
)


def _session(path: Path) -> Path:
    def record(i: int, role: str, content: object) -> dict[str, object]:
        message = {"role": role, "content": content if role == "user" else [{"type": "text", "text": content}]}
        return {
            "parentUuid": f"u{i - 1}" if i else None,
            "isSidechain": False,
            "type": role,
            "message": message,
            "uuid": f"u{i}",
            "sessionId": "payload-session",
            "cwd": "/work/site",
            "timestamp": f"2026-03-02T10:{i:02d}:00.000Z",
        }

    ask = "the Vercel redirect for the old tokenizer page does not work"
    turns = [
        ("user", f"{ask}; the SVG of the page:\n{SVG}"),
        ("assistant", "Thanks, noted the icon."),
        ("user", f"{ask}; the browser network log:\n{HAR}"),
        ("assistant", "I see 308 responses in the log."),
        ("user", "Any idea what is wrong?"),
        ("assistant", STORY),
    ]
    path.mkdir(parents=True, exist_ok=True)
    file = path / "payload-session.jsonl"
    file.write_text("".join(json.dumps(record(i, r, c)) + "\n" for i, (r, c) in enumerate(turns)), encoding="utf-8")
    return file


def test_payload_is_measured_as_bulk() -> None:
    assert bulk_share(SVG) > 0.9 and bulk_share(HAR) > 0.9
    assert bulk_share(STORY) == 0.0
    assert bulk_share('result = requests.get(url, headers={"Accept": "json"})') == 0.0


def test_the_story_leads_and_payloads_follow(tmp_path: Path) -> None:
    with Memory(tmp_path / "home") as memory:
        memory.ingest([_session(tmp_path / "sessions")])
        result = memory.search("why did the Vercel redirect for the old tokenizer page not work", limit=10)
        bulky = [bulk_share(h.chunk.content) > 0.5 for h in result.hits]
        assert any(bulky) and not all(bulky)
        assert bulky == sorted(bulky)  # every payload chunk ranks below every prose chunk
        assert any("vercel.json" in h.chunk.content for h in result.hits[:2])
        keyword = memory.search("old-tokenizer", mode="keyword")  # the payload is still found by its words
        assert any("old-tokenizer" in h.chunk.content for h in keyword.hits)
