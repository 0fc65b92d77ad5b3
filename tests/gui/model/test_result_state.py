"""ResultState: the shared result state of the designer's results helpers, and its signals."""

from __future__ import annotations

from dataclasses import replace

from results_fixtures import ring4_schedule

from fc_gui.model.result_state import ResultState
from fc_gui.model.switch_bounds import SwitchBounds


def recorder(state: ResultState) -> list[tuple]:
    events: list[tuple] = []
    state.schedule_changed.connect(lambda s: events.append(("schedule", s)))
    state.stale_changed.connect(lambda b: events.append(("stale", b)))
    state.switch_bounds_changed.connect(lambda sb: events.append(("bounds", sb)))
    state.solving_changed.connect(lambda b: events.append(("solving", b)))
    state.simulated_changed.connect(lambda: events.append(("simulated",)))
    state.measured_imported.connect(lambda: events.append(("measured",)))
    return events


def test_a_schedule_is_announced_once_the_views_show_it():
    state = ResultState()
    events = recorder(state)
    s = ring4_schedule()
    state.switch_bounds = SwitchBounds(())
    state.set_schedule(s)
    assert state.schedule is s and state.switch_bounds is None  # the old figures are dropped
    assert events == []  # the views are still being filled
    state.announce_schedule()
    assert events == [("schedule", s)]


def test_stale_only_with_a_result_and_only_changes_are_signalled():
    state = ResultState()
    events = recorder(state)
    assert not state.set_stale(True) and not state.stale  # nothing shown: nothing is stale
    s = ring4_schedule()
    state.set_schedule(s)
    assert state.fresh is s
    assert state.set_stale(True) and state.stale and state.fresh is None
    assert not state.set_stale(True)  # unchanged: no second signal
    assert state.set_stale(False) and state.fresh is s
    assert events == [("stale", True), ("stale", False)]


def test_clearing_drops_the_what_if_comparison():
    state = ResultState()
    old, new = ring4_schedule(), replace(ring4_schedule(), k=3)
    state.set_schedule(old)
    state.set_previous(old)
    state.set_schedule(new)
    assert state.previous is old  # a what-if result keeps its comparison
    state.set_schedule(None)
    assert state.previous is None and state.schedule is None


def test_the_link_users_belong_to_the_schedule_shown():
    """Given with a schedule they are kept; another schedule (or none) drops them."""
    state = ResultState()
    s = ring4_schedule()
    users = {("gpu0", "gpu1"): ["gpu0#0"]}
    state.set_schedule(s, users)
    assert state.link_users is users
    state.set_schedule(replace(s, k=3))
    assert state.link_users is None
    state.set_schedule(s, users)
    state.set_schedule(None)
    assert state.link_users is None


def test_work_and_tables_are_signalled():
    state = ResultState()
    events = recorder(state)
    state.set_solving(True)
    state.set_solving(False)
    state.set_simulated({"ring": object()})
    state.set_measured({"nccl": object()})  # kept (a results file's), not an import
    state.set_measured(state.measured, imported=True)
    sb = SwitchBounds(())
    state.set_switch_bounds(sb)
    assert state.solving is False and set(state.simulated) == {"ring"}
    assert set(state.measured) == {"nccl"} and state.switch_bounds is sb
    assert events == [
        ("solving", True),
        ("solving", False),
        ("simulated",),
        ("measured",),
        ("bounds", sb),
    ]


# ---------------------------------------------------------------------- helpers follow it
def test_the_window_follows_the_state_through_its_signals(qtbot, make_results_window):
    """The helpers are wired to the state, not to each other: changing the state alone
    updates the Solve menu, greys the views, and drops the simulated tables of a result that is
    replaced."""
    w = make_results_window()
    rc = w.results_controller
    state = rc.state
    state.set_solving(True)
    assert not rc.menu.solve_action.isEnabled() and rc.menu.cancel_action.isEnabled()
    state.set_solving(False)
    assert rc.menu.solve_action.isEnabled() and not rc.menu.cancel_action.isEnabled()

    with qtbot.waitSignal(state.schedule_changed, timeout=30000):
        assert rc.solving.solve()
    assert rc.exports.h5_action.isEnabled()  # Export follows schedule_changed
    state.set_stale(True)
    assert rc.panel.stale and "stale" in rc.summary.text().lower()
    state.set_stale(False)
    assert not rc.panel.stale

    state.set_simulated({"ring": object()})
    rc.show_schedule(replace(state.schedule, k=5))  # another result: its simulation is gone
    assert state.simulated == {}
