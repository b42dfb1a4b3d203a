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
from dataclasses import dataclass
import math

from numba import njit, types
import numpy as np

from ..dynamics.kernels import entry_point, momentum as momentum_kernel, split_data
from ..dynamics.values import Each, read_only

# The observer's state lives in three arrays that its compiled step updates in place:
R, P0, W0, WB, P, W, GAIN = range(7)    # rows of vec (n each): r; p and w = C^T qd - g of the last
#                                         sample; w of the one before; scratch p, w; the gains K_O
T0, TB, HAS_LAST, HAS_BEFORE, INTEGRATED, SKIPPED, MAX_INTERVAL, GAP_FACTOR, COUNT = range(9)
#                                       sc: times of the last two samples, flags, counters, limits
WINDOW = 15                             # iv: the recent intervals (a ring) and a sorting scratch
DEFAULT_GAP_FACTOR = 3.0                # an interval this many times the recent median is a gap
DEFAULT_GAIN = 200.0                    # K_O (1/s): observer.gain's default (observer.md: why)

_F1, _F2 = (types.Array(types.float64, d, 'C') for d in (1, 2))


@njit(cache=True, inline='always')
def _median(iv, k):
    """Return the median of the first k of iv[0] (sorted in iv[1]); inf with fewer than 5."""
    if k < 5:
        return math.inf
    x = iv[1]
    for i in range(k):                  # insertion sort into the scratch row
        y, j = iv[0, i], i
        while j > 0 and x[j - 1] > y:
            x[j] = x[j - 1]
            j -= 1
        x[j] = y
    return x[k // 2] if k % 2 else 0.5 * (x[k // 2 - 1] + x[k // 2])


@njit(cache=True, inline='always')
def _restart(vec, sc, t):
    """Make this sample (p, w in the scratch rows) the last one, with none before it."""
    sc[T0], sc[HAS_LAST], sc[HAS_BEFORE] = t, 1.0, 0.0
    for i in range(vec.shape[1]):
        vec[P0, i], vec[W0, i] = vec[P, i], vec[W, i]


@entry_point(types.void(_F1, _F1, _F1, _F1, types.float64, _F2, _F1, _F2))
def observer_step(data, q, qd, tau, t, vec, sc, iv):
    """MomentumObserver.update in compiled code: one sample (see the module's docstring)."""
    n, model, ws, _ = split_data(data)      # the model's one array, as every entry point
    if q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n or vec.shape[1] != n:
        raise ValueError('q, qd and tau must have one value per joint')
    p, w = vec[P], vec[W]
    momentum_kernel(model, ws, q, qd, p, w)      # w = beta = g - C^T qd
    for i in range(n):
        w[i] = -w[i]
    if sc[HAS_LAST] == 0.0:
        _restart(vec, sc, t)
        return
    t0 = sc[T0]
    dt = t - t0
    if dt == 0.0:
        return
    if dt < 0.0:                        # the clock went back: start again from here
        sc[INTEGRATED] = 0.0
        sc[SKIPPED] += 1.0
        _restart(vec, sc, t)
        return
    count = int(sc[COUNT])
    typical = _median(iv, min(count, WINDOW))
    iv[0, count % WINDOW] = dt
    sc[COUNT] = count + 1
    if dt > sc[MAX_INTERVAL] or dt > sc[GAP_FACTOR] * typical:
        sc[SKIPPED] += 1.0              # a gap: hold r, start again from this sample
        _restart(vec, sc, t)
        return
    quadratic = sc[HAS_BEFORE] != 0.0 and 0.0 < t0 - sc[TB] < 10.0 * dt
    if quadratic:                       # the quadratic through (t_before, t0, t) over [t0, t]
        h1, h2 = t0 - sc[TB], dt
        cb = -h2 * h2 / (6.0 * h1 * (h1 + h2))
        c0 = h2 / (6.0 * h1) + 0.5
        c1 = (h2 / 3.0 + h1 / 2.0) / (h1 + h2)
    r, p0, w0, wb, gain = vec[R], vec[P0], vec[W0], vec[WB], vec[GAIN]
    for i in range(n):
        if quadratic:
            mean = cb * wb[i] + c0 * w0[i] + c1 * w[i]
        else:
            mean = 0.5 * (w[i] + w0[i])
        u = (p[i] - p0[i]) / dt - tau[i] - mean
        a = math.exp(-gain[i] * dt)
        r[i] = a * r[i] + (1.0 - a) * u
        wb[i] = w0[i]                   # the last sample becomes the one before, this the last
    sc[INTEGRATED] += dt
    sc[TB] = t0
    _restart(vec, sc, t)
    sc[HAS_BEFORE] = 1.0


@entry_point(types.void(_F1, _F1, _F1, types.float64))
def observer_follow(lagged, x, gain, dt):
    """Set ``lagged`` to a lagged + (1 - a) x, a = exp(-gain dt): the filter of r (update)."""
    if x.shape[0] != lagged.shape[0] or gain.shape[0] != lagged.shape[0]:
        raise ValueError('the observer got arrays of the wrong size for this model')
    for i in range(lagged.shape[0]):
        a = math.exp(-gain[i] * dt)
        lagged[i] = a * lagged[i] + (1.0 - a) * x[i]


class MomentumObserver:
    """External joint torques of model (with its payload and armature) from q, qd and tau."""

    def __init__(self, model, gain=DEFAULT_GAIN, max_interval=np.inf,
                 gap_factor=DEFAULT_GAP_FACTOR):
        self.model = model
        g = np.asarray(gain, dtype=float).ravel()
        if g.size == 1:
            g = np.full(model.n, g[0])
        if g.shape != (model.n,) or not np.all(np.isfinite(g)) or np.any(g <= 0):
            raise ValueError(f'observer gain needs one value > 0 or one per joint ({model.n}) '
                             f'(1/s), got {np.asarray(gain).tolist()}')
        self._vec = np.zeros((7, model.n))
        self._sc = np.zeros(9)
        self._iv = np.zeros((2, WINDOW))
        self._vec[GAIN] = g
        self.gain = self._vec[GAIN]
        self.r = self._vec[R]           # updated in place by every sample
        self.followed = np.zeros(model.n)   # what r makes of update's ``follow`` (see there)
        self.max_interval, self.gap_factor = max_interval, gap_factor
        self._settle_time = 5.0 / g.min()

    @property
    def max_interval(self):
        """Return the interval (s) beyond which a sample is a gap."""
        return self._sc[MAX_INTERVAL]

    @max_interval.setter
    def max_interval(self, seconds):
        self._sc[MAX_INTERVAL] = seconds

    def runs(self, model, settings):
        """Whether this observer is the one ``settings`` ask of ``model`` (its state then kept)."""
        return np.array_equal(self.model._model, model._model) and \
            np.array_equal(self.gain, settings.gain)

    @property
    def gap_factor(self):
        """Return the multiple of the recent median interval beyond which a sample is a gap."""
        return self._sc[GAP_FACTOR]

    @gap_factor.setter
    def gap_factor(self, factor):
        self._sc[GAP_FACTOR] = factor

    @property
    def skipped(self):
        """Return how many samples started the estimate again (gaps, a clock that went back)."""
        return int(self._sc[SKIPPED])

    def reset(self):
        """Start again from zero at the next sample."""
        self.r[:] = 0.0
        self.followed[:] = 0.0
        sc = self._sc
        sc[HAS_LAST] = sc[HAS_BEFORE] = sc[INTEGRATED] = sc[COUNT] = 0.0

    def settled(self):
        """
        Return whether r has integrated 5 / K_O (the slowest joint's) since its start.

        Intervals left out (gaps) do not count: a stall right after the first sample must not
        arm collision detection on an estimate that has not converged yet.
        """
        return self._sc[INTEGRATED] >= self._settle_time

    def update(self, q, qd, tau, t, follow=None):
        """
        Take a sample and return r, the estimate of the external torques (updated in place).

        The state (q, qd) at time t (s) and the motor torques ``tau`` applied since the previous
        sample.

        A sample at the time of the previous one changes nothing; one before it starts again
        from there (r held). ``follow`` (n torques, or None): a torque taken out of ``tau``
        (the modelled friction), which ``followed`` then lags as r does what it is in, sample
        for sample: on an arm without that torque r holds it lagged, and ``r - followed`` is
        then the rest (what r alone, against the torque at this sample, is not near a
        reversal of a Coulomb friction's sign).
        """
        sc = self._sc
        before = sc[INTEGRATED]
        args = (self._vec, sc, self._iv)
        try:
            observer_step(self.model._data, q, qd, tau, t, *args)
        except (TypeError, ValueError):     # not float64 arrays of n (the fast path): convert
            n = self.model.n
            q, qd, tau = (np.array(x, dtype=float) for x in (q, qd, tau))   # writable copies
            if q.shape != (n,) or qd.shape != (n,) or tau.shape != (n,):
                raise ValueError(f'q, qd and tau must have shape ({n},), got {q.shape}, '
                                 f'{qd.shape}, {tau.shape}') from None
            observer_step(self.model._data, q, qd, tau, float(t), *args)
        if follow is not None and sc[INTEGRATED] > before:
            dt = float(sc[INTEGRATED] - before)
            try:
                observer_follow(self.followed, follow, self.gain, dt)
            except (TypeError, ValueError):     # not a float64 array of n: convert
                observer_follow(self.followed, np.array(follow, dtype=float).reshape(
                    self.model.n), self.gain, dt)
        return self.r


REACTIONS = ('none', 'hold', 'float')
# what the observer's parameters must be (by the node's names): checked by ``check``, shown by
# the node's descriptors, --help and the reference
RULES = {'observer.gain': Each(0.0, strict=True, note='(1/s)'),
         'collision.thresholds': Each(0.0, note='(N m; 0: not watched)'),
         'effort_gain': Each(0.0, strict=True)}


@dataclass(frozen=True)
class ObserverSettings:
    """
    What the observer and collision detection run with, checked once (``check``), never changed.

    ``gain``: K_O per joint (1/s); ``thresholds``: the collision threshold per joint (N m, 0:
    not watched); ``effort_gain``: torque per unit of a joint_states effort, per joint;
    ``max_interval``: an interval between samples longer than this is a gap (s); ``enabled``:
    whether an observer runs at all (the thresholds and gains are checked either way).
    """

    enabled: bool
    gain: np.ndarray
    thresholds: np.ndarray
    effort_gain: np.ndarray
    max_interval: float

    def __post_init__(self):
        read_only(self)


def check(n, enabled, gain, thresholds, effort_gain, max_interval):
    """Return the ObserverSettings for an arm of ``n`` joints; ValueError naming the value."""
    return ObserverSettings(
        enabled=bool(enabled),
        gain=RULES['observer.gain'].check('observer.gain', gain, n),
        thresholds=RULES['collision.thresholds'].check('collision.thresholds', thresholds, n),
        effort_gain=RULES['effort_gain'].check('effort_gain', effort_gain, n),
        max_interval=float(max_interval))


def over_threshold(r, thresholds):
    """Return the indices of the joints whose ``|r|`` exceeds a threshold (0: not watched)."""
    return np.flatnonzero((thresholds > 0) & (np.abs(r) > thresholds))
