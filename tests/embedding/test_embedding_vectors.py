"""The shipped model end to end: shapes, determinism, meaning, and long texts (no mocks)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from causantic.embedding import MAX_WINDOWS_PER_DOCUMENT, Embedder, load_embedder
from causantic.embedding.embedder import WINDOW_OVERLAP, plan_windows

TEXTS = [
    "The tests fail because the fixture opens the database before the migration runs.",
    "def parse_line(line: str) -> dict: return json.loads(line)",
    "npm ERR! peer dep missing: react@^18.0.0",
    "",
]


def test_document_vectors_are_unit_length_float32_rows(embedder: Embedder) -> None:
    vectors = embedder.embed_documents(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) == (len(TEXTS), embedder.dims)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_query_is_one_unit_vector(embedder: Embedder) -> None:
    vector = embedder.embed_query("why does the migration fail")
    assert vector.shape == (384,) and vector.dtype == np.float32
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_no_texts_give_an_empty_matrix(embedder: Embedder) -> None:
    assert embedder.embed_documents([]).shape == (0, 384)


def test_embedding_the_same_texts_twice_gives_identical_vectors(embedder: Embedder) -> None:
    assert np.array_equal(embedder.embed_documents(TEXTS), embedder.embed_documents(TEXTS))
    assert np.array_equal(embedder.embed_query("flaky test"), embedder.embed_query("flaky test"))


def test_with_batch_size_one_a_vector_depends_on_its_text_alone() -> None:
    # The int8 graph quantises activations with one scale per batch, so with larger batches a text's
    # vector moves slightly with its batch-mates; one window per run removes that.
    single = load_embedder(batch_size=1)
    together = single.embed_documents(TEXTS)
    alone = np.stack([single.embed_documents([text])[0] for text in TEXTS])
    assert np.array_equal(together, alone)
    assert np.array_equal(single.embed_documents([TEXTS[0]])[0], single.embed_query(TEXTS[0]))


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(embedder: Embedder) -> None:
    query = embedder.embed_query("How do I stop the database from saying it is locked?")
    docs = embedder.embed_documents(
        [
            "Set busy_timeout so parallel writers wait for the SQLite lock instead of failing.",
            "She planted tomatoes, basil and peppers in the raised bed behind the house.",
            "Our quarterly revenue grew twelve percent, driven by the enterprise tier.",
        ]
    )
    scores = docs @ query
    assert scores[0] > scores[1] + 0.2 and scores[0] > scores[2] + 0.2


def test_a_fact_only_in_the_tail_of_a_long_text_still_reaches_its_vector(embedder: Embedder) -> None:
    head = " ".join(
        f"Step {i}: the CSS grid layout of the settings page was adjusted so the sidebar keeps its width."
        for i in range(20)
    )
    assert embedder.count_tokens(head) > 300  # the fact below lies past the first 256 word pieces
    fact = "Finally, the Postgres connection pool was exhausted because workers leaked database sessions."
    neutral = "Finally, the colour of the sidebar border was changed to a lighter grey in the settings page."
    query = embedder.embed_query("why was the postgres connection pool exhausted")
    with_fact, without_fact = embedder.embed_documents([f"{head} {fact}", f"{head} {neutral}"])
    assert float(with_fact @ query) > float(without_fact @ query) + 0.05
    # Cut to one window, as a query is, the two texts would be the same vector: the fact unseen.
    assert np.array_equal(embedder.embed_query(f"{head} {fact}"), embedder.embed_query(f"{head} {neutral}"))


def test_count_tokens_counts_word_pieces_without_special_tokens(embedder: Embedder) -> None:
    assert embedder.count_tokens("") == 0
    assert embedder.count_tokens("hello world") == 2
    assert embedder.count_tokens("snake_case_identifier") > 3


@given(n=st.integers(0, 5000), size=st.integers(64, 600))
def test_windows_are_few_equal_bounded_and_span_the_text(n: int, size: int) -> None:
    windows = plan_windows(n, size)
    assert 1 <= len(windows) <= MAX_WINDOWS_PER_DOCUMENT
    assert windows[0][0] == 0 and windows[-1][1] == n
    assert len({end - start for start, end in windows}) == 1
    assert all(0 < end - start <= size for start, end in windows) or n == 0
    gaps = [nxt[0] - cur[1] for cur, nxt in zip(windows, windows[1:], strict=False)]
    if n <= MAX_WINDOWS_PER_DOCUMENT * (size - WINDOW_OVERLAP) + WINDOW_OVERLAP:
        assert all(gap <= -WINDOW_OVERLAP for gap in gaps)  # every piece seen, neighbours overlap


@pytest.mark.parametrize(("n", "expected"), [(10, [(0, 10)]), (254, [(0, 254)]), (300, [(0, 166), (134, 300)])])
def test_a_short_text_is_one_window_and_a_chunk_is_two(n: int, expected: list[tuple[int, int]]) -> None:
    assert plan_windows(n, 254) == expected


def test_the_optimised_graph_is_cached_and_gives_the_same_vectors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from causantic.embedding.models import get_spec, locate

    spec = get_spec("all-minilm-l6-v2")
    uncached = Embedder(spec, locate(spec), batch_size=1).embed_documents(TEXTS)
    first = Embedder(spec, locate(spec), batch_size=1, cache_dir=tmp_path)
    assert np.array_equal(first.embed_documents(TEXTS), uncached)
    cached = list(tmp_path.glob("all-minilm-l6-v2-*.onnx"))
    assert len(cached) == 1 and (cached[0].stat().st_mode & 0o777) == 0o600
    assert np.array_equal(
        Embedder(spec, locate(spec), batch_size=1, cache_dir=tmp_path).embed_documents(TEXTS), uncached
    )
    cached[0].write_bytes(b"not a model")  # a damaged cache is replaced, never an error
    assert np.array_equal(
        Embedder(spec, locate(spec), batch_size=1, cache_dir=tmp_path).embed_documents(TEXTS), uncached
    )
    assert cached[0].stat().st_size > 1_000_000


def test_a_document_word_piece_cap_reads_only_the_start_of_a_long_text(embedder: Embedder) -> None:
    from causantic.embedding.models import get_spec, locate

    spec = get_spec("all-minilm-l6-v2")
    capped = Embedder(spec, locate(spec), batch_size=1, max_windows=1, document_word_pieces=64)
    start = "The migration fails because the fixture opens the database too early. " * 8  # > 64 word pieces
    long_text = start + "Unrelated closing words about lunch and the weather. " * 40
    same = capped.embed_documents([long_text, start + "Something else entirely about cooking. " * 40])
    assert float(same[0] @ same[1]) > 0.999  # only the shared start was read
    full = embedder.embed_documents([long_text, start + "Something else entirely about cooking. " * 40])
    assert float(full[0] @ full[1]) < float(same[0] @ same[1])
