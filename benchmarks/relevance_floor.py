"""The relevance floor: does memory say "nothing relevant" when it should, and only then?

Usage::

    python benchmarks/relevance_floor.py [--work DIR] [--large HOME [--large-only]] [--json OUT] [--fit] [--keyword]
        [--split FOLDS [--seed N]] [--set key=value ...]

Stores, built through the product's real ingestion (``--work DIR`` keeps them for reruns): the coding
project of ``../shared/benchdata/coding`` (``corpus/claude-code/entireio__cli``) and each LoCoMo
development conversation, converted as ``benchmarks/locomo.py`` does, in its ``--keep`` layout
(``homes/NNN-conv-ID``; the coding store in ``coding``), so stores it kept serve here too.

- **Answerable**: the coding queries against the coding store, the LoCoMo questions against their
  conversation. A hit is *relevant* when it is a chunk of the session that made the commit (coding)
  or a chunk holding an evidence turn (LoCoMo). A question is *lost* when search without a floor
  returned a relevant hit in its first ten results and search with the floor returns none.
- **Unanswerable** (at least 200): gibberish, questions from other walks of life, terse requests and
  other languages, and questions about software projects memory never saw, each asked of the coding
  store and of one LoCoMo conversation; a *false answer* is any hit at all.

Printed for main's relevance settings (``BASELINE``, measured in the same run) and for the configured
ones, over the hits a person sees (above the floor): the share printed as "100%", the share of
questions with two or more hits at "100%", the AUC of the figure (a relevant hit against the
question's other hits, and against hits of unanswerable questions), the calibration error (how far
the figure is from how often such hits are relevant) and the floor's outcomes (false answers,
answerable questions lost or silenced); the same for the settings before the query's nearest chunk
counted (``BEFORE_NEAREST``: a hit clears the floor only when the query's nearest chunk in memory is
near, ``relevance.nearestCosine``, or the hit holds much of the query, see
:func:`causantic.retrieval.relevance.clears_floor`) and without the exception for a query in memory's
own words (``WITHOUT_KNOWN``, ``relevance.knownChunks``); then the configured model's outcomes at
other floors.

``--large HOME`` (repeatable) also asks a large store (``/work/bench-stores/coding-dist``'s kind:
the coding project among the whole corpus, or among a few other projects) the coding questions, those
mined from the corpus's own commits (``coding.py --mined``; sessions the store lacks are dropped) and
off-topic ones: ``EVERYDAY`` (a developer's working life, written before any result was seen) and
``OTHER_DOMAINS``, plus ``UNKNOWN_PROJECTS`` and ``OTHER_STACKS`` (other stacks: "stacks" and
"agents") and a sample of the LoCoMo development
questions (a store of the wrong kind); printed for the same three settings. Then the asker's working
directory (``retrieval.hereBoost``): each coding question asked without a project filter, as the CLI
and MCP server do, from the project of the session that made the commit (``here``) and, beside, from
an unrelated project of the store (``elsewhere``): how often the first hit is of another project than
the asker's, and the right session's R@5 and MRR, with the working directory unknown, at
``hereBoost`` 0 and as configured.

``--fit`` refits the relevance model (:mod:`causantic.retrieval.relevance`, see :func:`fit`) on the
hits of a floorless search and prints the coefficients for ``relevance.*`` in ``config.py``;
``--rescale`` keeps the configured model's direction and refits its scale only, mapping the floor so
it keeps the same hits (how the defaults were made from main's: ``--rescale --set`` each of
``BASELINE``).
``--split FOLDS`` scores the rule's settings on questions they were not chosen on: each question set is
dealt into folds (:func:`folds_of`, ``--seed``), and each setting of a grid (``relevance.nearestCosine`` on
the development stores; ``relevance.largeNearestCosine`` and two gates on a large store) is chosen on all
folds but one and counted on that one (:func:`held_out`), beside the configured rule.
``--keyword`` also asks every development question in keyword mode (``mode="keyword"``) and prints
that mode's false answers and answerable questions lost (:func:`keyword_floor`).
Goals: no ordinary hit at "100%", false answers ≤ 5%, answerable lost ≤ 2%.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coding import CORPUS, DEFAULT_QUERIES, PROJECT_FOLDER, build_store, load_queries, mined_queries  # noqa: E402
from locomo import Conversation, DatasetStats, parse_conversation, parse_questions, safe_name, write_sessions  # noqa: E402

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "benchdata" / "locomo" / "locomo10-dev.json"
LIMIT = 10
LOCOMO_SAMPLE = 100  # LoCoMo development questions asked of the large coding store (the wrong kind of store)

OTHER_DOMAINS = """\
What temperature should I bake sourdough bread at for a crispy crust?
How long do I boil an egg for a runny yolk?
Which wine goes best with grilled salmon?
What is a good substitute for buttermilk in pancakes?
How do I keep basil plants alive indoors during winter?
When is the best time to prune apple trees?
How often should tomato seedlings be watered?
What causes yellow leaves on a fiddle leaf fig?
Who won the football World Cup in 1998?
How many players are on a rugby union team?
What are the rules of the offside trap in hockey?
Which marathon has the fastest course record?
When did the Roman Empire fall in the west?
Who was the first emperor of the Ming dynasty?
What started the Thirty Years' War?
Why did the Library of Alexandria decline?
What is the capital of Mongolia?
How tall is Mount Kilimanjaro?
Which river flows through Budapest?
What is the best time of year to visit Patagonia?
How do I get a Schengen visa as a tourist?
Which train goes from Zurich to Milan through the Alps?
What are the symptoms of vitamin D deficiency?
How much sleep does a teenager need?
Is ibuprofen or paracetamol better for a fever?
How do I treat a sprained ankle at home?
What is the difference between a Roth IRA and a traditional IRA?
How are capital gains taxed on a house sale?
Should I pay off my mortgage early or invest?
What does a yield curve inversion signal?
How do I tune a guitar to drop D?
Who composed the Brandenburg Concertos?
What key is Beethoven's Moonlight Sonata in?
How do I learn to sight read piano music faster?
How often should I feed a six month old kitten?
Why does my dog chew on furniture when left alone?
What vaccines does a puppy need in its first year?
How do I change the oil on a 2012 Honda Civic?
What tire pressure is right for a road bike?
Why does my car make a squealing noise when braking?
How do I remove a red wine stain from a carpet?
What is the best way to clean a cast iron pan?
How do I fix a leaking kitchen faucet?
How many coats of paint does a bedroom wall need?
What is the plot of Pride and Prejudice?
Who wrote One Hundred Years of Solitude?
Which novel begins with "Call me Ishmael"?
What is the meaning of the green light in The Great Gatsby?
How do black holes evaporate through Hawking radiation?
Why is the sky blue during the day?
What is the speed of sound at sea level?
How does photosynthesis convert light into sugar?
How do I write a cover letter for a nursing job?
What questions should I ask at the end of a job interview?
How do I negotiate a higher starting salary?
What is a good beginner workout routine for the gym?
How many calories are in a banana?
What stretches help with lower back pain?
How do I plan a budget wedding for 80 guests?
What should I pack for a week of camping in the mountains?
How do I teach a toddler to ride a balance bike?
What is the best age to start learning a second language?
Which houseplants are safe for cats?
How do I knit a cable stitch?
What is the difference between espresso and ristretto?
How do I descale a coffee machine with vinegar?
Who painted The Garden of Earthly Delights?
What is chiaroscuro in Renaissance painting?
How do volcanoes form along the Ring of Fire?
What was the population of Tokyo in 1950?
"""

UNKNOWN_PROJECTS = """\
How did we fix the Kubernetes ingress TLS certificate renewal in the payments cluster?
Why did the Terraform plan keep recreating the RDS instance in staging?
How did we migrate the Django billing app from Celery to RQ?
What was the fix for the React Native Android build failing on Hermes?
How did we speed up the pandas notebook that aggregates sales by region?
Why was the Spark job on EMR running out of executor memory?
How did we set up the Unity shader for the water reflections in level three?
What did we change in the iOS provisioning profile to fix the TestFlight upload?
How did we fix the Rust embedded firmware panicking on the STM32 board?
Why did the Flutter app crash on startup on Samsung devices?
How did we add OAuth login with Keycloak to the Spring Boot admin portal?
What was the cause of the memory leak in the Node.js websocket chat server?
How did we shard the MongoDB orders collection?
Why did the Elasticsearch cluster go red after the snapshot restore?
How did we configure Nginx rate limiting for the public GraphQL endpoint?
How did we fix the Laravel queue workers dying on deploy?
What did we do about the Airflow DAG that backfilled twice?
How did we tune the PostgreSQL autovacuum on the events table in the analytics warehouse?
Why was the Jenkins pipeline for the mobile app stuck on the signing stage?
How did we port the Angular dashboard to Vue 3?
How did we fix the Kafka consumer lag on the fraud detection topic?
How did we get the Raspberry Pi camera streaming over RTSP?
Why did the Ansible playbook fail on the Ubuntu 24.04 hosts?
How did we implement the shopping cart discount codes in the Magento store?
What was the fix for the Swift UI list flickering when scrolling?
How did we deploy the Streamlit model demo to Hugging Face Spaces?
How did we train the YOLO model to detect forklifts in warehouse footage?
Why did the PyTorch training loss become NaN after the learning rate change?
How did we fix the WordPress plugin conflict with WooCommerce checkout?
How did we set up the Helm chart for the Redis sentinel cluster?
How did we fix the Unreal Engine packaging error for the PS5 build?
Why was the Salesforce Apex trigger hitting governor limits?
How did we add dark mode to the Electron note-taking app?
How did we migrate the Heroku Postgres database to Supabase?
How did we fix the CUDA out of memory error when fine-tuning the LLaMA adapter?
Why did the Shopify theme break after the Dawn update?
How did we build the Chrome extension that blocks tracking pixels?
How did we set up Prometheus alerts for the Cassandra nodes?
How did we fix the Xamarin Forms navigation stack bug?
How did we configure SAML single sign-on for the Confluence server?
Why did the Haskell build fail after upgrading GHC to 9.8?
How did we implement the leaderboard in the Godot multiplayer game?
How did we fix the race condition in the C++ audio mixer thread?
How did we set up the Jupyter hub for the biology lab?
Why did the COBOL batch job abend with S0C7 on the mainframe?
How did we fix the Svelte store not updating the cart badge?
How did we configure Varnish caching for the news site homepage?
How did we add Stripe subscriptions to the Ruby on Rails SaaS app?
How did we fix the Excel VBA macro that imports the supplier invoices?
How did we migrate the on-prem Exchange mailboxes to Microsoft 365?
Why did the Arduino sketch stop reading the DHT22 humidity sensor?
How did we set up Firebase push notifications for the Ionic app?
How did we fix the Blender rig so the character's elbows stop bending backwards?
How did we secure the MQTT broker for the smart thermostat fleet?
How did we fix the SAP ABAP report timing out at month end?
Why did the Scala Akka actors deadlock under load?
How did we implement the PDF invoice generator in the .NET MAUI app?
How did we fix the Minecraft mod crashing with Forge 1.20?
How did we tune the Solr relevance for the legal documents search?
How did we set up the Raspberry Pi Kubernetes cluster with k3s?
How did we fix the timezone bug in the Perl payroll script?
How did we add accessibility labels to the Kotlin Compose screens?
Why did the Dockerized Oracle database refuse connections after restart?
How did we implement the recommendation engine for the music streaming app?
How did we fix the R Shiny app that plots the clinical trial data?
How did we configure the Cloudflare worker that rewrites image URLs?
How did we migrate the Perforce depot to Git LFS for the game studio?
How did we fix the Elixir Phoenix LiveView form losing focus?
How did we set up the HL7 interface between the hospital EHR and the lab system?
How did we fix the MATLAB simulation of the drone flight controller?
"""


# Questions an agent working in another stack would ask memory (for h-relevance, 2026-11-25): a coding
# history of Go CLIs, Python tools and web viewers holds none of them. Phrased as agents and people ask,
# not only "How did we ...", and written before any result was seen; kept as written.
OTHER_STACKS = """\
Where did we configure the Terraform remote state backend for the EKS cluster?
which helm chart values did we override for the ingress-nginx controller
What was the workaround for the Xcode 15 signing error with the watchOS extension?
Did we ever get the Gradle configuration cache working with the Kotlin multiplatform module?
how is the Laravel queue worker supervised on the production droplet
What did we decide about Redux Toolkit versus Zustand for the checkout state?
Why does the Angular SSR build fail with window is not defined in the date picker?
the Ruby on Rails asset pipeline precompile step that broke after upgrading to Sprockets 4
Which Postgres extension did we use for geospatial queries on the delivery zones table?
How do we rotate the Vault AppRole secret for the Jenkins pipeline?
What was the fix for the Elasticsearch cluster going red after the node restart?
how did we tune the JVM garbage collector for the Kafka consumers
Where is the Ansible playbook that provisions the Raspberry Pi kiosks?
the Svelte store that caches the user's shopping cart between page loads
What did we change in the nginx config to stop the 413 request entity too large errors on uploads?
How do we seed the MongoDB test database for the Mocha integration suite?
Why did the Unreal Engine packaging step fail on the PS5 dev kit?
What is the retry policy on the Azure Service Bus topic for invoice events?
how did we wire Sentry source maps into the Vite build for the marketing site
Which Cocoapods version pinned the Firebase Crashlytics SDK?
What broke when we bumped .NET 6 to .NET 8 in the Blazor admin app?
the Airflow DAG that backfills the Snowflake warehouse every night
Did we solve the CORS preflight failure between the Next.js frontend and the FastAPI backend on Vercel?
How are Stripe webhooks verified in the Express payments service?
What was the root cause of the deadlock in the MySQL order allocation stored procedure?
how did we get the Arduino ESP32 to reconnect to wifi after deep sleep
Where do we keep the Figma tokens that generate the Tailwind theme?
Which Prometheus alert fires when the RabbitMQ queue depth is too high?
How did we shard the Redis cache for the leaderboard in the mobile game backend?
the COBOL batch job that reads the mainframe VSAM file for payroll
What was the trick to make Jest mock the AWS SDK v3 S3 client?
Why did the Haskell Stack build run out of memory on CI?
how do we deploy the Phoenix LiveView app to Fly.io with a release migration
What did we change in the Webpack 5 module federation config for the shell app?
How did we fix the SwiftUI list scrolling jank on older iPhones?
Where did we set the Cloudflare Workers KV namespace binding for the edge cache?
"""


# Everyday questions of a developer's working life that a history of coding sessions does not answer,
# asked of the large store (``--large``: a whole corpus as distractors). Written before any result was
# seen and kept as written: not tuned one by one.
EVERYDAY = """\
How many vacation days do I have left this year?
What time is the team standup tomorrow?
How do I submit my travel expenses for the conference?
Who is on call this weekend?
When is my next one-on-one with my manager?
What should I say in my self-review for the performance cycle?
How do I ask for a raise without sounding pushy?
Which ergonomic chair helps with neck pain?
What is a good mechanical keyboard for typing all day?
How do I stop my second monitor from flickering?
Which noise cancelling headphones are best for an open office?
How do I reduce eye strain from looking at screens all day?
What is a healthy lunch I can eat at my desk?
How much coffee per day is too much?
How do I deal with burnout after a long release?
What is a good way to prepare for a system design interview?
How do I write a resignation letter?
Should I accept a job offer with equity or a higher salary?
How do I file taxes as a freelance contractor?
What is the best way to learn touch typing?
Where can I find a good coworking space in Lisbon?
How do I get a visa to work remotely from Portugal?
What is the time difference between San Francisco and Bangalore?
How do I book a meeting room for Thursday afternoon?
What is the wifi password for the guest network at the office?
When does the office close for the holidays?
How do I reset my corporate laptop password?
Which conference talks should I attend at the developer summit?
How do I give feedback to a colleague who interrupts in meetings?
How should I onboard a new junior hire on their first day?
What gift should I buy for a coworker leaving the team?
How do I organise a team offsite for twelve people?
What books would you recommend on engineering management?
How do I negotiate a four day work week?
Is a standing desk worth it?
How do I keep my houseplants alive while I travel for work?
What is the best way to commute by bike in the rain?
How do I convince my manager to let me work from home?
How do I calculate my hourly rate as a consultant?
What should I wear to a job interview at a startup?
How do I fall asleep after drinking coffee late?
Which podcast is good for learning about economics?
How do I make friends in a new city after relocating?
What is a good birthday present for my partner?
How do I cook rice without a rice cooker?
What are the opening hours of the post office on Saturday?
How do I renew my passport before it expires?
Which health insurance plan should I pick during open enrollment?
How do I set up a retirement savings plan through my employer?
What is a good stretching routine after sitting all day?
"""


@dataclass(frozen=True, slots=True)
class Trial:
    store: str  # key of the store asked
    query: str
    answerable: bool
    is_relevant: Callable[[Any], bool]  # chunk -> relevant to this question
    group: str = ""  # the question set it comes from (``--split`` deals each set's questions into folds)


def gibberish(count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    letters = "bcdfghjklmnpqrstvwxz"
    vowels = "aeiouy"
    out = []
    for i in range(count):
        if i % 5 == 4:
            out.append("".join(rng.choice("qwertyuiopasdfghjklzxcvbnm;'/.,") for _ in range(rng.randint(8, 24))))
            continue
        words = []
        for _ in range(rng.randint(2, 5)):
            word = "".join(
                rng.choice(letters) + (rng.choice(vowels) if rng.random() < 0.5 else "")
                for _ in range(rng.randint(2, 4))
            )
            words.append(word)
        out.append(" ".join(words))
    return out


# Short requests and other languages, as people type them into a search box.
TERSE_AND_FOREIGN = """\
recipe for banana bread
zxqv
weather tomorrow
¿Cuál es la mejor receta de tortilla de patatas?
Wie wird das Wetter morgen in Berlin?
Quelle est la meilleure saison pour visiter la Bretagne ?
東京でおすすめのラーメン屋はどこですか
Какая завтра погода в Москве?
"""


def unanswerable() -> list[str]:
    lines = [*OTHER_DOMAINS.splitlines(), *UNKNOWN_PROJECTS.splitlines(), *TERSE_AND_FOREIGN.splitlines()]
    return [q for q in lines if q.strip()] + gibberish(70)


def locomo_stores(work: Path, log: Callable[[str], None]) -> dict[str, tuple[Conversation, list[Any]]]:
    """Each LoCoMo conversation ingested into a store of its own: key -> (conversation, questions)."""
    samples = json.loads(LOCOMO.read_text(encoding="utf-8"))
    out: dict[str, tuple[Conversation, list[Any]]] = {}
    for ordinal, sample in enumerate(samples, start=1):
        stats = DatasetStats()
        conv = parse_conversation(sample, stats)
        name = f"{ordinal:03d}-{safe_name(conv.sample_id)}"  # the layout of ``locomo.py --keep``, so its stores serve
        folder = work / "transcripts" / name
        write_sessions(conv, folder, cwd=f"/locomo/{name}")
        build_store(work / "homes" / name, [folder], log)
        out[f"homes/{name}"] = (conv, parse_questions(sample, conv, stats))
    return out


def trials(work: Path, log: Callable[[str], None]) -> list[Trial]:
    out: list[Trial] = []
    coding_home = "coding"
    build_store(work / coding_home, [CORPUS / PROJECT_FOLDER], log)
    out += [
        Trial(coding_home, q.text, True, lambda c, rel=q.relevant: c.session_id in rel, "coding")
        for q in load_queries(DEFAULT_QUERIES)
    ]
    locomo = locomo_stores(work, log)
    for name, (conv, questions) in locomo.items():
        for question in questions:
            uuids = {conv.turn_by_dia[d].uuid for d in question.evidence if d in conv.turn_by_dia}
            out.append(
                Trial(
                    name,
                    question.question,
                    True,
                    lambda c, u=frozenset(uuids): bool(u.intersection(c.message_uuids)),
                    "locomo",
                )
            )
    names = list(locomo)
    for i, text in enumerate(unanswerable()):
        out.append(Trial(coding_home, text, False, lambda c: False, "off-topic"))
        out.append(Trial(names[i % len(names)], text, False, lambda c: False, "off-topic"))
    return out


@dataclass(slots=True)
class Observed:
    trial: Trial
    features: list[tuple[float | None, float, float, float]]  # (cosine, coverage, bulk, absent) of each hit
    relevant: list[bool]
    scores: list[float]  # calibrated relevance of each floorless hit, as configured
    shown: list[float]  # the same as people see them (made non-increasing down the list)
    nearest: float | None  # cosine of the query's nearest chunk in the store (relevance.nearestCosine)
    scope_chunks: int  # chunks in the store
    known_chunks: int  # chunks holding the query's least known word (relevance.knownChunks)


def observe(work: Path, all_trials: Sequence[Trial], overrides: dict[str, str]) -> list[Observed]:
    from causantic import Memory
    from causantic.retrieval.relevance import query_absent_share
    from causantic.store.features import bulk_share

    out: list[Observed] = []
    by_store: dict[str, list[Trial]] = {}
    for t in all_trials:
        by_store.setdefault(t.store, []).append(t)
    for store, group in by_store.items():
        with Memory(work / store, overrides={**overrides, "relevance.floor": 0}) as memory:
            for t in group:
                result = memory.search(t.query, limit=LIMIT)
                absent = query_absent_share(result.profile, memory.config.relevance)
                out.append(
                    Observed(
                        t,
                        [(h.cosine, h.coverage, bulk_share(h.chunk.content), absent) for h in result.hits],
                        [t.is_relevant(h.chunk) for h in result.hits],
                        [h.relevance for h in result.hits],
                        result.shown_relevance,
                        result.nearest,
                        result.profile.memory.scope_chunks if result.profile is not None else 0,
                        result.profile.memory.least_known() if result.profile is not None else 0,
                    )
                )
    return out


def keyword_floor(work: Path, all_trials: Sequence[Trial], overrides: dict[str, str]) -> dict[str, float]:
    """The floor in keyword mode (``mode="keyword"``, CLI ``--mode keyword``): unanswerable questions
    answered (and the tokens those answers told), answerable ones that lose every relevant hit the
    floorless keyword search had in its top ten."""
    from causantic import Memory

    by_store: dict[str, list[Trial]] = {}
    for t in all_trials:
        by_store.setdefault(t.store, []).append(t)
    answered = unanswerable = lost = had = told = 0
    for store, group in by_store.items():
        with (
            Memory(work / store, overrides=overrides) as memory,
            Memory(work / store, overrides={**overrides, "relevance.floor": "0"}) as bare,
        ):
            for t in group:
                result = memory.search(t.query, limit=LIMIT, mode="keyword")
                if not t.answerable:
                    unanswerable += 1
                    answered += bool(result.hits)
                    told += result.tokens
                elif any(t.is_relevant(h.chunk) for h in bare.search(t.query, limit=LIMIT, mode="keyword").hits):
                    had += 1
                    lost += not any(t.is_relevant(h.chunk) for h in result.hits)
    out = {
        "false_answer_rate": round(100 * answered / max(unanswerable, 1), 2),
        "false_answer_tokens": told,
        "answerable_lost_rate": round(100 * lost / max(had, 1), 2),
    }
    print(
        f"keyword mode: unanswerable answered {answered}/{unanswerable} ({out['false_answer_rate']}%, "
        f"{told:,} tokens), answerable lost {lost}/{had} ({out['answerable_lost_rate']}%)"
    )
    return out


def kept(o: Observed, floor: float, model: Any) -> list[bool]:
    """Which of a floorless search's hits search shows at ``floor`` (:func:`clears_floor`: the
    relevance, and the query's nearest chunk in memory, the hit's own coverage or the query's words
    being memory's own)."""
    from causantic.retrieval.relevance import clears_floor

    return [
        clears_floor(s, f[1], o.nearest, o.scope_chunks, o.known_chunks, floor, model)
        for s, f in zip(o.scores, o.features, strict=True)
    ]


