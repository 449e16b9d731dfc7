"""Deterministic simulation of the client, the network and the server on one thread.

The real sync engine, a real Postbox (on a temporary file, run inline) and the real
mock server logic run on a ``VirtualLoop`` whose clock only moves when nothing is
ready, over a simulated network with seeded faults. Every run is a function of its
seed: ``simulate(seed)`` plays ``Schedule.from_seed(seed)``, lets the world settle and
compares the Postbox with the server (``sync.verify``). ``python -m sync.simulation``
runs batches and replays seeds.
"""

from sync.simulation.harness import Outcome, replay_command, simulate
from sync.simulation.loop import SimulationError, StalledError, VirtualLoop, run_virtual
from sync.simulation.schedule import Schedule

__all__ = [
    "Outcome",
    "Schedule",
    "SimulationError",
    "StalledError",
    "VirtualLoop",
    "replay_command",
    "run_virtual",
    "simulate",
]
