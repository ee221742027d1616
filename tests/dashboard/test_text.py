"""How chunk text reaches a page: split into what was said and done, escaped, matches marked."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from causantic.dashboard.text import gist, highlight, names_linked, project_href, sections, short_time, time_span
from causantic.retrieval.browse import title_of
from causantic.retrieval.relevance import marked_terms

CHUNK = """[User]
why does the login loop on Safari?

[Assistant]
Let me look at the cookie settings.

[Tool:Bash] grep -rn SameSite src/

[Result:Bash] src/auth.py:12: samesite="None"

src/auth.py:40: secure=False

[Assistant]
The cookie is not Secure, so Safari drops it."""


def test_a_chunk_splits_into_prompt_answer_tool_call_and_folded_result() -> None:
    parts = sections(CHUNK)
    assert [(p.kind, p.label) for p in parts] == [
        ("user", "User"),
        ("assistant", "Assistant"),
        ("tool", "Bash"),
        ("result", "Bash"),
        ("assistant", "Assistant"),
    ]
    assert parts[2].text == "grep -rn SameSite src/"
    assert "secure=False" in parts[3].text, "a blank line inside a tool result does not end it"
    assert gist(CHUNK) == "User: why does the login loop on Safari?"


def test_html_in_a_chunk_is_shown_as_text_and_matches_are_marked() -> None:
    shown = str(highlight('<script>alert("x")</script> the Login loop', marked_terms("login <script>")))
    assert "<script>" not in shown
    assert "&lt;<mark>script</mark>&gt;" in shown
    assert "<mark>Login</mark>" in shown


@given(st.text(), st.text())
def test_highlighting_never_lets_markup_through(text: str, query: str) -> None:
    shown = str(highlight(text, marked_terms(query)))
    assert re.sub(r"</?mark>", "", shown).count("<") == 0
    assert (
        re.sub(r"</?mark>", "", shown)
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#34;", '"')
        .replace("&#39;", "'")
        .replace("&amp;", "&")
        == text
    )


def test_a_session_is_titled_by_its_first_prompt_on_one_line() -> None:
    assert title_of(CHUNK) == "why does the login loop on Safari?"
    long = "[User]\n" + "word " * 60 + "\n\n[Assistant]\nok"
    assert title_of(long).endswith("…") and len(title_of(long)) <= 141
    assert title_of("[Assistant]\nhello") == "(no prompt)"
    assert title_of(None) == "(no prompt)"


def test_only_meaningful_words_are_marked_and_only_where_a_word_starts() -> None:
    shown = str(highlight("There the other tests failed", marked_terms("why did the tests fail")))
    assert shown == "There the other <mark>tests</mark> <mark>fail</mark>ed"


def test_a_time_or_span_on_a_page_says_utc_and_a_date_only_when_it_changes() -> None:
    assert short_time("2026-05-01T10:20:30.000000Z") == "2026-05-01 10:20 UTC"
    assert short_time(None) == "–"
    assert time_span("2026-05-01T10:20:30Z", "2026-05-01T11:05:00Z") == "2026-05-01 10:20 – 11:05 UTC"
    assert time_span("2026-05-01T23:50:00Z", "2026-05-02T00:10:00Z") == "2026-05-01 23:50 – 2026-05-02 00:10 UTC"
    assert time_span("2026-05-01T10:20:30Z", "2026-05-01T11:05:00Z", with_date=False) == "10:20 – 11:05 UTC"
    assert time_span("2026-05-01T10:20:30Z", "2026-05-01T10:20:59Z") == "2026-05-01 10:20 UTC"


def test_a_long_known_list_links_each_name_and_its_rest_to_the_projects_page() -> None:
    said = "No project named 'x<y' in memory (known: a&b, c and 7 more; list-projects shows each with its path)."
    shown = names_linked(said, (), ("a&b", "c"), project_href)
    assert str(shown) == (
        'No project named &#39;x&lt;y&#39; in memory (known: <a href="/project?name=a%26b">a&amp;b</a>, '
        '<a href="/project?name=c">c</a> and <a href="/projects">7 more</a>; list-projects shows each with its path).'
    )