def rates(observed: Sequence[Observed], floor: float, model: Any) -> dict[str, float]:
    answerable = [o for o in observed if o.trial.answerable and any(o.relevant)]
    unanswerable = [o for o in observed if not o.trial.answerable]
    lost = sum(
        1 for o in answerable if not any(r and k for r, k in zip(o.relevant, kept(o, floor, model), strict=True))
    )
    false = sum(1 for o in unanswerable if any(kept(o, floor, model)))
    silent = sum(1 for o in observed if o.trial.answerable and not any(kept(o, floor, model)))
    n_answerable = sum(1 for o in observed if o.trial.answerable)
    return {
        "false_answer_rate": round(100 * false / max(len(unanswerable), 1), 2),
        "answerable_lost_rate": round(100 * lost / max(len(answerable), 1), 2),
        "answerable_silenced_rate": round(100 * silent / max(n_answerable, 1), 2),
    }


Rule = Callable[[Observed], list[bool]]  # which of a floorless search's hits a rule shows

# Candidate rules measured by ``--split`` on a large store and not adopted (docs/measurements.md): when
# the query's nearest chunk alone let its hits through, its best hit must hold this share of the query's
# weighed words (lead coverage) or reach this relevance (lead relevance).
LEAD_COVERAGE = (0.0, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6)
LEAD_RELEVANCE = (0.0, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1)


