"""Offline cluster labels: a few distinctive terms per cluster, by class-based TF-IDF.

Each cluster's member texts form one class. A term scores by how many of the cluster's texts use it
(each text counts once, so one chunk repeating a word cannot name a cluster) times an inverse
frequency over all classes, ``log(1 + average class size / term frequency across classes)``
(c-TF-IDF as in BERTopic). Texts outside any cluster may be passed as a background class: they make
common words less distinctive but get no label themselves. :func:`steady_label` keeps a continuing
topic's name while it still fits; :func:`distinct_labels` gives no two topics one name.

The tokeniser keeps code identifiers whole (``cluster_vectors``, ``minClusterSize``, ``config.py``)
and drops what names nothing: stop words and agent filler, rendering markers (``[User]``,
``[Tool:Bash]``), a long listing's permissions, owner and group, uuids, hex hashes, numbers and
random-looking ids, the folders a path passes through that only say where code sits (``/tmp/``,
``~/projects/``, ``node_modules/``) and a word cut short by truncation. A text that uses a word only
inside a path's folders or a branch name (``.worktrees/alex/ent-108-add-ai-summaries/``), or only as
a shell command's program or option (``cd``, ``git``, ``-la``), counts :data:`PATH_ONLY_SHARE` of a
text for it: the texts' prose or a file name (``ShareLinksPage.tsx``) names the topic when it can. The
status line Claude Code's own tools answer with ("The file … has been updated. Here's the result of
running `cat -n` on a snippet of the edited file:", "Todos have been modified successfully…") is no
text of the topic's. LLM-written names are not here.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence
from functools import cache, lru_cache
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

DEFAULT_TERMS = 3
STEADY_SHARE = 0.5  # a continuing topic keeps its label while its terms score this share of a fresh label's
STEADY_TERMS = 20  # the terms scored to judge whether a continuing topic's label still fits it
# A text that uses a word only in a path's folders or a branch name counts this share of a text for
# it: "alex, ent, summaries" named a topic from ".worktrees/alex/ent-108-add-ai-summaries/" in
# every tool call's path, while its prose said "summarize, explain" (docs/measurements.md).
PATH_ONLY_SHARE = 0.1

_MARKER = re.compile(r"\[[A-Za-z][\w -]{0,30}(?::[^\]\n]{0,80})?\](?!\()")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_URL_SCHEME = re.compile(r"\b[a-z][a-z0-9+.-]*://")
# A token starts at a letter or underscore that does not continue a number or a word ("0x1f",
# "3rd" give nothing), and may carry dotted parts ("config.py", "np.ndarray").
_TOKEN = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*")
_CAMEL_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_HEX = re.compile(r"[0-9a-f]{7,}")
_DIGIT = re.compile(r"[0-9]")
_ALNUM_RUN = re.compile(r"[0-9]+|[a-z]+")
# A home folder and the user name in it name nobody's topic: /home/alex/, /Users/alex/, C:\Users\alex\.
_HOME = re.compile(r"(?:/home|/Users|[A-Za-z]:\\Users)[/\\][^/\\\s]+")
# Folders that say where code sits, not what it is about, when a path passes through them
# ("/tmp/", "node_modules/", "~/projects/"): dropped there; the same word in prose stays.
_LAYOUT_FOLDER = re.compile(
    r"(?<![\w.-])(?:projects?|repos?|repositories|src|lib|tmp|temp|var|usr|opt|etc|bin|node_modules|vendor|"
    r"dist|build|public|workspaces?|worktrees|Documents|Desktop|Downloads|code|dev|git|site-packages|venv|"
    r"\.venv|packages|pkg|internal|home|Users)(?=[/\\])",
    re.IGNORECASE,
)
# A long listing's line ("drwxr-xr-x  5 alex  staff  160 Sep  3 …"): its permissions, owner, group, size
# and date name no topic; they labelled one "drwxr, staff, xr" among five real projects.
_LISTING = re.compile(r"(?<!\S)[-dlcbps][-rwxsStT]{9}[@+.]?(?:\s+\d+\s+\S+\s+\S+(?:\s+\d+\s+[A-Z][a-z]{2}\s+\d+)?)?")
# A word cut short where a long text was shortened ("This ma …[truncated]"): half a word names nothing.
_CUT_WORD = re.compile(r"\S*\s?…\[truncated\]")
# A run of path characters with a separator in it: a path, a branch ("alex/ent-108-add-ai-summaries"),
# a web address's path, or prose ("and/or"); :func:`_folder_spans` tells which.
_SLASHED = re.compile(r"[\w.@~+-]*(?:[/\\][\w.@~+-]*)+")
_SEPARATOR = re.compile(r"[/\\]")
# A branch's slug in a path: three hyphenated words or more ("feature/add-dark-mode"); anywhere, a
# ticket key and words ("ent-108-add-ai-summaries").
_BRANCH_SLUG = re.compile(r"[\w.]+-[\w.]+-[\w.-]+")
_TICKET_BRANCH = re.compile(r"(?<![\w.-])[A-Za-z]+-[0-9]+(?:-[A-Za-z0-9]+)+(?![\w-])")
_PATH_MARK = "/"  # prefixes a term met in a path's folders, a branch or a command's program (never starts a real term)
# A shell tool's call line (Claude Code's Bash, Codex CLI's shell and exec_command, Gemini CLI's
# run_shell_command, Cursor's run_terminal_cmd): its programs and options say how, not what ("cd,
# develop, worktree" named a topic of one project's HTML export, every command a `cd` into a worktree).
_COMMAND_LINE = re.compile(
    r"^\[Tool:(?:Bash|shell|local_shell|exec_command|shell_command|run_shell_command|run_terminal_cmd)\] ?(.*)$",
    re.MULTILINE,
)
# Where a command line names a program: its start, after a separator, a pipe or a substitution's
# opening, and after a program that runs another (`sudo`, `xargs`), past variable assignments
# (`FOO=1 make`). A subshell's bare "(" is left out: "fix(export)" in a commit message is no program.
_PROGRAM = re.compile(
    r"(?:^|&&|\|\||[;|`]|\$\(|(?<=sudo )|(?<=env )|(?<=time )|(?<=exec )|(?<=nohup )|(?<=xargs )|(?<=command ))"
    r"\s*(?:[A-Za-z_]\w*=\S*\s+)*(?P<program>[A-Za-z_./~][\w./~+-]*)"
)
_OPTION = re.compile(r"(?<!\S)--?[A-Za-z][\w-]*")
# The first line of a result of Claude Code's own editing and bookkeeping tools, and Glob's and Grep's
# empty or counting answers: the same words in every session, whatever it was about.
_STATUS_LINE = re.compile(
    r"^\[(?:Result|Error):(?:Edit|MultiEdit|Write|NotebookEdit|TodoWrite|TaskUpdate|TaskCreate)\][^\n]*"
    r"|^\[Result:(?:Glob|Grep)\] (?:No files found|No matches found|Found \d+ files?)\b",
    re.MULTILINE,
)
_FILE_EXTENSIONS = frozenset(
    "py pyi ipynb js mjs cjs jsx ts tsx json jsonl toml yaml yml md rst txt csv tsv ini cfg conf env "
    "lock sql db sh bash zsh fish ps1 rs go java kt kts swift c h cc cpp hpp cs rb php lua ex exs erl "
    "hs ml scala clj dart vue svelte html htm css scss less xml svg proto graphql tf mk cmake gradle "
    "dockerfile log diff patch".split()
)
_TOP_LEVEL_DOMAINS = frozenset("com org net io ly me dev ai app co uk de sh gg so to pm us eu".split())
_MAX_TOKEN_CHARS = 40

_EXTRA_STOP_WORDS = frozenset(
    """
    let ll ve re don didn doesn isn wasn aren won shouldn couldn wouldn hasn haven okay ok sure yes
    yeah thanks thank please need needs want wants like just now going look looks looking check
    checking also make makes making use uses using used got get gets getting good great right know
    think way thing things here there let's ready done actually really maybe probably instead
    user assistant thinking tool result results truncated redacted eof
    did does doing say says said various
    successfully ensure proceed applicable continue
    http https www com org io html
    true false none null nil undefined self cls this def return returns import from const var
    function func fn class else elif str int bool float string number object void new
    div span li ul ol br td tr th href endif endfor nbsp amp quot lt gt
    """.split()
)


def tokenize(text: str) -> list[str]:
    """The label-worthy terms of ``text``, in order, repeats kept.

    Plain words are lower-cased; identifiers keep their spelling. Dotted names are kept whole only
    when they end in a file extension (``labels.py``); otherwise they split into their parts.
    """
    return [term.removeprefix(_PATH_MARK) for term in _marked_terms(text)]


def _marked_terms(text: str) -> list[str]:
    """:func:`tokenize`'s terms, those met in a path's folders, a branch name or as a command's program
    or option marked with :data:`_PATH_MARK` in front (a command's after the others)."""
    text = _STATUS_LINE.sub(" ", text)
    text, commands = _without_programs(text)
    text = _CUT_WORD.sub(" ", text)
    text = _LISTING.sub(" ", text)
    text = _MARKER.sub(" ", text)
    text = _UUID.sub(" ", text)
    text = _URL_SCHEME.sub(" ", text)
    text = _HOME.sub(" ", text)
    text = _LAYOUT_FOLDER.sub(" ", text)
    spans = _folder_spans(text)
    out: list[str] = []
    span = 0
    for match in _TOKEN.finditer(text):
        start = match.start()
        while span < len(spans) and spans[span][1] <= start:
            span += 1
        terms = _terms_of(match.group())
        if span < len(spans) and spans[span][0] <= start:
            terms = tuple(_PATH_MARK + term for term in terms)
        out += terms
    return out + [_PATH_MARK + term for word in commands for term in _terms_of(word)]


def _without_programs(text: str) -> tuple[str, list[str]]:
    """``text`` without the programs and options its shell command lines name, and those words."""
    words: list[str] = []

    def blank(option: re.Match[str]) -> str:
        words.append(option.group().lstrip("-"))
        return " " * len(option.group())

    def command(line: re.Match[str]) -> str:
        found = _OPTION.sub(blank, line.group(1))
        # Each program's name: the last part of a path (`./node_modules/.bin/vitest` is vitest).
        ends = [m.span("program") for m in _PROGRAM.finditer(found)]
        for start, end in reversed(ends):
            program = found[start:end]
            name = program.rstrip("/").rsplit("/", 1)[-1]
            words.append(name)
            found = found[:start] + " " * len(program) + found[end:]
        return line.group()[: line.start(1) - line.start()] + found

    return _COMMAND_LINE.sub(command, text), words


def _folder_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` names folders or a branch, in order: a path's folders (its file name stays
    outside), or all of a branch name. A run with one separator and no file name or slug ("and/or",
    "input/output") is prose."""
    spans: list[tuple[int, int]] = []
    for match in _SLASHED.finditer(text):
        run = match.group()
        segments = _SEPARATOR.split(run)
        last = segments[-1]
        if _is_file_name(last):
            spans.append((match.start(), match.end() - len(last)))
        elif run[0] in "/\\~." or len(segments) > 2 or not last or any(map(_BRANCH_SLUG.fullmatch, segments)):
            spans.append(match.span())
    # a bare branch name: "git checkout ent-108-add-ai-summaries"
    spans += [match.span() for match in _TICKET_BRANCH.finditer(text)]
    return sorted(spans)


def scored_terms(
    texts_by_cluster: Mapping[K, Sequence[str]],
    *,
    terms: int = DEFAULT_TERMS,
    background: Sequence[str] = (),
) -> dict[K, list[tuple[str, float]]]:
    """The ``terms`` most distinctive terms of each cluster with their scores, best first (fewer when its
    texts have fewer)."""
    if not texts_by_cluster:  # no topics (an empty memory): not worth the second of importing sklearn
        return {}
    import numpy as np
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import CountVectorizer

    keys = list(texts_by_cluster)
    docs: list[str] = []
    owner: list[int] = []
    for index, key in enumerate(keys):
        docs.extend(texts_by_cluster[key])
        owner.extend([index] * len(texts_by_cluster[key]))
    docs.extend(background)
    owner.extend([len(keys)] * len(background))
    result: dict[K, list[tuple[str, float]]] = {key: [] for key in keys}
    if not keys or not docs:
        return result

    vectorizer = CountVectorizer(tokenizer=_marked_terms, lowercase=False, token_pattern=None, binary=True)
    try:
        marked_terms = vectorizer.fit_transform(docs)
    except ValueError:  # Trigger: no text has a single term. Outcome: no cluster gets a label.
        return result
    # Each term met in prose ("cli") and in paths ("/cli") is one column of the texts' terms; its prose
    # column alone says which clusters use it outside paths.
    marked = vectorizer.get_feature_names_out()
    plain = np.array([term.removeprefix(_PATH_MARK) for term in marked.tolist()], dtype=object)
    vocabulary, column = np.unique(plain, return_inverse=True)
    merge = sp.csr_matrix(
        (np.ones(len(marked)), (np.arange(len(marked)), column)), shape=(len(marked), len(vocabulary))
    )
    doc_terms = (marked_terms @ merge).sign().tocsr()
    prose_column = np.array([not term.startswith(_PATH_MARK) for term in marked.tolist()], dtype=float)
    prose_terms = (marked_terms @ sp.diags(prose_column) @ merge).sign().tocsr()

    # Class-by-term counts (how many of a class's texts use each term), kept sparse: thousands of
    # clusters times a vocabulary of 100,000 terms would not fit in memory as a dense matrix.
    rows = np.asarray(owner)
    membership = sp.csr_matrix((np.ones(len(owner)), (rows, np.arange(len(owner)))), shape=(len(keys) + 1, len(docs)))
    counts = (membership @ doc_terms).tocsr()
    prose_counts = (membership @ prose_terms).tocsr()
    class_sizes = np.asarray(counts.sum(axis=1)).ravel()
    average_size = class_sizes[class_sizes > 0].mean()
    idf = np.log1p(average_size / np.maximum(np.asarray(counts.sum(axis=0)).ravel(), 1.0))
    n_docs = np.bincount(rows, minlength=len(keys) + 1)

    for index, key in enumerate(keys):
        row = slice(counts.indptr[index], counts.indptr[index + 1])
        term_ids, used = counts.indices[row], counts.data[row]
        # A text that uses the term only in paths counts PATH_ONLY_SHARE of a text.
        used_in_prose = prose_counts[index, term_ids].toarray().ravel()
        weighted = used_in_prose + PATH_ONLY_SHARE * (used - used_in_prose)
        scores = weighted / max(class_sizes[index], 1.0) * idf[term_ids]
        # A term must recur in two of the cluster's texts (when it has two) to name it.
        eligible = np.flatnonzero(used >= min(2, n_docs[index]))
        # Best score first; ties in alphabetical order, so labels do not depend on dict order.
        ranked = sorted(eligible.tolist(), key=lambda i: (-scores[i], vocabulary[term_ids[i]]))
        chosen: list[tuple[str, float]] = []
        for i in ranked:
            term = str(vocabulary[term_ids[i]])
            if not any(_same_term(term, c) for c, _ in chosen):
                chosen.append((term, float(scores[i])))
                if len(chosen) == terms:
                    break
        result[key] = chosen
    return result


def steady_label(previous: str, scored: Sequence[tuple[str, float]], *, terms: int = DEFAULT_TERMS) -> str:
    """The label of a topic that continues one labelled ``previous``: that label while each of its
    terms still scores at least :data:`STEADY_SHARE` of the score of the fresh label's last term
    (``scored``: the topic's terms now, best first), else the fresh label (its best ``terms``).

    Term scores shift whenever other topics come or go (a term's inverse frequency is over all
    topics, and ties among terms every member uses are common), so a topic whose members did not
    change would otherwise be renamed by other topics' news: after one project's sessions were added
    to 2,262 chunks, 34 of 66 continuing topics got a new label, 15 of them with the very same
    members (docs/measurements.md, "Topic labels").
    """
    fresh = [term for term, _ in scored[:terms]]
    kept = [t for t in previous.split(", ") if t]
    if kept and fresh:
        now = dict(scored)
        bar = STEADY_SHARE * scored[len(fresh) - 1][1]
        if all(now.get(t, -1.0) >= bar for t in kept):
            return previous
    return ", ".join(fresh)


def distinct_labels(
    names: Mapping[K, str],
    scored: Mapping[K, Sequence[tuple[str, float]]],
    order: Sequence[K],
    *,
    terms: int = DEFAULT_TERMS,
) -> dict[K, str]:
    """``names`` with no two topics under one label: going through topics in ``order`` (the largest
    first), a topic whose label an earlier topic already bears is named by its best term and its
    next best terms that are not in that label (``scored``: its terms, best first); it keeps the label
    when it has no other terms. Two topics of one subject (the same session's chunks told twice, a
    sub-agent's) get the same best terms, and were listed as two topics of one name: "enabled, maps,
    telemetry" twice among 30 topics of five real projects (benchmarks/topics.py)."""
    taken: set[str] = set()
    out: dict[K, str] = {}
    for key in order:
        name = names[key]
        if name in taken:
            clash = set(name.split(", "))
            best = [term for term, _ in scored[key][:1]]
            others = [term for term, _ in scored[key][1:] if term not in clash]
            fresh = ", ".join([*best, *others][:terms])
            if others and fresh not in taken:
                name = fresh
        taken.add(name)
        out[key] = name
    return out


@lru_cache(maxsize=1 << 16)
def _terms_of(token: str) -> tuple[str, ...]:
    """The terms of one regex token (cached: tokens repeat a lot)."""
    parts = [token] if _is_file_name(token) else _dotted_parts(token)
    return tuple(term for term in map(_term, parts) if term is not None)


def _dotted_parts(token: str) -> list[str]:
    """``np.linalg.norm`` -> its parts; a web address loses its top-level domain (``pris.ly``)."""
    parts = token.split(".")
    if len(parts) > 1 and parts[-1].lower() in _TOP_LEVEL_DOMAINS:
        parts.pop()
    return parts


def _is_file_name(token: str) -> bool:
    stem, dot, extension = token.rpartition(".")
    return bool(dot) and bool(stem) and "." not in stem and extension.lower() in _FILE_EXTENSIONS


def _term(token: str) -> str | None:
    """The term for one part of a token, or None when it names nothing."""
    core = token.strip("_") if not token.startswith("__") else token
    if len(core) < 2 or len(core) > _MAX_TOKEN_CHARS:
        return None
    lower = core.lower()
    if lower in _stop_words():
        return None
    stem = lower.rsplit(".", 1)[0]
    if _DIGIT.search(stem):
        if _HEX.fullmatch(stem):  # commit ids, content hashes
            return None
        runs = _ALNUM_RUN.findall(stem)
        if sum(len(r) for r in runs if r[0].isdigit()) >= 4 or len(runs) >= 4:
            return None  # request ids, tool-use ids, base64 runs: many digits, or a1b2-like
    if sum(ch.isalpha() for ch in core) < 2:
        return None
    if "_" not in core and "." not in core and len(core) >= 10 and _mean_word_length(core) < 3:
        return None  # random mixed-case strings such as api keys or blob ids
    plain = core.isalpha() and (core.islower() or core.isupper() or core.istitle())
    return lower if plain else core


def _mean_word_length(token: str) -> float:
    """Mean length of the camelCase words of a token: short for random strings ("xKq9TzWv")."""
    words = _CAMEL_WORD.findall(token)
    return sum(map(len, words)) / len(words) if words else 0.0


def _same_term(a: str, b: str) -> bool:
    """Spellings of one term: case, a plural "s", or a file named after it ("readme", "README.md")."""
    a, b = _bare(a), _bare(b)
    return a == b or a == b + "s" or b == a + "s"


def _bare(term: str) -> str:
    term = term.lower()
    return term.rpartition(".")[0] if _is_file_name(term) else term


@cache
def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | _EXTRA_STOP_WORDS
