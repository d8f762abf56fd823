from typing import List

import pytest
import torch

from elmo_plugin.elmo import load_bilm
from elmo_plugin.elmo.execution import recurrence_threads
from elmo_plugin.elmo.execution.recurrence_threads import RecurrenceThreads, torch_threads
from elmo_plugin.elmo.execution.settings import Execution


class _Layer:
    """A layer that records the thread count of each call and takes `seconds[count]` on the
    chooser's clock."""

    def __init__(self, chooser: RecurrenceThreads, seconds, results=None) -> None:
        self.counts: List[int] = []
        self.clock = 0.0
        self.seconds = seconds
        self.results = results or {}
        chooser.timer = lambda: self.clock

    def __call__(self):
        count = torch.get_num_threads()
        self.counts.append(count)
        self.clock += self.seconds[count]
        return self.results.get(count, "result")


@pytest.fixture
def two_threads():
    with torch_threads(2):
        yield


def _calls(chooser: RecurrenceThreads, layer: _Layer, count: int) -> List[object]:
    return [chooser.run(layer, lambda a, b: a == b) for _ in range(count)]


def test_races_both_counts_then_runs_the_faster(two_threads):
    chooser = RecurrenceThreads()
    layer = _Layer(chooser, {1: 1.0, 2: 3.0})
    _calls(chooser, layer, recurrence_threads.FIRST_EXPLORATIONS)
    races = recurrence_threads.FIRST_EXPLORATIONS
    assert sorted(layer.counts) == [1] * races + [2] * races
    layer.counts.clear()
    _calls(chooser, layer, 5)
    assert layer.counts == [1] * 5
    assert torch.get_num_threads() == 2


def test_the_count_that_runs_first_alternates_race_by_race(two_threads, monkeypatch):
    chooser = RecurrenceThreads()
    layer = _Layer(chooser, {1: 1.0, 2: 3.0})
    timed: List[int] = []
    real_timed = RecurrenceThreads._timed

    def recording(self, run, count):
        timed.append(count)
        return real_timed(self, run, count)

    monkeypatch.setattr(RecurrenceThreads, "_timed", recording)
    _calls(chooser, layer, 4 * recurrence_threads.EXPLORE_EVERY)
    firsts = timed[::2]
    assert len(firsts) == recurrence_threads.FIRST_EXPLORATIONS + 4
    assert firsts == [firsts[0], 3 - firsts[0]] * 3


def test_the_choice_follows_the_machine_as_races_change(two_threads):
    chooser = RecurrenceThreads()
    layer = _Layer(chooser, {1: 1.0, 2: 3.0})
    _calls(chooser, layer, recurrence_threads.EXPLORE_EVERY)
    layer.seconds = {1: 3.0, 2: 1.0}  # the other core became free
    _calls(chooser, layer, recurrence_threads.VOTES * recurrence_threads.EXPLORE_EVERY)
    layer.counts.clear()
    _calls(chooser, layer, 3)
    assert layer.counts == [2, 2, 2]


def test_counts_that_give_other_bits_pin_torchs_count(two_threads):
    chooser = RecurrenceThreads()
    layer = _Layer(chooser, {1: 1.0, 2: 3.0}, results={1: "other bits", 2: "result"})
    assert _calls(chooser, layer, 1) == ["result"]
    layer.counts.clear()
    _calls(chooser, layer, 2 * recurrence_threads.EXPLORE_EVERY)
    assert set(layer.counts) == {2}


def test_one_thread_runs_once():
    chooser = RecurrenceThreads()
    layer = _Layer(chooser, {1: 1.0})
    with torch_threads(1):
        _calls(chooser, layer, 4)
    assert layer.counts == [1] * 4 and chooser.calls == 0


def _layer_calls() -> int:
    return sum(chooser.calls for chooser in recurrence_threads._CHOOSERS.values())


def test_the_bilm_gives_the_same_bits_measured_or_not(two_threads, elmo_options, elmo_weights):
    from elmo_plugin.elmo import batch_to_ids

    ids = batch_to_ids([["The", "cat", "sat", "."], ["A", "dog"], ["Hi"]])
    fixed = load_bilm(elmo_options, elmo_weights, execution=Execution(adaptive_threads=False))
    measured = load_bilm(elmo_options, elmo_weights)
    calls_before = _layer_calls()
    with torch.no_grad():
        expected = fixed(ids)
        assert _layer_calls() == calls_before
        for _ in range(5):
            got = measured(ids)
            for mine, theirs in zip(got["activations"], expected["activations"]):
                assert torch.equal(mine, theirs)
    layers = len(measured.lstm.bilstm_layers)
    assert _layer_calls() == calls_before + 5 * layers
    measured(ids)  # gradients flow to the weights: torch's count, no second run
    assert _layer_calls() == calls_before + 5 * layers


def test_a_new_bilm_learns_from_the_races_of_its_shape(
    two_threads, monkeypatch, elmo_options, elmo_weights
):
    from elmo_plugin.elmo import batch_to_ids

    monkeypatch.setattr(recurrence_threads, "_CHOOSERS", {})
    races: List[int] = []
    real_race = RecurrenceThreads._race

    def counted(chooser, *arguments):
        races.append(1)
        return real_race(chooser, *arguments)

    monkeypatch.setattr(RecurrenceThreads, "_race", counted)
    ids = batch_to_ids([["The", "cat", "sat", "."], ["A", "dog"]])
    with torch.no_grad():
        for _ in range(recurrence_threads.FIRST_EXPLORATIONS):
            load_bilm(elmo_options, elmo_weights)(ids)
        raced = len(races)
        load_bilm(elmo_options, elmo_weights)(ids)
    assert raced >= recurrence_threads.FIRST_EXPLORATIONS and len(races) == raced