def shown_by(floor: float, model: Any) -> Rule:
    """The rule search applies (:func:`kept`) at ``floor`` with ``model``'s settings."""
    return lambda o: kept(o, floor, model)


def lead_gate(floor: float, model: Any, bar: float, *, by_coverage: bool) -> Rule:
    """Search's rule, and in a memory of ``relevance.largeMinChunks`` chunks or more, when the query's
    nearest chunk reached ``relevance.largeNearestCosine`` (so that alone let weak hits through), an
    answer only when its best hit's coverage (``by_coverage``) or relevance reaches ``bar``."""

    def rule(o: Observed) -> list[bool]:
        shown = kept(o, floor, model)
        if o.nearest is None or o.scope_chunks < model.large_min_chunks or o.nearest < model.large_nearest_cosine:
            return shown
        lead = max(
            (f[1] if by_coverage else s for f, s, k in zip(o.features, o.scores, shown, strict=True) if k), default=0.0
        )
        return shown if lead >= bar else [False] * len(shown)

    return rule


def folds_of(trials: Sequence[Trial], folds: int, seed: int) -> dict[str, int]:
    """Each question's fold: the questions of each set (:attr:`Trial.group`) ordered by a hash of the
    seed and their text and dealt in turn, so every fold holds its share of every set, the same on every
    run; a question asked of two stores, or in two sets, is in one fold."""
    out: dict[str, int] = {}
    groups: dict[str, set[str]] = {}
    for t in trials:
        groups.setdefault(t.group, set()).add(t.query)
    for texts in groups.values():
        ordered = sorted(texts - out.keys(), key=lambda q: hashlib.sha256(f"{seed}:{q}".encode()).hexdigest())
        for i, text in enumerate(ordered):
            out[text] = i % folds
    return out


