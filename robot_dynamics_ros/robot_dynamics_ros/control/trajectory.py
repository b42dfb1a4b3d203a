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

"""Trajectory helpers (no ROS): the quintic rest-to-rest profile of the lecture notes."""
import numpy as np


def quintic(q0, qf, duration, t):
    """
    Sample the rest-to-rest quintic from q0 to qf in ``duration`` seconds at times ``t``.

    Positions, velocities and accelerations, with zero velocity and acceleration at both ends;
    ``t`` is clamped to [0, duration].

    q(t) = q0 + (qf - q0) s(t/T),  s(x) = 10x^3 - 15x^4 + 6x^5.
    Returns three arrays of shape (len(t), n).
    """
    if not duration > 0:
        raise ValueError(f'duration must be positive, got {duration}')
    q0, qf = np.asarray(q0, dtype=float), np.asarray(qf, dtype=float)
    if q0.shape != qf.shape or q0.ndim != 1:
        raise ValueError(f'start and goal must be vectors of one length, got {q0.shape} and '
                         f'{qf.shape}')
    x = np.clip(np.asarray(t, dtype=float) / duration, 0.0, 1.0)[:, None]
    s = 10 * x**3 - 15 * x**4 + 6 * x**5
    ds = (30 * x**2 - 60 * x**3 + 30 * x**4) / duration
    dds = (60 * x - 180 * x**2 + 120 * x**3) / duration**2
    dq = qf - q0
    return q0 + dq * s, dq * ds, dq * dds


# ---- joint_trajectory_controller semantics ------------------------------------------------------

def _segment(kind, T, p0, v0, a0, p1, v1, a1, tau):
    """Position, velocity, acceleration at tau in [0, T] of one segment."""
    if kind == 'linear':
        slope = (p1 - p0) / T
        return p0 + slope * tau, slope, np.zeros_like(p0)
    if kind == 'cubic':   # Hermite: positions and velocities at both ends
        c2 = (3 * (p1 - p0) - (2 * v0 + v1) * T) / T**2
        c3 = (2 * (p0 - p1) + (v0 + v1) * T) / T**3
        return (p0 + v0 * tau + c2 * tau**2 + c3 * tau**3, v0 + 2 * c2 * tau + 3 * c3 * tau**2,
                2 * c2 + 6 * c3 * tau)
    # quintic: positions, velocities and accelerations at both ends
    c2 = a0 / 2
    c3 = (20 * (p1 - p0) - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T**2) / (2 * T**3)
    c4 = (30 * (p0 - p1) + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T**2) / (2 * T**4)
    c5 = (12 * (p1 - p0) - 6 * (v1 + v0) * T - (a0 - a1) * T**2) / (2 * T**5)
    return (p0 + v0 * tau + c2 * tau**2 + c3 * tau**3 + c4 * tau**4 + c5 * tau**5,
            v0 + 2 * c2 * tau + 3 * c3 * tau**2 + 4 * c4 * tau**3 + 5 * c5 * tau**4,
            2 * c2 + 6 * c3 * tau + 12 * c4 * tau**2 + 20 * c5 * tau**3)


def _coefficients(kind, T, p0, v0, a0, p1, v1, a1):
    """Return the six polynomial coefficients of segments (arrays segments x joints)."""
    zero = np.zeros_like(p0)
    if kind == 'linear':
        return np.stack([p0, (p1 - p0) / T, zero, zero, zero, zero])
    if kind == 'cubic':
        c2 = (3 * (p1 - p0) - (2 * v0 + v1) * T) / T**2
        c3 = (2 * (p0 - p1) + (v0 + v1) * T) / T**3
        return np.stack([p0, v0, c2, c3, zero, zero])
    c3 = (20 * (p1 - p0) - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T**2) / (2 * T**3)
    c4 = (30 * (p0 - p1) + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T**2) / (2 * T**4)
    c5 = (12 * (p1 - p0) - 6 * (v1 + v0) * T - (a0 - a1) * T**2) / (2 * T**5)
    return np.stack([p0, v0, a0 / 2, c3, c4, c5])


