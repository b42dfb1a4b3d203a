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
The generalized-momentum observer: the external joint torques an arm feels, without a sensor.

With p = M(q) qd the generalized momentum, the dynamics give dp/dt = tau + C(q, qd)^T qd - g(q)
+ tau_ext (Ṁ = C + C^T). The observer's residual r follows tau_ext through a first-order filter
of time constant 1 / K_O per joint (De Luca et al., "Collision detection and safe reaction with
the DLR-III lightweight manipulator arm", 2006):

    dr/dt = K_O (tau_ext - r)

Discretely, between two samples, with the motor torque tau and tau_ext held constant over the
interval (what a drive applies between two commands), tau_ext is exactly
u = (p(t1) - p(t0) - tau dt - integral of (C^T qd - g) dt) / dt (that integral by the quadratic
through the last three samples, third order, or the trapezoid rule after a reset), and the
filter's exact step for a constant input is
r <- exp(-K_O dt) r + (1 - exp(-K_O dt)) u, so any sample rate, even an irregular one, works.

Each interval's u depends on that interval alone, so an interval the observer cannot trust can be
left out at no cost but a held estimate: one longer than ``max_interval`` or than ``gap_factor``
times the median of the recent ones (a stalled reader, samples dropped: the torques changed in
between unseen and the quadrature spans too much motion) holds r and starts again from the
new sample, as does a sample earlier than the previous one (a clock reset). ``skipped`` counts
them. After a start or a reset, r needs 5 / K_O of integrated intervals to settle from zero
(``settled``; gaps do not count): whatever held the arm before (brakes) shows until then.
"""
from collections import deque
import math

import numpy as np

from ..dynamics import momentum, momentum_and_beta


class MomentumObserver:
    """External joint torques of model (with its payload and armature) from q, qd and tau."""

    def __init__(self, model, gain=50.0, max_interval=np.inf, gap_factor=3.0):
        self.model = model
        self.max_interval, self.gap_factor = float(max_interval), float(gap_factor)
        self._intervals = deque(maxlen=15)
        self.skipped = 0
        g = np.asarray(gain, dtype=float).ravel()
        if g.size == 1:
            g = np.full(model.n, g[0])
        if g.shape != (model.n,) or not np.all(np.isfinite(g)) or np.any(g <= 0):
            raise ValueError(f'observer gain needs one value > 0 or one per joint ({model.n}) '
                             f'(1/s), got {np.asarray(gain).tolist()}')
        self.gain = g
        self._settle_time = 5.0 / g.min()
        self.r = np.zeros(model.n)
        self._integrated = 0.0      # the time integrated since the start or a reset (s)
        self._last = None           # (t, p, C^T qd - g) of the previous sample
        self._before = None         # (t, C^T qd - g) of the one before

    def reset(self, q=None, qd=None, t=None):
        """Start again from zero (at the state q, qd at time t, when given)."""
        self.r = np.zeros(self.model.n)
        self._last = self._before = None
        self._intervals.clear()
        self._integrated = 0.0
        if q is not None:
            self._last = (t, momentum(self.model, q, qd), None)

    def settled(self):
        """
        Return whether r has integrated 5 / K_O (the slowest joint's) since its start.

        Intervals left out (gaps) do not count: a stall right after the first sample must not
        arm collision detection on an estimate that has not converged yet.
        """
        return self._integrated >= self._settle_time

    def _typical_interval(self):
        """Return the median of the recent intervals (inf with fewer than 5)."""
        k = len(self._intervals)
        if k < 5:
            return math.inf
        x = sorted(self._intervals)
        return x[k // 2] if k % 2 else 0.5 * (x[k // 2 - 1] + x[k // 2])

    def update(self, q, qd, tau, t):
        """
        Take a sample and return r, the estimate of the external torques.

        The state (q, qd) at time t (s) and the motor torques ``tau`` applied since the previous
        sample.

        A sample at the time of the previous one changes nothing; one before it starts again
        from there (r held).
        """
        tau = np.asarray(tau, dtype=float)
        p, beta = momentum_and_beta(self.model, q, qd)
        w = -beta                           # C^T qd - g, in O(n)
        last = self._last
        if last is None or last[0] is None:
            self._last = (t, p, w)
            return self.r
        t0, p0, w0 = last
        dt = t - t0
        if dt == 0:
            return self.r
        if dt < 0:                          # the clock went back: start again from here
            self._integrated = 0.0
            self.skipped += 1
            self._before, self._last = None, (t, p, w)
            return self.r
        typical = self._typical_interval()
        self._intervals.append(dt)
        if dt > self.max_interval or dt > self.gap_factor * typical:
            self.skipped += 1               # a gap: hold r, start again from this sample
            self._before, self._last = None, (t, p, w)
            return self.r
        if w0 is None:              # reset at a state: take this sample's C^T qd - g for both
            w0 = w
        if self._before is not None and 0 < t0 - self._before[0] < 10 * dt:
            # the quadratic through (t_before, t0, t) integrated over [t0, t]
            h1, h2, wb = t0 - self._before[0], dt, self._before[1]
            mean = (-h2 * h2 / (6 * h1 * (h1 + h2)) * wb + (h2 / (6 * h1) + 0.5) * w0
                    + (h2 / 3 + h1 / 2) / (h1 + h2) * w)
        else:
            mean = 0.5 * (w + w0)
        u = (p - p0) / dt - tau - mean
        self._integrated += dt
        a = np.exp(-self.gain * dt)
        self.r = a * self.r + (1.0 - a) * u
        self._before = (t0, w0)
        self._last = (t, p, w)
        return self.r


REACTIONS = ('none', 'hold', 'float')


def per_joint(values, n, what, allow_zero=True):
    """Return one value for all joints or one per joint as n floats >= 0 (ValueError)."""
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 1:
        x = np.full(n, x[0])
    if x.shape != (n,) or not np.all(np.isfinite(x)) or np.any(x < 0) or (
            not allow_zero and np.any(x == 0)):
        raise ValueError(f'{what} needs one value or one per joint ({n}), each '
                         f'{">= 0" if allow_zero else "> 0"}, got {np.asarray(values).tolist()}')
    return x


def over_threshold(r, thresholds):
    """Return the indices of the joints whose |r| exceeds a threshold (0: not watched)."""
    return np.flatnonzero((thresholds > 0) & (np.abs(r) > thresholds))