def tally(observed: Sequence[Observed], rule: Rule) -> dict[str, list[int]]:
    """Counts [how many, of how many]: per set of unanswerable questions those answered (any hit shown);
    ``lost``, real questions whose relevant hits (found without a floor) are all hidden; ``silenced``,
    real questions told "nothing relevant"."""
    out: dict[str, list[int]] = {}

    def add(key: str, hit: bool) -> None:
        count = out.setdefault(key, [0, 0])
        count[0] += hit
        count[1] += 1

    for o in observed:
        shown = rule(o)
        if not o.trial.answerable:
            add(o.trial.group, any(shown))
            continue
        if any(o.relevant):
            add("lost", not any(r and k for r, k in zip(o.relevant, shown, strict=True)))
        add("silenced", not any(shown))
    return out


def choose(observed: Sequence[Observed], candidates: Sequence[tuple[str, Rule]], base: Rule) -> tuple[str, Rule]:
    """The candidate one tuning on ``observed`` picks: the fewest unanswerable questions answered among
    those that lose and silence no more real questions than ``base``; ties to the earliest (the grids
    run from the mildest)."""
    limit = tally(observed, base)

    def real(counts: dict[str, list[int]], key: str) -> int:
        return counts.get(key, [0, 0])[0]

    best: tuple[int, str, Rule] | None = None
    for label, rule in candidates:
        counts = tally(observed, rule)
        if any(real(counts, k) > real(limit, k) for k in ("lost", "silenced")):
            continue
        answered = sum(v[0] for k, v in counts.items() if k not in ("lost", "silenced"))
        if best is None or answered < best[0]:
            best = (answered, label, rule)
    return ("configured", base) if best is None else (best[1], best[2])


