"""benchmarks/relevance_floor.py --split: the "nothing relevant" rule's settings chosen on some questions
and scored on others, so a setting that only looks free on the questions it was tuned on shows its cost."""

from __future__ import annotations

from typing import Any

from benchmark_scripts import load_benchmark

floor = load_benchmark("relevance_floor.py")


def _trial(text: str, group: str, answerable: bool, store: str = "coding") -> Any:
    return floor.Trial(store, text, answerable, lambda c: answerable, group)


def _observed(trial: Any) -> Any:
    # one hit, relevant when the question is answerable; the rules below read only the trial
    return floor.Observed(trial, [(0.5, 0.5, 0.0, 0.0)], [trial.answerable], [0.5], [0.5], 0.5, 5000, 10)


def test_each_question_set_is_dealt_evenly_into_folds_the_same_on_every_run() -> None:
    trials = [_trial(f"coding question {i}", "coding", True) for i in range(27)]
    trials += [_trial(f"everyday question {i}", "everyday", False) for i in range(50)]
    # an off-topic question is asked of two stores: both askings are held out together
    trials += [_trial(f"everyday question {i}", "everyday", False, store="locomo") for i in range(50)]
    folds = floor.folds_of(trials, 2, 19)

    assert folds == floor.folds_of(trials, 2, 19)
    assert folds != floor.folds_of(trials, 2, 20)
    for group, size in (("coding", 27), ("everyday", 50)):
        held = sum(1 for text, f in folds.items() if text.startswith(group[:4]) and f == 1)
        assert held in (size // 2, size - size // 2)
    assert len(folds) == 27 + 50  # one fold per question, whichever store it was asked of


def test_a_setting_that_hides_a_real_question_only_the_held_out_half_holds_shows_that_loss() -> None:
    observed = [_observed(_trial(t, "coding", True)) for t in ("fix the retry loop", "move prompt upto handler")]
    observed += [_observed(_trial(t, "stacks", False)) for t in ("Terraform state", "Gradle cache")]

    def shows_all(o: Any) -> list[bool]:
        return [True]

    def strict(o: Any) -> list[bool]:  # answers one real question and nothing else
        return [o.trial.query == "fix the retry loop"]

    result = floor.held_out(observed, shows_all, {"strict": [("strict", strict)]}, 2, 19)

    # chosen where the tuning half lacks the question it hides (no loss seen there), refused where it has it
    assert sorted(result["strict"]["chosen"]) == ["configured", "strict"]
    assert result["strict"]["lost"] == [1, 2]  # tuned on the other half, it tells a real question "nothing relevant"
    assert result["configured"]["lost"] == [0, 2]
    assert result["strict"]["stacks"][0] < result["configured"]["stacks"][0]
