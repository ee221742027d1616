"""Search variants the ranking benchmarks compare against the default, by one name in every report.

``benchmarks/coding.py`` and ``benchmarks/locomo.py`` both run these, so one table shows a setting's
effect on coding history and on LoCoMo chat together. Each is (configuration overrides, SearchRequest
fields); "default" is the product as configured.
"""

from __future__ import annotations

from typing import Any

_RRF = {"retrieval.fusion": "rrf", "retrieval.vectorWeight": "1.0", "retrieval.fusionKeepTop": "0"}

VARIANTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "default": ({}, {}),
    # the ranking before issue 19 (convex fusion alone), to compare today's default against
    "before19": (
        {
            "retrieval.fusion": "convex",
            "retrieval.vectorWeight": "0.5",
            "retrieval.vectorSpread": "false",
            "retrieval.fusionKeepTop": "0",
            "retrieval.mentionPenalty": "0",
            "retrieval.sessionEvidence": "0",
            "retrieval.sessionContext": "0",
            "retrieval.feedbackWeight": "0",
            "retrieval.sessionCoverage": "0",
            "retrieval.sessionWords": "0",
            "retrieval.workEvidence": "0",
        },
        {},
    ),
    # the ranking before mention demotion and session support were switched on (24 November 2026)
    "prior_default": (
        {
            "retrieval.mentionPenalty": "0",
            "retrieval.sessionEvidence": "0",
            "retrieval.vectorSpread": "false",
            "retrieval.vectorWeight": "0.5",
            "retrieval.feedbackWeight": "0",
            "retrieval.sessionCoverage": "0",
            "retrieval.sessionWords": "0",
            "retrieval.workEvidence": "0",
        },
        {},
    ),
    "keyword": ({}, {"mode": "keyword"}),
    "vector": ({}, {"mode": "vector"}),
    "no_floor": ({"relevance.floor": "0"}, {}),
    "no_nearest": ({"relevance.nearestCosine": "-1"}, {}),  # the floor without the query's-nearest-chunk check
    "no_vocab": ({"relevance.knownFloor": "1"}, {}),  # that check without the exception for memory's own words
    # fusion
    "convex": (
        {
            "retrieval.fusion": "convex",
            "retrieval.vectorWeight": "0.5",
            "retrieval.vectorSpread": "false",
            "retrieval.fusionKeepTop": "0",
        },
        {},
    ),
    "rrf5": ({**_RRF, "retrieval.rrfK": "5"}, {}),
    "rrf10": ({**_RRF, "retrieval.rrfK": "10"}, {}),
    "rrf30": ({**_RRF, "retrieval.rrfK": "30"}, {}),
    "rrf60": ({**_RRF, "retrieval.rrfK": "60"}, {}),
    "keep1": ({"retrieval.fusionKeepTop": "1"}, {}),
    "keep2": ({"retrieval.fusionKeepTop": "2"}, {}),
    "keep3": ({"retrieval.fusionKeepTop": "3"}, {}),
    # demoting what only mentions the work
    "no_mention": ({"retrieval.mentionPenalty": "0"}, {}),
    "mention30": ({"retrieval.mentionPenalty": "0.3"}, {}),
    "mention50": ({"retrieval.mentionPenalty": "0.5"}, {}),
    "mention70": ({"retrieval.mentionPenalty": "0.7"}, {}),
    "mention100": ({"retrieval.mentionPenalty": "1.0"}, {}),
    # session-level evidence
    "no_session": ({"retrieval.sessionEvidence": "0"}, {}),
    "session05": ({"retrieval.sessionEvidence": "0.05", "retrieval.sessionEvidenceChunks": "2"}, {}),
    "session10": ({"retrieval.sessionEvidence": "0.1", "retrieval.sessionEvidenceChunks": "2"}, {}),
    "session25": ({"retrieval.sessionEvidence": "0.25", "retrieval.sessionEvidenceChunks": "2"}, {}),
    "session10_one": ({"retrieval.sessionEvidence": "0.1", "retrieval.sessionEvidenceChunks": "1"}, {}),
    "session20_one": ({"retrieval.sessionEvidence": "0.2", "retrieval.sessionEvidenceChunks": "1"}, {}),
    "session50_one": ({"retrieval.sessionEvidence": "0.5", "retrieval.sessionEvidenceChunks": "1"}, {}),
    "session50": ({"retrieval.sessionEvidence": "0.5", "retrieval.sessionEvidenceChunks": "2"}, {}),
    # the session's task as context
    "no_context": ({"retrieval.sessionContext": "0"}, {}),
    "context25": ({"retrieval.sessionContext": "0.25"}, {}),
    "context50": ({"retrieval.sessionContext": "0.5"}, {}),
    "context100": ({"retrieval.sessionContext": "1.0"}, {}),
    # vector weight under convex fusion, cosines as shares of the best
    "vw70": ({"retrieval.fusion": "convex", "retrieval.vectorWeight": "0.7", "retrieval.vectorSpread": "false"}, {}),
    "vw100": ({"retrieval.fusion": "convex", "retrieval.vectorWeight": "1.0", "retrieval.vectorSpread": "false"}, {}),
    # combinations
    "mention50_session10": (
        {"retrieval.mentionPenalty": "0.5", "retrieval.sessionEvidence": "0.1", "retrieval.sessionEvidenceChunks": "2"},
        {},
    ),
    "mention50_session05": (
        {
            "retrieval.mentionPenalty": "0.5",
            "retrieval.sessionEvidence": "0.05",
            "retrieval.sessionEvidenceChunks": "2",
        },
        {},
    ),
    "mention50_session20_one": (
        {"retrieval.mentionPenalty": "0.5", "retrieval.sessionEvidence": "0.2", "retrieval.sessionEvidenceChunks": "1"},
        {},
    ),
    "rrf10_mention50": ({**_RRF, "retrieval.rrfK": "10", "retrieval.mentionPenalty": "0.5"}, {}),
    "rrf10_mention50_session10": (
        {
            **_RRF,
            "retrieval.rrfK": "10",
            "retrieval.mentionPenalty": "0.5",
            "retrieval.sessionEvidence": "0.1",
            "retrieval.sessionEvidenceChunks": "2",
        },
        {},
    ),
    "vw70_mention50_session10": (
        {
            "retrieval.fusion": "convex",
            "retrieval.vectorWeight": "0.7",
            "retrieval.mentionPenalty": "0.5",
            "retrieval.sessionEvidence": "0.1",
            "retrieval.sessionEvidenceChunks": "2",
        },
        {},
    ),
    # convex and RRF blended
    "blend50": ({"retrieval.fusion": "blend", "retrieval.fusionBlend": "0.5", "retrieval.rrfK": "10"}, {}),
    "blend70": ({"retrieval.fusion": "blend", "retrieval.fusionBlend": "0.7", "retrieval.rrfK": "10"}, {}),
    "blend50_vw100": (
        {
            "retrieval.fusion": "blend",
            "retrieval.fusionBlend": "0.5",
            "retrieval.rrfK": "10",
            "retrieval.vectorWeight": "1.0",
        },
        {},
    ),
    "blend30_vw100": (
        {
            "retrieval.fusion": "blend",
            "retrieval.fusionBlend": "0.3",
            "retrieval.rrfK": "10",
            "retrieval.vectorWeight": "1.0",
        },
        {},
    ),
    "session10_context25": (
        {
            "retrieval.sessionEvidence": "0.1",
            "retrieval.sessionEvidenceChunks": "2",
            "retrieval.sessionContext": "0.25",
        },
        {},
    ),
    "blend70_session10": (
        {
            "retrieval.fusion": "blend",
            "retrieval.fusionBlend": "0.7",
            "retrieval.rrfK": "10",
            "retrieval.sessionEvidence": "0.1",
            "retrieval.sessionEvidenceChunks": "2",
        },
        {},
    ),
    "context25_mention50": ({"retrieval.sessionContext": "0.25", "retrieval.mentionPenalty": "0.5"}, {}),
    # convex fusion with the vector list's cosines spread between its weakest and best candidate
    # (retrieval.vectorSpread, on since 24 November 2026), at several vector weights
    "before_spread": (
        {"retrieval.vectorSpread": "false", "retrieval.vectorWeight": "0.5", "retrieval.feedbackWeight": "0"},
        {},
    ),
    "spread_vw50": ({"retrieval.vectorWeight": "0.5"}, {}),
    "spread_vw70": ({"retrieval.vectorWeight": "0.7"}, {}),
    "spread_vw100": ({"retrieval.vectorWeight": "1.0"}, {}),
}
# query feedback from the best candidates' vectors (retrieval.feedbackWeight, 0.4 with depth 5 since
# 24 November 2026; pseudo-relevance feedback), at several weights and depths
VARIANTS["no_feedback"] = ({"retrieval.feedbackWeight": "0"}, {})
VARIANTS.update(
    {
        f"feedback{round(100 * weight)}_d{depth}": (
            {"retrieval.feedbackWeight": str(weight), "retrieval.feedbackDepth": str(depth)},
            {},
        )
        for weight in (0.15, 0.25, 0.4, 0.6)
        for depth in (3, 5, 10)
    }
)
VARIANTS["feedback40_d5_pull2"] = (
    {"retrieval.feedbackWeight": "0.4", "retrieval.feedbackDepth": "5", "retrieval.feedbackPull": "2"},
    {},
)
VARIANTS["feedback40_d5_pull05"] = (
    {"retrieval.feedbackWeight": "0.4", "retrieval.feedbackDepth": "5", "retrieval.feedbackPull": "0.5"},
    {},
)
# what a session's candidates cover of the request together (retrieval.sessionCoverage, 0.25 since
# 24 November 2026), at several weights
VARIANTS["no_coverage"] = ({"retrieval.sessionCoverage": "0"}, {})
VARIANTS.update({f"coverage{round(100 * w)}": ({"retrieval.sessionCoverage": str(w)}, {}) for w in (0.1, 0.5, 1.0)})
# keyword feedback from the best candidates' words (retrieval.termFeedbackWeight; RM3-style, a second
# BM25 query): "terms{weight}_d{depth}_n{words}"
VARIANTS.update(
    {
        f"terms{round(100 * weight)}_d{depth}_n{words}": (
            {
                "retrieval.termFeedbackWeight": str(weight),
                "retrieval.termFeedbackDepth": str(depth),
                "retrieval.termFeedbackTerms": str(words),
            },
            {},
        )
        for weight in (0.1, 0.2, 0.35, 0.5)
        for depth in (3, 5)
        for words in (5, 10, 20)
    }
)
# candidate depth: each list's candidates (retrieval.vectorSearchLimit, keywordSearchLimit; 50 by default)
VARIANTS.update(
    {
        f"depth{n}": ({"retrieval.vectorSearchLimit": str(n), "retrieval.keywordSearchLimit": str(n)}, {})
        for n in (100, 200)
    }
)
# what the whole session says of the request, every chunk and not only the candidates, read as BM25
# with the session as the document (retrieval.sessionWords, off), beside the candidates' coverage or
# instead of it (*_only), and over fewer sessions (_d15)
VARIANTS.update({f"bm25s{round(100 * w)}": ({"retrieval.sessionWords": str(w)}, {}) for w in (0.25, 0.5, 1.0)})
VARIANTS["no_bm25s"] = ({"retrieval.sessionWords": "0"}, {})  # the default before sessionWords was on
VARIANTS["bm25s50_only"] = ({"retrieval.sessionWords": "0.5", "retrieval.sessionCoverage": "0"}, {})
VARIANTS["bm25s50_d15"] = ({"retrieval.sessionWords": "0.5", "retrieval.sessionWordsDepth": "15"}, {})
# a chunk that calls an editing tool (Edit, Write, apply_patch: retrieval.workTools) counts more
# (retrieval.workEvidence, 0.1 since 25 November 2026): the session changed files there, it did not
# only talk about them; no_work: the default before
VARIANTS["no_work"] = ({"retrieval.workEvidence": "0"}, {})
VARIANTS.update(
    {f"work{round(100 * w)}": ({"retrieval.workEvidence": str(w)}, {}) for w in (0.05, 0.1, 0.15, 0.25, 0.5)}
)
# talk after the work began counts less (retrieval.talkPenalty, 0.25 since 25 November 2026): a later part
# of a turn that calls no tool (the agent's report, summary or explanation), or a chunk of an agent that
# retells the conversation (retrieval.retellingAgents: Claude Code's compaction); no_talk: the default
# before; talk25_parts: later parts only (a compaction summary's opening chunk not counted)
VARIANTS["no_talk"] = ({"retrieval.talkPenalty": "0"}, {})
VARIANTS.update(
    {f"talk{round(100 * w)}": ({"retrieval.talkPenalty": str(w)}, {}) for w in (0.1, 0.15, 0.25, 0.35, 0.5)}
)
VARIANTS["talk25_parts"] = ({"retrieval.talkPenalty": "0.25", "retrieval.retellingAgents": ()}, {})