def held_out(
    observed: Sequence[Observed], base: Rule, families: dict[str, list[tuple[str, Rule]]], folds: int, seed: int
) -> dict[str, Any]:
    """Rules chosen and scored on different questions: the questions dealt into ``folds`` (:func:`folds_of`),
    each family's setting chosen on all folds but one (:func:`choose`) and counted on that one, summed over
    the folds, so every question is held out once; beside, the configured rule over the same questions.
    Printed as percentages, with the setting each fold chose."""
    fold = folds_of([o.trial for o in observed], folds, seed)
    rows: dict[str, dict[str, Any]] = {"configured": {"chosen": []} | tally(observed, base)}
    for family, candidates in families.items():
        row: dict[str, Any] = {"chosen": []}
        for f in range(folds):
            tuning = [o for o in observed if fold[o.trial.query] != f]
            label, rule = choose(tuning, candidates, base)
            row["chosen"].append(label)
            for key, (count, of) in tally([o for o in observed if fold[o.trial.query] == f], rule).items():
                total = row.setdefault(key, [0, 0])
                total[0] += count
                total[1] += of
        rows[family] = row
    keys = [k for k in rows["configured"] if k not in ("chosen", "lost", "silenced")] + ["lost", "silenced"]
    heads = [f"{k} %" if k in ("lost", "silenced") else f"{k} ans %" for k in keys]
    widths = [max(len(h), 6) for h in heads]
    print(f"held out ({folds} folds, seed {seed}: each fold's setting chosen on the others; real questions lost or")
    print("silenced, unanswerable ones answered)")
    print(f"{'':<18} " + " ".join(f"{h:>{w}}" for h, w in zip(heads, widths, strict=True)) + "  chosen")
    for name, row in rows.items():
        cells = [100 * row[k][0] / max(row[k][1], 1) if k in row else 0.0 for k in keys]
        chosen = ", ".join(row["chosen"]) or "-"
        print(f"{name:<18} " + " ".join(f"{v:{w}.1f}" for v, w in zip(cells, widths, strict=True)) + f"  {chosen}")
    return {"folds": folds, "seed": seed, **rows}


def shown_as_100(value: float) -> bool:
    """Whether the CLI, MCP and hooks print this relevance as "100%" (they round to whole percents)."""
    return round(value * 100) >= 100


