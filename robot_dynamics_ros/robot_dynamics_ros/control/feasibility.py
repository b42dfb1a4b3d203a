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
Will the arm manage this trajectory? Torques and velocities along it, and the time scale that fits.

The torques are RNEA's along the trajectory sampled as the controller samples it (linear, cubic or
quintic segments, joint_trajectory_controller's rules), every sample in one batch call, with the
model's payload and armature. Friction is not in them.

Stretched uniformly in time by k (every time_from_start x k), the same path has qd / k and
qdd / k^2, and since the velocity-product terms are quadratic in qd, each sample's torque is
exactly

    tau_k = (tau - g(q)) / k^2 + g(q),

so per sample and joint the smallest k with ``|tau_k| <= L`` is closed-form: with c = g and
a = tau - g (``|c| <= L``, else no k will do: gravity alone exceeds the limit),
``1 / k^2 <= (L - sign(a) c) / |a|``. Velocities: ``k >= |qd| / v_max``. The largest of those
over all samples and joints is k*, the minimum time scale: k* <= 1 means feasible (1 / k* the
headroom), k* = inf that gravity alone is too much somewhere.
"""
from dataclasses import dataclass, field

import numpy as np

from ..dynamics import gravity_torques, rnea


@dataclass
class Feasibility:
    """The check of one trajectory: per joint peaks and limits, k* and what limits it."""

    names: list
    peak_effort: np.ndarray             # max |tau| per joint (N m, N)
    peak_effort_time: np.ndarray        # s from the trajectory's start
    effort_limit: np.ndarray            # inf: none
    peak_velocity: np.ndarray           # max |qd| per joint (rad/s, m/s)
    peak_velocity_time: np.ndarray
    velocity_limit: np.ndarray
    min_time_scale: float               # k*; 0 for a trajectory that does not move
    limiting_joint: str                 # the joint that sets k* ('' when k* = 0)
    limiting_time: float                # where (s)
    limiting_kind: str                  # 'effort', 'velocity' or 'gravity' (k* = inf)
    limiting_value: float               # |tau|, |qd| or |g| there
    t: np.ndarray = field(repr=False)   # the sample times (s), a waypoint's twice
    tau: np.ndarray = field(repr=False)     # (samples, joints) the torques
    gravity: np.ndarray = field(repr=False)
    qd: np.ndarray = field(repr=False)

    @property
    def feasible(self):
        return self.min_time_scale <= 1.0

    def torques(self, k):
        """Return the torques of the same samples, the trajectory k times slower (at t k)."""
        return (self.tau - self.gravity) / k**2 + self.gravity

    def message(self):
        """One line: feasible with what headroom, or what it takes and why."""
        k = self.min_time_scale
        where = f'{self.limiting_joint} at t = {self.limiting_time:.3f} s'
        if self.limiting_kind == 'gravity':
            i = self.names.index(self.limiting_joint)
            return (f'infeasible at any speed: gravity alone needs {self.limiting_value:.4g} on '
                    f'{where}, over its effort limit {self.effort_limit[i]:.4g}')
        if k == 0:
            return 'feasible: the trajectory does not move'
        verdict = (f'feasible; it could run {1 / k:.3g}x faster' if k <= 1 else
                   f'infeasible; it needs {k:.4g}x its duration')
        return f'{verdict} (the {self.limiting_kind} limit of {where} sets k* = {k:.6g})'


def sample_times(duration, waypoints, sample_period=1e-3):
    """
    Sample times (s from the start) and which are left limits.

    A grid of ``sample_period`` from 0 to ``duration``, each waypoint time (the segment starting
    there) and, for each waypoint after 0, the end of the segment arriving there.
    """
    if not (sample_period > 0 and np.isfinite(sample_period)):
        raise ValueError(f'sample_period must be > 0 s, got {sample_period}')
    n = int(np.floor(duration / sample_period + 1e-9)) + 1
    if n > 10_000_000:
        raise ValueError(f'{n} samples ({duration} s at {sample_period} s): raise sample_period')
    grid = np.arange(n) * sample_period
    waypoints = np.asarray(waypoints, dtype=float)
    ends = waypoints[waypoints > 0]
    t = np.concatenate([grid, waypoints, ends])
    left = np.concatenate([np.zeros(n + len(waypoints), bool), np.ones(len(ends), bool)])
    order = np.lexsort((~left, t))              # at a waypoint: the arriving segment first
    return t[order], left[order]


def check(model, trajectory, *, joints=None, q_rest=None, effort_limits=None,
          velocity_limits=None, sample_period=1e-3):
    """
    Check a JointTrajectory (its own start state and segments) against effort and velocity limits.

    ``model``: the one the controller computes with (payload and armature in it). The joints
    not in the trajectory stay at ``q_rest`` (model order; default zeros). ``joints``: the ones
    reported and held to their limits (default every model joint). ``effort_limits`` /
    ``velocity_limits``: per reported joint, default the model's (inf: none). Returns a
    Feasibility.
    """
    names = list(model.joint_names if joints is None else joints)
    rep = np.array([model.index(j) for j in names], dtype=np.int64)
    idx = np.array([model.index(j) for j in trajectory.joint_names], dtype=np.int64)
    L = np.asarray(model.effort_limits[rep] if effort_limits is None else effort_limits,
                   dtype=float)
    V = np.asarray(model.velocity_limits[rep] if velocity_limits is None else velocity_limits,
                   dtype=float)
    if L.shape != (len(names),) or V.shape != (len(names),) or np.any(L <= 0) or np.any(V <= 0):
        raise ValueError(f'effort and velocity limits need one value > 0 per joint ({len(names)})')
    t, left = sample_times(trajectory.times[-1], trajectory.times, sample_period)
    qs, qds, qdds = trajectory.sample_relative(t, left)
    Q = np.empty((len(t), model.n))
    Q[:] = np.zeros(model.n) if q_rest is None else np.asarray(q_rest, dtype=float)
    QD, QDD = np.zeros_like(Q), np.zeros_like(Q)
    Q[:, idx], QD[:, idx], QDD[:, idx] = qs, qds, qdds
    tau = rnea(model, Q, QD, QDD)[:, rep]               # one batch call each
    g = gravity_torques(model, Q)[:, rep]
    qd = QD[:, rep]

    with np.errstate(divide='ignore', invalid='ignore'):
        a, c = tau - g, g
        y = (L - np.sign(a) * c) / np.abs(a)                # the largest feasible 1 / k^2
        k_effort = np.where(a == 0, 0.0, 1.0 / np.sqrt(np.maximum(y, 0.0)))
        k_effort = np.where(np.abs(c) > L, np.inf, k_effort)
        k_velocity = np.abs(qd) / V
    over = np.abs(c) > L
    if over.any():                                      # the worst gravity excess
        s, j = np.unravel_index(np.argmax(np.where(over, np.abs(c) / L, 0.0)), over.shape)
        k, kind = np.inf, 'gravity'
    else:
        k_all = np.maximum(k_effort, k_velocity)
        s, j = np.unravel_index(np.argmax(k_all), k_all.shape)
        k = float(k_all[s, j])
        kind = 'effort' if k_effort[s, j] >= k_velocity[s, j] else 'velocity'
    i_tau, i_qd = np.argmax(np.abs(tau), axis=0), np.argmax(np.abs(qd), axis=0)
    cols = np.arange(len(names))
    peak = np.abs(tau)[i_tau, cols]
    peak_time = t[i_tau]
    value = {'gravity': abs(c[s, j]), 'effort': abs(tau[s, j]), 'velocity': abs(qd[s, j])}[kind]
    return Feasibility(
        names=names, peak_effort=peak, peak_effort_time=peak_time, effort_limit=L,
        peak_velocity=np.abs(qd)[i_qd, cols], peak_velocity_time=t[i_qd], velocity_limit=V,
        min_time_scale=k, limiting_joint=names[j] if k > 0 else '',
        limiting_time=float(t[s]), limiting_kind=kind if k > 0 else '',
        limiting_value=float(value), t=t, tau=tau,
        gravity=g, qd=qd)
