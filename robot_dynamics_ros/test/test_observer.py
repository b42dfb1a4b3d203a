# Copyright 2026 robot_dynamics_ros contributors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
The momentum observer without ROS, on the simulator with a wrench applied to a link.

Simulator (RK4, 1 kHz, no friction) driven by computed torque (torques held between samples, as
a drive holds a command), the observer fed the same samples. With a constant wrench F on a link
the residual r must reach J^T F (the external joint torques, J in the link frame) within 1 %
after 5 / K_O and stay there; without one it must stay below 1e-6 N m, at rest and moving.
"""
import numpy as np
import pytest

from robot_dynamics_ros.control import MomentumObserver, quintic
from robot_dynamics_ros.dynamics import RobotModel, gravity_torques, rnea
from robot_dynamics_ros.simulation import Simulator

from conftest import robot_urdf

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

K = 50.0
DT = 1e-3
CASES = {'panda': 'panda_hand', 'ur5': 'wrist_3_link'}


def pose(model):
    """Return a start pose well inside the limits (the middle, or 0.3 rad for +-2 pi joints)."""
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    middle = np.where(hi - lo < 2 * np.pi, (lo + hi) / 2, 0.3)
    return np.where(np.isfinite(lo) & np.isfinite(hi), middle, 0.3)


def external(model, q, link, F):
    """Return J(q)^T F for F in the link frame: g(q) - rnea(q, 0, 0, f_ext)."""
    z = np.zeros(model.n)
    return gravity_torques(model, q) - rnea(model, q, z, z, f_ext={link: F})


def run(name, F, moving, seconds=2.0, sample_period=DT, gap=None, observer=None):
    model = RobotModel.from_urdf(robot_urdf(name))
    link = CASES[name]
    q0 = pose(model)
    q1 = q0 + (0.3 if moving else 0.0) * (np.arange(model.n) < 7)    # fingers stay put
    sim = Simulator(model, q0=q0, integrator='rk4', damping=0.0, friction=0.0)
    if F is not None:
        sim.set_wrench(link, F)
    observer = observer or MomentumObserver(model, K)
    observer.update(sim.q, sim.qd, np.zeros(model.n), 0.0)
    every = int(round(sample_period / DT))
    out = []
    for k in range(int(round(seconds / DT))):
        t = k * DT
        blind = gap is not None and gap[0] <= t < gap[1]
        if blind:                   # a stalled reader: no samples, its drives fall back to zero
            tau = np.zeros(model.n)
        elif k % every == 0:        # the controller's (and the observer's) sample
            Q, QD, QDD = (x[0] for x in quintic(q0, q1, seconds, [t]))
            tau = rnea(model, sim.q, sim.qd, QDD + 400 * (Q - sim.q) + 40 * (QD - sim.qd))
        sim.step(tau)
        if (k + 1) % every == 0 and not (gap is not None and gap[0] <= t + DT < gap[1]):
            r = observer.update(sim.q, sim.qd, sim.applied, t + DT)  # after the effort limits
            truth = external(model, sim.q, link, F) if F is not None else np.zeros(model.n)
            out.append((t + DT, r.copy(), truth, np.abs(tau).max()))
    return out


@pytest.mark.parametrize('name', sorted(CASES))
@pytest.mark.parametrize('moving', [False, True], ids=['at_rest', 'moving'])
def test_without_a_wrench_the_residual_stays_zero(name, moving):
    """
    At rest below 1e-6 N m (measured ~1e-14); moving below 1e-7 of the motor torques.

    Moving, what is left is the third-order quadrature of C^T qd - g between samples: ur5 6e-8
    N m, panda 4e-6 N m on a shoulder carrying 40 N m (trapezoid rule: 3e-6 and 2e-6).
    """
    samples = run(name, None, moving)
    worst = max(np.abs(r).max() for _, r, _, _ in samples)
    torque = max(m for _, _, _, m in samples)
    assert worst < (1e-7 * torque if moving else 1e-6), (worst, torque)


@pytest.mark.parametrize('name', sorted(CASES))
@pytest.mark.parametrize('moving', [False, True], ids=['at_rest', 'moving'])
def test_a_constant_wrench_is_found_within_one_percent_after_five_time_constants(name, moving):
    F = np.array([3.0, -5.0, -20.0, 0.5, 0.0, 0.2])         # N, N m in the link frame
    samples = run(name, F, moving)
    # what the observer promises: J^T F through a first-order filter of time constant 1 / K; at
    # rest that is J^T F itself after 5 / K (e^-5 = 0.7 %), moving it lags d(J^T F)/dt / K
    ref, filtered, t_last = np.zeros(len(samples[0][1])), [], 0.0
    for t, _, truth, _ in samples:
        a = np.exp(-K * (t - t_last))
        ref = a * ref + (1 - a) * truth
        filtered.append(ref.copy())
        t_last = t
    settled = [(r, truth, f) for (t, r, truth, _), f in zip(samples, filtered) if t >= 5 / K]
    scale = max(np.abs(truth).max() for _, truth, _ in settled)
    assert max(np.abs(r - f).max() for r, _, f in settled) < 0.01 * scale
    if not moving:
        assert max(np.abs(r - truth).max() for r, truth, _ in settled) < 0.01 * scale


def test_the_sample_rate_does_not_matter():
    """The same push seen at 1 kHz and at 200 Hz (the exact discrete step): the same answer."""
    F = np.array([0.0, 0.0, -20.0, 0.0, 0.0, 0.0])
    fast, slow = run('ur5', F, False, 1.0), run('ur5', F, False, 1.0, sample_period=5e-3)
    t_end = slow[-1][0]
    r_fast = [r for t, r, _, _ in fast if abs(t - t_end) < 1e-9][0]
    assert np.abs(slow[-1][1] - r_fast).max() < 1e-3 * np.abs(r_fast).max()


def test_a_gap_in_the_samples_holds_the_estimate():
    """
    40 ms without samples while the torques change unseen (a stalled reader timing out).

    Integrated across, that interval's torques and quadrature would be wrong by tens of N m; the
    observer leaves it out (skipped), holds r, and stays at zero without a wrench. With one, it
    is as exact after the gap as without it.
    """
    model = RobotModel.from_urdf(robot_urdf('panda'))
    observer = MomentumObserver(model, K)
    samples = run('panda', None, True, 1.0, gap=(0.5, 0.54), observer=observer)
    assert observer.skipped == 1
    assert max(np.abs(r).max() for _, r, _, _ in samples) < 1e-3
    F = np.array([0.0, 0.0, -20.0, 0.0, 0.0, 0.0])
    with_gap = run('panda', F, False, 1.0, gap=(0.5, 0.54))
    without = run('panda', F, False, 1.0)
    assert np.abs(with_gap[-1][1] - without[-1][1]).max() < 1e-3 * np.abs(without[-1][1]).max()
    # the limit the node sets (its state_timeout) applies however regular the samples were
    observer = MomentumObserver(model, K, max_interval=0.02)
    run('panda', None, False, 0.3, sample_period=0.025, observer=observer)
    assert observer.skipped == 12 and np.all(observer.r == 0.0)


def test_gains_and_reset():
    model = RobotModel.from_urdf(robot_urdf('ur5'))
    with pytest.raises(ValueError, match='gain'):
        MomentumObserver(model, [10.0, 20.0])
    with pytest.raises(ValueError, match='gain'):
        MomentumObserver(model, 0.0)
    observer = MomentumObserver(model, np.full(model.n, 20.0))
    observer.r[:] = 1.0
    observer.reset()
    assert np.all(observer.r == 0.0)
    # settled 5 / K after the first sample (the slowest joint's K: 20 / s, so 0.25 s)
    q, z = np.full(model.n, 0.3), np.zeros(model.n)
    g = gravity_torques(model, q)
    for t in np.arange(0.0, 0.25, 1e-3):
        observer.update(q, z, g, 10.0 + t)
        assert not observer.settled()
    observer.update(q, z, g, 10.251)
    assert observer.settled()
    # a clock that goes back (a simulation reset, stamps switching to simulated time): r held,
    # started again there, settling again
    observer.r[:] = 0.5
    observer.update(q, z, g, 0.001)
    assert observer.skipped == 1 and np.all(observer.r == 0.5) and not observer.settled()
    observer.update(q, z, g, 0.002)
    assert np.all(observer.r < 0.5) and np.all(observer.r > 0.0)
    # a stall right after the first sample (a node compiling its kernels, brakes still on): the
    # gap is left out and does not count towards settling; the intervals around it do
    observer.reset()
    observer.update(q, z, g, 20)                   # an int time: converted, as a float would be
    for t in np.arange(0.0, 0.03, 1e-3):          # 1 ms intervals: the recent ones
        observer.update(q, z, g, 20.0 + t + 1e-3)
    observer.update(q, z, g, 21.0)                 # 0.97 s later: a gap
    assert observer.skipped == 2 and not observer.settled()
    for t in np.arange(1e-3, 0.2155, 1e-3):        # 0.03 + 0.215 s integrated
        observer.update(q, z, g, 21.0 + t)
        assert not observer.settled()
    for t in np.arange(0.216, 0.2215, 1e-3):
        observer.update(q, z, g, 21.0 + t)
    assert observer.settled()                      # 0.251 s