def meaning(observed: Sequence[Observed], floor: float, model: Any) -> dict[str, float]:
    """What the shown figure tells a reader, over the hits above ``floor`` (what people see):

    - ``shown_100_share``: share of shown hits of answerable questions printed as "100%";
    - ``queries_two_at_100``: share of answerable questions with two or more hits at "100%";
    - ``auc_right_vs_other``: chance that a relevant hit of a question shows a higher relevance than
      one of its other hits (pooled over questions; 0.5 = the figure tells nothing);
    - ``auc_right_vs_offtopic``: the same, relevant hits against hits of unanswerable questions;
    - ``calibration_error``: mean gap between the figure and how often hits with that figure are
      relevant (10 bins, weighted by hits; 0 = a hit at 40% is relevant 4 times in 10);
    - ``relevant_median``: the median figure of a relevant hit.
    """
    from sklearn.metrics import roc_auc_score

    def above(o: Observed) -> list[tuple[float, bool]]:
        return [(s, r) for s, r, k in zip(o.shown, o.relevant, kept(o, floor, model), strict=True) if k]

    answerable = [above(o) for o in observed if o.trial.answerable]
    offtopic = [s for o in observed if not o.trial.answerable for s, _ in above(o)]
    shown = [h for hits in answerable for h in hits]
    right = [s for s, r in shown if r]
    bins: dict[int, list[tuple[float, bool]]] = {}
    for s, r in shown + [(s, False) for s in offtopic]:
        bins.setdefault(min(int(s * 10), 9), []).append((s, r))
    every = sum(len(b) for b in bins.values())
    gap = sum(abs(sum(s for s, _ in b) - sum(r for _, r in b)) for b in bins.values()) / max(every, 1)
    return {
        "shown_100_share": round(100 * sum(shown_as_100(s) for s, _ in shown) / max(len(shown), 1), 1),
        "queries_two_at_100": round(
            100 * sum(sum(shown_as_100(s) for s, _ in hits) >= 2 for hits in answerable) / max(len(answerable), 1), 1
        ),
        "auc_right_vs_other": round(float(roc_auc_score([r for _, r in shown], [s for s, _ in shown])), 3),
        "auc_right_vs_offtopic": round(
            float(roc_auc_score([1] * len(right) + [0] * len(offtopic), right + offtopic)), 3
        ),
        "calibration_error": round(gap, 3),
        "relevant_median": round(sorted(right)[len(right) // 2], 3) if right else 0.0,
    }


def kind(trial: Trial) -> str:
    """The development set a question belongs to: its notion of a relevant hit differs."""
    return "coding" if trial.store == "coding" else "locomo"


def fit(observed: Sequence[Observed], missing_cosine: float) -> dict[str, float]:
    """The relevance model in two steps.

    1. Its direction: a logistic regression of the relevant hits of answerable questions against
       every hit of unanswerable ones (balanced); a hit without evidence of an answerable question
       may still be on topic, so it is not a clean negative there. This is what tells an answer
       from "nothing relevant".
    2. Its scale (Platt scaling): one more logistic regression of whether a hit is relevant on the
       first model's log-odds, over every hit of every question, so the figure is a probability:
       of the hits shown at 40%, about 4 in 10 are the right one. The coding history (the right
       session) and the chat conversations (the turn that holds the answer) weigh the same, though
       the chats have many more hits. Step 1 alone is a classifier pushed to its extremes: most
       on-topic hits showed "100%".

    Both steps are logistic in the same features, so the result is one set of ``relevance.*``
    coefficients (step 1's times the slope, plus the offset); a floor keeps the same hits when it
    is mapped the same way (:func:`rescaled`).
    """
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    def row(f: tuple[float | None, float, float, float]) -> list[float]:
        cos, cov, bulk, absent = f
        return [missing_cosine if cos is None else cos, cov, bulk, absent]

    rows, labels = [], []
    for o in observed:
        for f, rel in zip(o.features, o.relevant, strict=True):
            if o.trial.answerable and not rel:
                continue
            rows.append(row(f))
            labels.append(1 if rel else 0)
    direction = LogisticRegression(C=1.0, class_weight="balanced", max_iter=1000)
    direction.fit(np.array(rows), np.array(labels))
    every = np.array([row(f) for o in observed for f in o.features])
    slope, offset = scale(observed, direction.decision_function(every).tolist())
    cos_w, cov_w, bulk_w, absent_w = (float(w) for w in direction.coef_[0])
    return scaled(float(direction.intercept_[0]), cos_w, cov_w, -bulk_w, -absent_w, slope, offset)


def scale(observed: Sequence[Observed], log_odds: Sequence[float]) -> tuple[float, float]:
    """Platt scaling: (slope, offset) such that 1/(1+exp(-(offset + slope*z))) of a hit's log-odds z
    is how often such hits are relevant, each development set weighing the same."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    relevant = np.array([int(r) for o in observed for r in o.relevant])
    kinds = [kind(o.trial) for o in observed for _ in o.features]
    hits_of = {k: kinds.count(k) for k in set(kinds)}
    weights = np.array([len(kinds) / (len(hits_of) * hits_of[k]) for k in kinds])
    model = LogisticRegression(C=1e4, max_iter=1000)
    model.fit(np.array(log_odds).reshape(-1, 1), relevant, sample_weight=weights)
    return float(model.coef_[0][0]), float(model.intercept_[0])


def rescale(observed: Sequence[Observed], config: Any) -> dict[str, float]:
    """The configured model's direction kept, only its scale fitted (:func:`scale`)."""
    import math

    log_odds = [math.log(s / (1 - s)) for o in observed for s in (min(max(v, 1e-12), 1 - 1e-12) for v in o.scores)]
    slope, offset = scale(observed, log_odds)
    c = config
    return scaled(c.intercept, c.cosine_weight, c.coverage_weight, c.bulk_penalty, c.absent_penalty, slope, offset)


def scaled(
    intercept: float, cos_w: float, cov_w: float, bulk_pen: float, absent_pen: float, slope: float, offset: float
) -> dict[str, float]:
    """``relevance.*`` of the model whose log-odds are ``offset + slope *`` the given model's."""
    return {
        "relevance.intercept": round(offset + slope * intercept, 3),
        "relevance.cosineWeight": round(slope * cos_w, 3),
        "relevance.coverageWeight": round(slope * cov_w, 3),
        "relevance.bulkPenalty": round(max(0.0, slope * bulk_pen), 3),
        "relevance.absentPenalty": round(max(0.0, slope * absent_pen), 3),
        "slope": round(slope, 4),
        "offset": round(offset, 4),
    }


def rescaled(value: float, slope: float, offset: float) -> float:
    """A relevance of the unscaled model (a floor, a bar) as the rescaled model states it."""
    import math

    value = min(max(value, 1e-12), 1 - 1e-12)
    return 1.0 / (1.0 + math.exp(-(offset + slope * math.log(value / (1 - value)))))


# main's relevance settings before the figure was calibrated: the baseline measured beside it.
BASELINE = {
    "relevance.intercept": "-1.929",
    "relevance.cosineWeight": "12.726",
    "relevance.coverageWeight": "6.086",
    "relevance.bulkPenalty": "3.132",
    "relevance.absentPenalty": "5.091",
    "relevance.floor": "0.5",
    "relevance.nearestCosine": "-1",
}

# The floor before the query's nearest chunk counted (relevance.nearestCosine): measured beside it.
BEFORE_NEAREST = {
    "relevance.floor": "0.0213",
    "relevance.nearestCosine": "-1",
    "relevance.largeNearestCosine": "-1",
}
# The nearest chunk without the exception for a query in memory's own words (relevance.knownChunks).
WITHOUT_KNOWN = {"relevance.knownFloor": "1"}


def spread(observed: Sequence[Observed]) -> dict[str, list[float]]:
    """Quartiles and 90th percentile (p10, p25, p50, p75, p90) of the figure as people would read it
    on every top-ten hit, floor or not: right hits, the other hits of answerable questions, and hits
    of unanswerable ones."""
    import numpy as np

    groups: dict[str, list[float]] = {"right": [], "other": [], "off-topic": []}
    for o in observed:
        for s, r in zip(o.shown, o.relevant, strict=True):
            groups["right" if r else "other" if o.trial.answerable else "off-topic"].append(s)
    return {k: [round(float(q), 3) for q in np.percentile(v, [10, 25, 50, 75, 90])] for k, v in groups.items() if v}


def report(name: str, observed: Sequence[Observed], floor: float, model: Any) -> dict[str, float]:
    out = {"floor": floor} | meaning(observed, floor, model) | rates(observed, floor, model)
    print(
        f"{name:<10} {floor:7.4f} {out['shown_100_share']:9.1f} {out['queries_two_at_100']:10.1f}"
        f" {out['auc_right_vs_other']:9.3f} {out['auc_right_vs_offtopic']:9.3f} {out['calibration_error']:7.3f}"
        f" {out['relevant_median']:8.3f} {out['false_answer_rate']:8.1f} {out['answerable_lost_rate']:7.1f}"
        f" {out['answerable_silenced_rate']:9.1f}"
    )
    return out


def large_store(
    home: Path,
    overrides: dict[str, str],
    settings: dict[str, tuple[float, Any]],
    log: Callable[[str], None],
    split: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """The floor on a large store: the coding questions and those mined from the corpus's own commits
    (is the session that did the work still shown?) and questions it cannot answer (everyday ones of a
    developer's life, other walks of life, other stacks, LoCoMo's), for each of ``settings`` (label ->
    floor and model: the same hits, kept or not by :func:`kept`); with ``split`` (folds, seed) also
    the held-out figures of :func:`held_out`."""
    home = home.resolve()
    real = [
        Trial(str(home), q.text, True, lambda c, rel=q.relevant: c.session_id in rel, "coding")
        for q in load_queries(DEFAULT_QUERIES)
    ]
    mined, _, _ = mined_queries(home, log)
    # a mined query's session is found by its work, not by a chunk that only mentions the commit
    real += [
        Trial(
            str(home),
            q.text,
            True,
            lambda c, rel=q.relevant, ig=q.ignored: c.session_id in rel and c.id not in ig,
            "mined",
        )
        for q in mined
    ]
    sets = {
        name: sorted({q for q in text.splitlines() if q.strip()})
        for name, text in (
            ("everyday", EVERYDAY),
            ("other", OTHER_DOMAINS),
            ("stacks", UNKNOWN_PROJECTS),
            ("agents", OTHER_STACKS),
        )
    }
    samples = json.loads(LOCOMO.read_text(encoding="utf-8"))
    locomo = [
        q.question
        for sample in samples
        for q in parse_questions(sample, parse_conversation(sample, DatasetStats()), DatasetStats())
    ]
    sets["locomo"] = sorted(random.Random(5).sample(sorted(set(locomo)), LOCOMO_SAMPLE))
    offtopic = [Trial(str(home), q, False, lambda c: False, name) for name, asked in sets.items() for q in asked]
    seen = observe(home, real + offtopic, overrides)
    counts = ", ".join(f"{len(asked)} {name}" for name, asked in sets.items())
    print(f"large store {home}: {len(real)} real questions ({len(mined)} mined), {counts} questions")
    widths = [max(len(f"{name} false %"), 8) for name in sets] + [14, 13]
    heads = [f"{name} false %" for name in sets] + ["coding lost %", "mined lost %"]
    print(f"{'':<12} " + " ".join(f"{h:>{w}}" for h, w in zip(heads, widths, strict=True)))
    out: dict[str, Any] = {}
    for label, (floor, model) in settings.items():
        row = {
            f"{name}_false_rate": rates([o for o in seen if o.trial.group == name], floor, model)["false_answer_rate"]
            for name in sets
        }
        for group in ("coding", "mined"):
            row[f"{group}_lost_rate"] = rates([o for o in seen if o.trial.group == group], floor, model)[
                "answerable_lost_rate"
            ]
        print(f"{label:<12} " + " ".join(f"{v:{w}.1f}" for v, w in zip(row.values(), widths, strict=True)))
        out[label] = row
    if split is not None:
        floor, model = settings["configured"]
        grid = [round(0.30 + 0.01 * i, 2) for i in range(31)]
        families = {
            "largeNearestCosine": [
                (f"{bar:.2f}", shown_by(floor, model.model_copy(update={"large_nearest_cosine": bar}))) for bar in grid
            ],
            "lead coverage": [(f"{bar:.2f}", lead_gate(floor, model, bar, by_coverage=True)) for bar in LEAD_COVERAGE],
            "lead relevance": [
                (f"{bar:.2f}", lead_gate(floor, model, bar, by_coverage=False)) for bar in LEAD_RELEVANCE
            ],
        }
        out["held_out"] = held_out(seen, shown_by(floor, model), families, *split)
    out["here"] = asked_from_here(home, overrides)
    return out


def session_projects(home: Path) -> dict[str, str]:
    """Each session's project path in the store at ``home`` (the project it was ingested into)."""
    with sqlite3.connect(f"file:{home / 'memory.db'}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT DISTINCT c.session_id, p.path FROM chunks c JOIN projects p ON p.id = c.project_id"
        ).fetchall()
    return dict(rows)


def asked_from_here(home: Path, overrides: dict[str, str]) -> dict[str, Any]:
    """The coding questions asked without a project filter from a working directory: the project of
    the session that made the commit (``here``) or an unrelated one (``elsewhere``, the store's
    project with most chunks that holds none of the right sessions), with the directory unknown, with
    ``retrieval.hereBoost`` 0 and as configured. Per row: the share of questions whose first hit is of
    another project than the asker's, and the right session's R@5 and MRR over the first ten hits."""
    from causantic import Memory

    projects = session_projects(home)
    with sqlite3.connect(f"file:{home / 'memory.db'}?mode=ro", uri=True) as conn:
        sizes = dict(
            conn.execute(
                "SELECT p.path, COUNT(*) FROM chunks c JOIN projects p ON p.id = c.project_id GROUP BY p.path"
            ).fetchall()
        )
    queries = load_queries(DEFAULT_QUERIES)
    right = {projects[s] for q in queries for s in q.relevant if s in projects}
    elsewhere = max((p for p in sizes if p not in right), key=lambda p: sizes[p])
    rows = {
        "unknown": (None, {}),
        "here, boost 0": ("here", {"retrieval.hereBoost": "0"}),
        "here": ("here", {}),
        "elsewhere": ("elsewhere", {}),
    }
    print(f"asked from a working directory ({len(queries)} coding questions; elsewhere = {elsewhere}):")
    print(f"{'':<14} {'first hit of another project %':>31} {'R@5':>6} {'MRR':>6}")
    out: dict[str, Any] = {}
    for label, (where, extra) in rows.items():
        other = r5 = rr = 0.0
        with Memory(home, overrides={**overrides, **extra}) as memory:
            for q in queries:
                own = next(projects[s] for s in sorted(q.relevant) if s in projects)
                asker = {"here": own, "elsewhere": elsewhere, None: None}[where]
                hits = memory.search(q.text, limit=LIMIT, here=asker).hits
                sessions = list(dict.fromkeys(h.chunk.session_id for h in hits))
                rank = next((i for i, sid in enumerate(sessions, start=1) if sid in q.relevant), None)
                r5 += rank is not None and rank <= 5
                rr += 1 / rank if rank else 0.0
                # the asker's project: where the question comes from (unknown: the right one's)
                other += bool(hits) and projects.get(hits[0].chunk.session_id) != (asker or own)
        n = len(queries)
        row = {"other_first_rate": 100 * other / n, "r5": 100 * r5 / n, "mrr": rr / n}
        print(f"{label:<14} {row['other_first_rate']:31.1f} {row['r5']:6.1f} {row['mrr']:6.3f}")
        out[label] = row
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="keep (or reuse) the stores in this folder")
    parser.add_argument("--json", dest="json_out", type=Path)
    parser.add_argument("--fit", action="store_true", help="refit the relevance model and print it")
    parser.add_argument(
        "--keyword",
        action="store_true",
        help="also ask every question in keyword mode (mode=keyword) and print its floor's outcomes",
    )
    parser.add_argument(
        "--rescale", action="store_true", help="keep the configured model's direction, refit its scale only"
    )
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument(
        "--large",
        type=Path,
        action="append",
        default=[],
        metavar="HOME",
        help="also ask a large store (a home holding the coding project among many others) the coding "
        "questions and the everyday and other-domain ones, with and without relevance.nearestCosine "
        "(repeatable)",
    )
    parser.add_argument(
        "--large-only", action="store_true", help="only the --large stores (no development stores built)"
    )
    parser.add_argument(
        "--split",
        type=int,
        default=0,
        metavar="FOLDS",
        help="also choose the rule's settings on some questions and score them on others: each question set "
        "dealt into FOLDS folds (2: a tuning and a held-out half, both ways)",
    )
    parser.add_argument("--seed", type=int, default=19, help="the seed of --split's folds")
    args = parser.parse_args()
    if args.split == 1 or args.split < 0:
        parser.error("--split needs 2 folds or more")
    split = (args.split, args.seed) if args.split else None
    if not LOCOMO.is_file() or not CORPUS.is_dir():
        print("Needs ../shared beside the repository.", file=sys.stderr)
        return 2
    overrides = dict(item.split("=", 1) for item in args.set)
    from causantic.config import load_config

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    if args.large_only:
        config = load_config().with_overrides(overrides).relevance
        before = load_config().with_overrides({**overrides, **BEFORE_NEAREST}).relevance
        large = {
            str(home): large_store(
                home,
                overrides,
                {
                    "no nearest": (float(BEFORE_NEAREST["relevance.floor"]), before),
                    "configured": (config.floor, config),
                },
                log,
                split,
            )
            for home in args.large
        }
        print(json.dumps({"large": large}))
        if args.json_out:
            args.json_out.write_text(json.dumps({"large": large}, indent=2) + "\n", encoding="utf-8")
        return 0

    work = args.work or Path(tempfile.mkdtemp(prefix="causantic-floor-"))
    all_trials = trials(work, log)
    if args.keyword:
        print(json.dumps({"keyword": keyword_floor(work, all_trials, overrides)}))

    config = load_config().with_overrides(overrides).relevance
    floor = float(overrides.get("relevance.floor", config.floor))
    if args.fit or args.rescale:
        first = observe(work, all_trials, overrides)
        fitted = fit(first, config.missing_cosine) if args.fit else rescale(first, config)
        slope, offset = fitted.pop("slope"), fitted.pop("offset")
        # --fit: the balanced model's even odds; --rescale: the configured floor, mapped
        floor = round(rescaled(0.5 if args.fit else floor, slope, offset), 4)
        print("fitted:", " ".join(f"{k}={v}" for k, v in fitted.items()), f"relevance.floor={floor}")
        print(f"a relevance r before is now 1/(1+exp(-({offset} + {slope}*logit(r))))")
        overrides = {**overrides, **{k: str(v) for k, v in fitted.items()}, "relevance.floor": str(floor)}
    observed = observe(work, all_trials, overrides)
    baseline = observe(work, all_trials, {**overrides, **BASELINE})
    main_model = load_config().with_overrides({**overrides, **BASELINE}).relevance
    # the settings before relevance.nearestCosine, measured beside
    before = load_config().with_overrides({**overrides, **BEFORE_NEAREST}).relevance
    unknown = load_config().with_overrides({**overrides, **WITHOUT_KNOWN}).relevance
    n_un = sum(1 for o in observed if not o.trial.answerable)
    n_ans = sum(1 for o in observed if o.trial.answerable)
    print(f"{n_ans} answerable and {n_un} unanswerable questions, top {LIMIT} hits; figures over the hits shown")
    print(
        f"{'':<10} {'floor':>7} {'at 100%':>9} {'2+ at 100':>10} {'AUC right':>9} {'AUC off':>9} {'cal err':>7}"
        f" {'right med':>8} {'false %':>8} {'lost %':>7} {'silenced':>9}"
    )
    result: dict[str, dict[str, Any]] = {
        "baseline": report("main", baseline, float(BASELINE["relevance.floor"]), main_model),
        "before_nearest": report("no nearest", observed, float(BEFORE_NEAREST["relevance.floor"]), before),
        "without_known": report("no vocab", observed, floor, unknown),
        "configured": report("configured", observed, floor, config),
    }
    for candidate in sorted({0.01, 0.015, 0.025, 0.035, 0.05}):
        report("  floor", observed, candidate, config)
    print("shown figure of every top-10 hit, floor or not (p10 p25 p50 p75 p90):")
    for name, seen in (("main", baseline), ("configured", observed)):
        quantiles = spread(seen)
        result["baseline" if name == "main" else "configured"]["spread"] = quantiles
        print(f"  {name:<10} " + "  ".join(f"{k} {' '.join(f'{q:.3f}' for q in v)}" for k, v in quantiles.items()))
    result["configured"] |= {"n_unanswerable": n_un, "n_answerable": n_ans}
    if split is not None:
        grid = [round(0.26 + 0.01 * i, 2) for i in range(15)]
        families = {
            "nearestCosine": [
                (f"{bar:.2f}", shown_by(floor, config.model_copy(update={"nearest_cosine": bar}))) for bar in grid
            ]
        }
        result["held_out"] = held_out(observed, shown_by(floor, config), families, *split)
    for home in args.large:
        result.setdefault("large", {})[str(home)] = large_store(
            home,
            overrides,
            {
                "no nearest": (float(BEFORE_NEAREST["relevance.floor"]), before),
                "no vocab": (floor, unknown),
                "configured": (floor, config),
            },
            log,
            split,
        )
    print(json.dumps(result))
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
