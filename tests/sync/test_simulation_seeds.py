"""Seeds that found engine bugs, replayed one by one.

While its bug is open, a seed must still show the symptom that found it (and nothing
unexplained). Once the engine is fixed the seed converges, this test says so, and its
symptom becomes ``None``: from then on it must converge, guarding the fix.
"""

from __future__ import annotations

import pytest

from sync.simulation import simulate
from tests.sync.simulation_known import unexplained

_DEAD_PART = "a storage error ends the {part}'s task for good while the engine looks alive"
_NO_TIMEOUT = "a lost response leaves its request waiting while the connection stays up"

REGRESSIONS = [
    pytest.param(495, "task died: state-manager: StorageFullError", id="495-full-state-manager"),
    pytest.param(436, "task died: outbound: StorageFullError", id="436-full-outbound"),
    pytest.param(68, "task died: outbound: DatabaseLockedError", id="68-busy-outbound"),
    pytest.param(258, "settle: not quiescent [outgoing queued]", id="258-lost-send-answer"),
    pytest.param(268, "settle: not quiescent [outgoing queued]", id="268-lost-send-answer"),
]
_REASONS = {
    495: _DEAD_PART.format(part="state manager"),
    436: _DEAD_PART.format(part="outbound queue"),
    68: _DEAD_PART.format(part="outbound queue"),
    258: _NO_TIMEOUT,
    268: _NO_TIMEOUT,
}


@pytest.mark.parametrize(("seed", "symptom"), REGRESSIONS)
def test_a_seed_that_found_a_bug(seed: int, symptom: str | None) -> None:
    outcome = simulate(seed)
    if symptom is None:  # fixed: it must converge
        assert outcome.ok, "\n".join(outcome.divergences)
        return
    assert not unexplained(outcome), outcome.divergences
    if outcome.ok:
        pytest.fail(f"seed {seed} converges now ({_REASONS[seed]}: fixed); set its symptom to None")
    assert any(line.startswith(symptom) for line in outcome.divergences), outcome.divergences