class JointTrajectory:
    """
    A desired motion with joint_trajectory_controller semantics, sampled at absolute times.

    ``times`` are the points' time_from_start (s, strictly increasing, >= 0) after
    ``start_time``; the kind of interpolation follows what every point has: positions only ->
    linear, positions + velocities -> cubic, + accelerations -> quintic. Before the first point
    the motion runs from the state at arrival (``q0``, ``qd0``, zero acceleration); before
    ``start_time`` it holds ``q0``; after the last point it holds that point with zero velocity
    and acceleration.

    ``efforts`` (optional, per point): a feedforward added to the output, linear between the
    points, from ``effort0`` (the feedforward at arrival; zero by default) to the first point, the
    last point's after the end.
    """

    def __init__(self, joint_names, times, positions, velocities=None, accelerations=None, *,
                 start_time, q0, qd0=None, efforts=None, effort0=None):
        self.joint_names = tuple(joint_names)
        k = len(self.joint_names)
        if k == 0:
            raise ValueError('the trajectory names no joint')
        if len(set(self.joint_names)) != k:
            raise ValueError(f'the trajectory names a joint twice: {list(self.joint_names)}')
        times = np.asarray(times, dtype=float)
        m = len(times)
        if m == 0:
            raise ValueError('the trajectory has no point')
        if not np.all(np.isfinite(times)) or times[0] < 0 or np.any(np.diff(times) <= 0):
            raise ValueError(f'time_from_start must be >= 0 and strictly increasing, got '
                             f'{times.tolist()}')

        def table(rows, what):
            if rows is None:
                return None
            try:
                a = np.asarray(rows, dtype=float)
            except ValueError:
                raise ValueError(f'every point needs {k} {what}') from None
            if a.shape != (m, k):
                raise ValueError(f'every point needs {k} {what} (one per joint), got shape '
                                 f'{np.shape(rows)} for {m} points')
            if not np.all(np.isfinite(a)):
                raise ValueError(f'{what} contain NaN or Inf')
            return a

        self.positions = table(positions, 'positions')
        if self.positions is None:
            raise ValueError('every point needs positions')
        self.velocities = table(velocities, 'velocities')
        self.accelerations = table(accelerations, 'accelerations')
        self.efforts = table(efforts, 'efforts')
        self.effort0 = (np.zeros(k) if effort0 is None else
                        np.asarray(effort0, dtype=float).reshape(k))
        if self.accelerations is not None and self.velocities is None:
            raise ValueError('points with accelerations need velocities too')
        self.kind = ('linear' if self.velocities is None else
                     'cubic' if self.accelerations is None else 'quintic')
        self.times = times
        self.start_time = float(start_time)
        self.q0 = np.asarray(q0, dtype=float).reshape(k)
        self.qd0 = np.zeros(k) if qd0 is None else np.asarray(qd0, dtype=float).reshape(k)
        self.end_time = self.start_time + times[-1]

    def _point(self, j):
        zero = np.zeros(len(self.joint_names))
        v = zero if self.velocities is None else self.velocities[j]
        a = zero if self.accelerations is None else self.accelerations[j]
        return self.positions[j], v, a

    def sample(self, t):
        """(q, qd, qdd) of the trajectory's joints at absolute time t (s)."""
        tau = t - self.start_time
        k = len(self.joint_names)
        if tau < 0:
            return self.q0.copy(), np.zeros(k), np.zeros(k)
        if tau >= self.times[-1]:
            return self.positions[-1].copy(), np.zeros(k), np.zeros(k)
        j = int(np.searchsorted(self.times, tau, side='right'))   # the point ahead
        p1, v1, a1 = self._point(j)
        if j == 0:
            t0, p0, v0, a0 = 0.0, self.q0, self.qd0, np.zeros(k)
            if self.kind == 'linear':
                v0 = np.zeros(k)
        else:
            t0 = self.times[j - 1]
            p0, v0, a0 = self._point(j - 1)
        return _segment(self.kind, self.times[j] - t0, p0, v0, a0, p1, v1, a1, tau - t0)

    def effort(self, t):
        """Return the points' effort feedforward at absolute time t (zeros without efforts)."""
        k = len(self.joint_names)
        if self.efforts is None:
            return np.zeros(k)
        tau = t - self.start_time
        if tau <= 0:
            return self.effort0.copy()
        if tau >= self.times[-1]:
            return self.efforts[-1].copy()
        j = int(np.searchsorted(self.times, tau, side='right'))   # the point ahead
        t0, e0 = (0.0, self.effort0) if j == 0 else (self.times[j - 1], self.efforts[j - 1])
        s = (tau - t0) / (self.times[j] - t0)
        return e0 + s * (self.efforts[j] - e0)

    def sample_relative(self, tau, left=None):
        """
        Sample at many times from the start at once: (q, qd, qdd), each of shape (len(tau), k).

        ``tau``: seconds after ``start_time``. Where ``left`` is true and tau is a point's
        time_from_start, the segment that ends there is taken (its end values: accelerations
        jump at the points of a cubic), else the one that starts there, as ``sample`` does.
        """
        tau = np.asarray(tau, dtype=float)
        k, m = len(self.joint_names), len(self.times)
        j = np.searchsorted(self.times, tau, side='right')          # the point ahead
        if left is not None:
            j = np.where(left & (tau > 0), np.searchsorted(self.times, tau, side='left'), j)
        # the segment from S[j] to S[j + 1] (= point j), S[0] the state at arrival: its
        # polynomial coefficients once per segment, then Horner at every sample
        zero = np.zeros((1, k))
        v = np.zeros((m, k)) if self.velocities is None else self.velocities
        a = np.zeros((m, k)) if self.accelerations is None else self.accelerations
        v0 = zero if self.kind == 'linear' else self.qd0[None]
        S_p = np.vstack([self.q0[None], self.positions])
        S_v, S_a = np.vstack([v0, v]), np.vstack([zero, a])
        starts = np.concatenate([[0.0], self.times])
        T = (self.times - starts[:-1])[:, None]
        T = np.where(T > 0, T, 1.0)                 # (a zero-length first segment: never used)
        c = _coefficients(self.kind, T, S_p[:-1], S_v[:-1], S_a[:-1], S_p[1:], S_v[1:],
                          S_a[1:])                  # (6, m, k)
        js = np.minimum(j, m - 1)
        x = (tau - starts[js])[:, None]
        cs = c[:, js]                               # (6, N, k)
        q = cs[5] * x + cs[4]
        qd = 5 * cs[5] * x + 4 * cs[4]
        qdd = 20 * cs[5] * x + 12 * cs[4]
        for i in (3, 2):
            q = q * x + cs[i]
            qd = qd * x + i * cs[i]
        qdd = qdd * x + 6 * cs[3]
        qdd = qdd * x + 2 * cs[2]
        q = (q * x + cs[1]) * x + cs[0]
        qd = qd * x + cs[1]
        before, after = tau < 0, (tau >= 0) & (j >= m)
        q[before], qd[before], qdd[before] = self.q0, 0.0, 0.0
        q[after], qd[after], qdd[after] = self.positions[-1], 0.0, 0.0
        return q, qd, qdd

    def scaled(self, k):
        """
        Return the same path k times slower (k > 0): time_from_start x k, velocities / k.

        Accelerations / k^2, the velocity at arrival / k; ``start_time``, q0 and the efforts
        stay. For the linear, cubic and quintic segments this is exactly q_k(t) = q(t / k).
        """
        if not (k > 0 and np.isfinite(k)):
            raise ValueError(f'time scale must be finite and > 0, got {k}')
        return JointTrajectory(
            self.joint_names, self.times * k, self.positions,
            None if self.velocities is None else self.velocities / k,
            None if self.accelerations is None else self.accelerations / k**2,
            start_time=self.start_time, q0=self.q0, qd0=self.qd0 / k, efforts=self.efforts,
            effort0=self.effort0)
