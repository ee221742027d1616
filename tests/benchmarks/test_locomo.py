"""benchmarks/locomo.py: LoCoMo conversion, metric arithmetic, and a small keyword-only end-to-end run."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from benchmark_scripts import load_benchmark
from shared_data import require_shared

from causantic.transcripts.discovery import discover, read_session
from causantic.transcripts.turns import assemble_turns

REPO = Path(__file__).resolve().parents[2]
DEV_FILE = (REPO / ".." / "shared" / "benchdata" / "locomo" / "locomo10-dev.json").resolve()


locomo = load_benchmark("locomo.py")


def _sample() -> dict[str, Any]:
    """Two short sessions; session 2 starts with speaker_b and has an image turn."""
    return {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel! I went to a support group."},
                {"speaker": "Melanie", "dia_id": "D1:2", "text": "That sounds great, Caroline."},
                {"speaker": "Caroline", "dia_id": "D1:3", "text": "I want to study counseling."},
            ],
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": [
                {
                    "speaker": "Melanie",
                    "dia_id": "D2:1",
                    "text": "Look at my pottery!",
                    "img_url": ["http://x"],
                    "blip_caption": "a photo of a clay bowl",
                    "query": "bowl",
                },
                {"speaker": "Caroline", "dia_id": "D2:2", "text": "Lovely bowl."},
            ],
            "session_3_date_time": "1:00 pm on 1 July, 2023",  # a date without a session: ignored
        },
        "qa": [
            {"question": "What did Caroline research?", "answer": "counseling", "evidence": ["D1:3"], "category": 4},
            {"question": "Empty?", "answer": "x", "evidence": [], "category": 3},
            {"question": "Joined?", "answer": "y", "evidence": ["D1:1; D2:2"], "category": 1},
            {"question": "Missing?", "answer": "z", "evidence": ["D2:9", "D"], "category": 2},
        ],
    }


# --- evidence ids ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected", "repaired", "dropped"),
    [
        (["D1:3"], ["D1:3"], 0, 0),
        (["D8:6; D9:17"], ["D8:6", "D9:17"], 1, 0),
        (["D9:1 D4:4 D4:6"], ["D9:1", "D4:4", "D4:6"], 1, 0),
        (["D:11:26"], ["D11:26"], 1, 0),
        (["D30:05"], ["D30:5"], 1, 0),
        (["D1:18", "D", "D1:20"], ["D1:18", "D1:20"], 0, 1),
        (["D2:1", "D2:1"], ["D2:1"], 0, 0),
        ([], [], 0, 0),
    ],
)
def test_evidence_ids_are_normalised(raw: list[str], expected: list[str], repaired: int, dropped: int) -> None:
    assert locomo.normalize_evidence(raw) == (expected, repaired, dropped)


# --- conversion ----------------------------------------------------------------------------------


def test_a_conversation_becomes_one_claude_code_session_file_per_session(tmp_path: Path) -> None:
    stats = locomo.DatasetStats()
    conv = locomo.parse_conversation(_sample(), stats)
    paths = locomo.write_sessions(conv, tmp_path / "t", cwd="/locomo/conv-x")
    assert [p.name for p in paths] == ["session_001.jsonl", "session_002.jsonl"]

    records = [json.loads(line) for line in paths[1].read_text().splitlines()]
    assert [r["type"] for r in records] == ["assistant", "user"]  # speaker_b → assistant even when first
    assert {r["sessionId"] for r in records} == {"conv-x/session_2"}
    assert [r["uuid"] for r in records] == ["conv-x:D2:1", "conv-x:D2:2"]
    assert records[0]["message"]["content"] == [
        {"type": "text", "text": "Melanie: Look at my pottery! [shares a photo of a clay bowl]"}
    ]
    assert records[1]["message"]["content"] == "Caroline: Lovely bowl."
    assert [r["timestamp"] for r in records] == ["2023-06-27T10:37:00.000Z", "2023-06-27T10:37:30.000Z"]
    assert records[1]["parentUuid"] == "conv-x:D2:1"
    assert stats.guessed_session_dates == 0

    # The product's own reader takes these files as they are.
    found = discover(tmp_path / "t")
    assert [s.session_id for s in found] == ["conv-x/session_1", "conv-x/session_2"]
    sessions, report = read_session(found[0])
    assert report.total == 0
    main = sessions[0].main
    assert main is not None and main.cwd == "/locomo/conv-x"
    assert [m.uuid for m in main.messages] == ["conv-x:D1:1", "conv-x:D1:2", "conv-x:D1:3"]
    assert [m.role for m in main.messages] == ["user", "assistant", "user"]
    assert main.messages[0].timestamp == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert [t.prompt for t in assemble_turns(main)] == [
        "Caroline: Hey Mel! I went to a support group.",
        "Caroline: I want to study counseling.",
    ]


def test_questions_drop_empty_evidence_and_flag_ids_naming_no_turn() -> None:
    stats = locomo.DatasetStats()
    sample = _sample()
    conv = locomo.parse_conversation(sample, stats)
    questions = locomo.parse_questions(sample, conv, stats)
    assert [q.category for q in questions] == ["single-hop", "multi-hop", "temporal"]
    assert questions[1].evidence == ("D1:1", "D2:2") and questions[1].evidence_sessions == {1, 2}
    assert questions[2].unretrievable == ("D2:9",)
    assert stats.questions_total == 4 and stats.dropped_empty_evidence == 1
    assert stats.repaired_items == 1 and stats.dropped_items == 1
    assert stats.unretrievable_ids == ["conv-x D2:9"]


def test_repeated_dia_ids_still_get_distinct_uuids() -> None:
    sample = _sample()
    sample["conversation"]["session_1"][2]["dia_id"] = "D1:2"
    conv = locomo.parse_conversation(sample)
    uuids = [t.uuid for s in conv.sessions for t in s.turns]
    assert len(set(uuids)) == len(uuids)
    assert conv.dia_by_uuid["conv-x:D1:2~2"] == "D1:2"


# --- metrics -------------------------------------------------------------------------------------


def _q(evidence: tuple[str, ...], category: str = "single-hop") -> Any:
    return locomo.Question("conv-x", 0, "q", category, evidence, ())


def _u(*dias: str) -> Any:
    return locomo.Unit(tuple(dias), frozenset(locomo.dia_session(d) for d in dias), 10)


def test_turn_session_and_rank_metrics_on_a_hand_computed_ranking() -> None:
    ranked = [_u("D1:1", "D1:2"), _u("D3:5"), _u("D1:3", "D1:4"), _u("D2:1", "D2:2", "D2:3")]
    evidence = frozenset({"D1:3", "D3:5", "D2:3"})
    # flattened turns: D1:1 D1:2 D3:5 D1:3 D1:4 D2:1 D2:2 D2:3
    assert locomo.turn_recall(ranked, evidence, 2) == 0
    assert locomo.turn_recall(ranked, evidence, 3) == pytest.approx(1 / 3)
    assert locomo.turn_recall(ranked, evidence, 5) == pytest.approx(2 / 3)
    assert locomo.turn_recall(ranked, evidence, 8) == 1
    # sessions in rank order: 1, 3, 2
    assert locomo.session_recall(ranked, frozenset({3, 2}), 1) == 0
    assert locomo.session_recall(ranked, frozenset({3, 2}), 2) == 0.5
    assert locomo.session_recall(ranked, frozenset({3, 2}), 3) == 1
    assert locomo.reciprocal_rank(ranked, evidence) == 0.5
    assert locomo.reciprocal_rank(ranked, frozenset({"D2:2"})) == 0.25
    assert locomo.reciprocal_rank(ranked, frozenset({"D2:2"}), k=3) == 0
    assert locomo.reciprocal_rank([], evidence) == 0

    score = locomo.score_units(ranked, _q(("D1:3", "D3:5", "D2:3", "D9:9")))  # D9:9 names no turn: a miss
    assert score.turn_recall == {5: 0.5, 10: 0.75, 25: 0.75, 50: 0.75}
    assert score.session_recall == {2: 0.5, 5: 0.75, 10: 0.75}  # E_s = {1, 3, 2, 9}
    assert (score.rr10, score.answer_recall, score.chunks, score.turns, score.tokens) == (0.5, 0.75, 4, 8, 40)


def test_units_map_chunk_uuids_to_dia_ids_in_conversation_order() -> None:
    conv = locomo.parse_conversation(_sample())

    class Chunk:
        session_id = "conv-x/session_1"
        content = "x" * 35
        message_uuids = ("conv-x:D1:3", "conv-x:D1:1", "someone-else")

    (unit,) = locomo.units_of([Chunk()], conv)
    assert unit.dia_ids == ("D1:1", "D1:3") and unit.sessions == {1}
    assert unit.tokens == 10 + 30  # 35 chars / 3.5 plus the per-hit header


def test_summaries_are_means_per_category_and_overall_in_percent() -> None:
    one = locomo.score_units([_u("D1:1")], _q(("D1:1",)))
    half = locomo.score_units([_u("D1:1")], _q(("D1:1", "D1:2"), "temporal"))
    none = locomo.score_units([], _q(("D1:1",), "temporal"))
    summary = locomo.summarize([(_q(("D1:1",)), one), (_q((), "temporal"), half), (_q((), "temporal"), none)])
    assert summary["n"] == 3
    assert summary["turn_recall"]["5"] == pytest.approx(50.0)  # (1 + 0.5 + 0) / 3
    assert summary["mrr10"] == pytest.approx(round(2 / 3, 4))
    assert list(summary["by_category"]) == ["single-hop", "temporal"]
    assert summary["by_category"]["temporal"]["turn_recall"]["50"] == 25.0
    assert summary["by_category"]["single-hop"]["session_recall"]["2"] == 100.0


# --- end to end ----------------------------------------------------------------------------------


def _small_dev_file(tmp_path: Path) -> Path:
    """conv-26 cut to its first 3 sessions, with 4 of its questions answerable there and one made up."""
    require_shared(DEV_FILE, "The LoCoMo development file")
    sample = json.loads(DEV_FILE.read_text())[0]
    conv = sample["conversation"]
    for key in [k for k in conv if k.startswith("session_")]:
        number = int(key.split("_")[1])
        if number > 3:
            del conv[key]
    keep = [
        q for q in sample["qa"] if q["evidence"] and all(locomo.dia_session(e) in (1, 2, 3) for e in q["evidence"])
    ][:4]
    turn = conv["session_2"][3]
    words = " ".join(turn["text"].split()[:12])
    keep.append({"question": words, "answer": "-", "evidence": [turn["dia_id"]], "category": 4})
    keep.append({"question": "nothing", "answer": "-", "evidence": [], "category": 3})
    sample["qa"] = keep
    path = tmp_path / "small.json"
    path.write_text(json.dumps([sample]))
    return path


def test_a_small_keyword_only_run_reports_every_metric(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _small_dev_file(tmp_path)
    out, details = tmp_path / "out.json", tmp_path / "details.jsonl"
    assert (
        locomo.main([str(data), "--retrievers", "bm25", "--no-embed", "--json", str(out), "--details", str(details)])
        == 0
    )
    report = json.loads(out.read_text())
    assert report["n_questions"] == 5 and report["dropped_empty_evidence"] == 1
    assert "synthetic" in report["note"]
    (conversation,) = report["conversations"]
    assert conversation["turns_covered"] == conversation["turns"]  # every turn landed in some chunk
    bm25 = report["retrievers"]["bm25"]
    assert bm25["modes"] == {"keyword-only": 5}
    assert set(bm25["turn_recall"]) == {"5", "10", "25", "50"}
    assert set(bm25["session_recall"]) == {"2", "5", "10"}
    for values in (bm25["turn_recall"], bm25["session_recall"]):
        assert all(0 <= v <= 100 for v in values.values())
    assert 0 <= bm25["mrr10"] <= 1
    assert "single-hop" in bm25["by_category"]
    rows = [json.loads(line) for line in details.read_text().splitlines()]
    made_up = next(r for r in rows if r["question"] != "nothing" and r["qa_index"] == 4)
    assert made_up["turn_recall"]["5"] == 1.0 and made_up["rr10"] == 1.0  # its own words find the turn first
    printed = capsys.readouterr().out
    assert "DRAGON (paper)" in printed and "Δ vs DRAGON" in printed and "bm25" in printed


def test_each_conversation_gets_its_own_store_even_when_sample_ids_repeat(tmp_path: Path) -> None:
    data = tmp_path / "twice.json"
    data.write_text(json.dumps([_sample(), _sample()]))
    out = tmp_path / "out.json"
    assert locomo.main([str(data), "--retrievers", "bm25", "--no-embed", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    first, second = report["conversations"]
    assert (first["sample_id"], second["sample_id"]) == ("conv-x", "conv-x#2")
    assert first["chunks"] == second["chunks"] == 4  # 2 per session (a chunk never spans prompts): not shared
    assert report["n_questions"] == 6 and report["dropped_empty_evidence"] == 2
    assert report["evidence"]["unretrievable_ids"] == ["conv-x D2:9", "conv-x#2 D2:9"]
