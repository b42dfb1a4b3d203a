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
Identification of the dynamic parameters of an arm from recorded motion (no ROS).

The model is linear in its parameters, tau = Y(q, qd, qdd) pi (``dynamics.regressor``: 10
inertial parameters per body; viscous and Coulomb friction, armature and a torque offset per
joint: the offset is a torque sensor's bias, and with the Coulomb term a friction that differs
with the direction of motion, fc + offset forwards and fc - offset backwards). Not every
parameter changes the torques: some never (the mass of a body on a vertical first axis), some only
in fixed combinations (what a child body adds to its parent's inertia). The **base parameters**
are a set of independent combinations that determine the torques exactly: Gautier's method, a QR
decomposition with column pivoting of the regressor of random states.

From a recording (``Recording``: times, positions, velocities if measured, efforts):

1. ``prepare``: onto a uniform time grid, zero-phase low-pass filtered (Butterworth, forward and
   backward), velocities differentiated from positions when not measured, accelerations from
   velocities, the filter's edges cut and the result decimated to ten samples per cut-off period.
2. ``least_squares``: weighted least squares on the base parameters (each joint's rows weighted by
   the inverse of its residual's standard deviation), with the condition number of the base
   regressor and each base parameter's relative standard deviation.
3. ``consistent``: the full parameters by a semidefinite program (cvxpy): the data fitted as
   closely, each body's 4x4 pseudo-inertia positive semi-definite (Wensing, Kim & Slotine 2017,
   so a real mass distribution exists), friction and armature >= 0 (offsets of any sign), and
   in the directions the data cannot see the values stay closest to the description's (a small
   weighted pull towards the prior).
4. ``payload``: only a rigid payload's 10 parameters on one link, the rest of the arm as described.

scipy and cvxpy are imported by the functions that use them, never at import: nodes do not load
this module.
"""
from dataclasses import dataclass, field, replace

import numpy as np

from ..dynamics import rnea
from ..dynamics.model import com_inertia, inertia_six
from ..dynamics.regressor import (inertia_parameters, inertial_parameters, parameter_names,
                                  parameters, regressor, spatial_inertia)

DEFAULT_CUTOFF = 10.0           # Hz: the low-pass cut-off of positions, velocities and efforts
# rad/s (m/s): slower, a joint's equation is left out of the fits (``observation``). With
# Coulomb friction of 1-2.5 N m and stiction in the simulator, the gains of ur5's joints were
# off by up to 10 % with every sample fitted, within 0.5 % without those below 0.05 rad/s
SLOW = 0.05
# In the fit of the gains with a known load, the rows (a tenth of a cut-off period each: half a
# period) either side of a slow one are left out too: what a stick does (any friction within
# +-fs) spreads through the filter over about a period. ur5 with 1-2.5 N m of Coulomb friction
# and stiction, a 2 kg known load: wrist_3's gain (its torque 1.6 N m RMS) -2.9 % without,
# -1.2 % with 2 rows, -0.07 % with 5. Not in the other fits: the gain of ur5's wrist_3 that
# rests on its description (test_identification_realistic) went from within 2 % to -3 to -7 %
SLOW_REACH = 5
# |R_kk| / |R_00| below which a pivoted column counts as dependent. Measured on random states of
# ur5, panda, kinova, z1, xarm7: independent columns >= 1.7e-2, dependent ones <= 5e-13, and one
# of xarm7 at 3.5e-7 (a combination that tiny offsets in its description barely excite: the fit
# of a real recording could not see it, condition number 6.8e7). Below 1e-5: not identifiable.
RANK_TOLERANCE = 1e-5


class IdentificationError(ValueError):
    """The data cannot give what was asked; the message says why."""


# ---- base parameters ----------------------------------------------------------------------------

def position_range(model):
    """Return (lo, hi): the position limits, +-pi where a joint has none (continuous)."""
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    return np.where(np.isfinite(lo), lo, -np.pi), np.where(np.isfinite(hi), hi, np.pi)


def random_states(model, count, rng):
    """Return q, qd, qdd: ``count`` random states within the position limits (or +-pi)."""
    lo, hi = position_range(model)
    q = rng.uniform(lo, hi, size=(count, model.n))
    return q, rng.normal(size=(count, model.n)), rng.normal(size=(count, model.n))


@dataclass
class BaseParameters:
    """
    The identifiable combinations of the parameters: beta = pi[independent] + K pi[dependent].

    ``independent`` and ``dependent`` index the full parameters (``names``); parameters that
    change no torque at all are dependent with a zero column of K.
    """

    names: list
    independent: np.ndarray
    dependent: np.ndarray
    K: np.ndarray

    @property
    def count(self):
        return len(self.independent)

    def of(self, pi):
        """Return beta of full parameters pi."""
        pi = np.asarray(pi)
        return pi[self.independent] + self.K @ pi[self.dependent]

    def columns(self, Y):
        """Return the base regressor: the independent columns of Y (last axis)."""
        return Y[..., self.independent]

    def combination(self, k, digits=4):
        """Return base parameter k as text: 'link2.I_zz + 0.09 link3.m - ...'."""
        terms = [self.names[self.independent[k]]]
        for c, j in sorted(zip(self.K[k], self.dependent), key=lambda x: -abs(x[0])):
            if c != 0.0:
                terms.append(f'{"-" if c < 0 else "+"} {abs(c):.{digits}g} {self.names[j]}')
        return ' '.join(terms)

    @property
    def unidentifiable(self):
        """Names of the parameters that change no torque (a zero column of K)."""
        return [self.names[j] for j, col in zip(self.dependent, self.K.T) if not col.any()]


def base_parameters(model, joint_columns=True, samples=None, seed=0):
    """
    Find the base parameters of a model by QR with column pivoting (Gautier 1990).

    The regressor of ``samples`` random states (default: enough for five times as many rows as
    parameters), column-pivoted QR: the first r pivots (``|R_kk| > RANK_TOLERANCE |R_00|``) are
    independent, K = R11^-1 R12 expresses the others through them.
    """
    from scipy.linalg import qr, solve_triangular
    P = (14 if joint_columns else 10) * model.n
    samples = samples or max(20, -(-5 * P // model.n))
    q, qd, qdd = random_states(model, samples, np.random.default_rng(seed))
    eps = 0.5 if joint_columns else None        # any epsilon: tanh columns are independent
    W = regressor(model, q, qd, qdd, eps).reshape(-1, P)
    _, R, piv = qr(W, mode='economic', pivoting=True)
    d = np.abs(np.diag(R))
    r = int(np.sum(d > RANK_TOLERANCE * d[0]))
    K = solve_triangular(R[:r, :r], R[:r, r:])
    K[np.abs(K) < 1e-10] = 0.0
    return BaseParameters(parameter_names(model, joint_columns), piv[:r], piv[r:], K)


# ---- data ---------------------------------------------------------------------------------------

@dataclass
class Recording:
    """Joint data of one recording, columns in ``names`` order; velocity may be None."""

    names: list
    t: np.ndarray                   # (K,) s
    position: np.ndarray            # (K, n)
    velocity: np.ndarray            # (K, n) or None: differentiated from positions
    effort: np.ndarray              # (K, n)
    source: str = ''
    notes: list = field(default_factory=list)       # what reading it dropped or assumed


@dataclass
class Samples:
    """
    States and efforts in model order on a uniform grid, and how to filter what they give.

    ``q``, ``qd``, ``qdd`` are low-pass filtered (qdd differentiated after the filter); ``tau``
    is as measured. ``observation`` filters the regressor and the torques alike with ``sos``
    (parallel filtering: the filtered torque is then exactly the filtered regressor times the
    parameters), cuts ``edge`` samples at both ends and keeps every ``step``-th.
    """

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    rate: float                     # Hz of the grid
    cutoff: float                   # Hz
    sos: np.ndarray
    edge: int
    step: int
    read: int                       # samples in the recordings
    dropped: dict                   # reason -> count
    parts: tuple = ()               # (start, stop) of each recording's rows, when joined

    @property
    def segments(self):
        return self.parts or ((0, len(self.q)),)

    @property
    def rows(self):
        """Return the (start, stop) rows of each recording in the filtered, decimated data."""
        out, start = [], 0
        for a, b in self.segments:
            k = len(range(self.edge, b - a - self.edge, self.step))
            out.append((start, start + k))
            start += k
        return out

    @property
    def used(self):
        """Return how many samples enter the fit."""
        return self.rows[-1][1]


def model_order(model, recording):
    """Reorder a recording's columns into the model's joints (IdentificationError if missing)."""
    missing = [j for j in model.joint_names if j not in recording.names]
    if missing:
        extra = [j for j in recording.names if j not in model.joint_names]
        raise IdentificationError(
            f'{recording.source}: joints {missing} of the model are not in the recording'
            + (f' (it has {extra}, which the model lacks)' if extra else ''))
    idx = [list(recording.names).index(j) for j in model.joint_names]
    return idx


def prepare(model, recording, cutoff=DEFAULT_CUTOFF, max_gap=None, rate=None):
    """
    Turn a recording into filtered samples in model order (see the module doc).

    The uniform grid runs at the recording's median rate, or at ``rate`` (Hz) when given: the
    rate of another recording, to join them with ``concatenate``.

    Samples with the stamp of the one before are dropped (counted in ``dropped``). Refused with
    IdentificationError: joints missing, values not finite, stamps going back,
    a gap longer than ``max_gap`` (default: 20 sample periods), too short to filter, a cut-off
    not below the Nyquist frequency.
    """
    from scipy.signal import butter, sosfiltfilt
    src = recording.source or 'recording'
    idx = model_order(model, recording)
    t = np.asarray(recording.t, dtype=float)
    arrays = {'position': recording.position, 'effort': recording.effort}
    if recording.velocity is not None:
        arrays['velocity'] = recording.velocity
    for what, x in arrays.items():
        x = np.asarray(x, dtype=float)[:, idx]
        bad = ~np.isfinite(x)
        if bad.any():
            k, j = np.argwhere(bad)[0]
            raise IdentificationError(
                f'{src}: {what} of joint {model.joint_names[j]} is not finite at t = '
                f'{t[k] - t[0]:.3f} s ({int(bad.any(axis=1).sum())} samples with NaN or inf)')
        arrays[what] = x
    repeated = np.flatnonzero(np.diff(t) == 0) + 1
    if len(repeated):               # a state sent again (a driver, a simulator waiting): the first
        keep = np.setdiff1d(np.arange(len(t)), repeated)
        t = t[keep]
        arrays = {what: x[keep] for what, x in arrays.items()}
    if len(t) < 10:
        raise IdentificationError(f'{src}: {len(t)} samples, too few to identify anything')
    dt = np.diff(t)
    if np.any(dt < 0):
        k = int(np.argmax(dt < 0))
        raise IdentificationError(f'{src}: stamps go back in time at t = {t[k] - t[0]:.3f} s')
    recorded = 1.0 / float(np.median(dt))
    max_gap = 20 / recorded if max_gap is None else max_gap
    rate = recorded if rate is None else float(rate)
    period = 1.0 / rate
    if dt.max() > max_gap:
        k = int(np.argmax(dt))
        raise IdentificationError(
            f'{src}: a gap of {dt[k]:.3f} s without messages at t = {t[k] - t[0]:.3f} s (the '
            f'recording runs at {recorded:.0f} Hz): record again, or split the bag there')
    if not 0 < cutoff < rate / 2:
        raise IdentificationError(f'{src}: the cut-off {cutoff:g} Hz must lie below half the '
                                  f'sample rate ({rate:.0f} Hz)')
    grid = t[0] + period * np.arange(int(np.floor((t[-1] - t[0]) / period + 1e-6)) + 1)

    def uniform(x):
        return np.stack([np.interp(grid, t, x[:, j]) for j in range(x.shape[1])], axis=1)

    sos = butter(4, cutoff, fs=rate, output='sos')
    # the filter's start and end transients: cut at both ends (a longer padding makes them small)
    edge = int(np.ceil(3 * rate / cutoff))
    if len(grid) < 4 * edge:
        raise IdentificationError(
            f'{src}: {grid[-1] - grid[0]:.2f} s of data, too short to filter at {cutoff:g} Hz '
            f'(at least {4 * edge / rate:.2f} s)')

    def filtered(x):
        return sosfiltfilt(sos, uniform(x), axis=0, padlen=edge)

    q = filtered(arrays['position'])
    qd = filtered(arrays['velocity']) if 'velocity' in arrays else derivative(q, period)
    qdd = derivative(qd, period)
    step = max(1, int(rate / (10 * cutoff)))
    dropped = {'filter edges': 2 * edge}
    if len(repeated):
        dropped['repeated stamps'] = len(repeated)
    if step > 1:
        kept = len(range(edge, len(grid) - edge, step))
        dropped[f'decimated to {rate / step:.0f} Hz'] = len(grid) - 2 * edge - kept
    return Samples(q, qd, qdd, uniform(arrays['effort']), rate, cutoff, sos, edge, step,
                   len(t), dropped)


def derivative(x, h):
    """
    Differentiate the rows of x (sample period h) by fourth-order central differences.

    Error (w h)^4 / 30 relative for a sine of w rad/s, against (w h)^2 / 6 for the
    second-order ones of np.gradient (1.6e-6 at 0.5 Hz and 1 kHz: visible in the fit). The two
    samples at each end take np.gradient's; the filter's edges are cut anyway.
    """
    out = np.gradient(x, h, axis=0)
    if len(x) >= 5:
        out[2:-2] = (x[:-4] - 8 * x[1:-3] + 8 * x[3:-1] - x[4:]) / (12 * h)
    return out


def concatenate(samples):
    """Join several recordings' samples (filtered each on its own: see ``segments``)."""
    first = samples[0]
    if any(s.rate != first.rate or s.cutoff != first.cutoff for s in samples):
        rates = sorted({f'{s.rate:.0f} Hz' for s in samples})
        raise IdentificationError(f'the recordings have different sample rates {rates}')
    dropped, parts, start = {}, [], 0
    for s in samples:
        for k, v in s.dropped.items():
            dropped[k] = dropped.get(k, 0) + v
        parts.append((start, start + len(s.q)))
        start += len(s.q)
    return Samples(*(np.concatenate([getattr(s, a) for s in samples]) for a in
                     ('q', 'qd', 'qdd', 'tau')), first.rate, first.cutoff, first.sos,
                   first.edge, first.step, sum(s.read for s in samples), dropped, tuple(parts))


def _filter(samples, x):
    """Filter x (rows as the samples') per segment, cut the edges and decimate."""
    from scipy.signal import sosfiltfilt
    out = []
    for a, b in samples.segments:
        y = sosfiltfilt(samples.sos, x[a:b].reshape(b - a, -1), axis=0, padlen=samples.edge)
        out.append(y[samples.edge:b - a - samples.edge:samples.step])
    return np.concatenate(out).reshape((-1,) + x.shape[1:])


# ---- fits ---------------------------------------------------------------------------------------

@dataclass
class LeastSquares:
    """Weighted least squares on the base parameters."""

    base: BaseParameters
    beta: np.ndarray
    relative_std: np.ndarray        # sigma(beta_k) / |beta_k|
    condition: float                # of the base regressor (columns scaled to unit norm)
    weights: np.ndarray             # per joint, 1 / sigma of its residual
    rows: int
    residual: np.ndarray = None     # (K, n): the torques the fit leaves, filtered and decimated


def observation(model, samples, epsilon, reach=0):
    """
    Return the filtered, decimated regressor (K, n, 14 n) and torques (K, n) the fits take.

    A joint's equation at a sample where it moves slower than ``SLOW`` (or than a quarter of its
    RMS velocity, for a joint that moves slowly throughout) is left out (its row and torque
    zeroed): around a reversal a real joint sticks and its friction is anything within +-fs,
    which no smooth sign fits. With ``reach``, the ``reach`` rows either side of such a row too.
    """
    Y = regressor(model, samples.q, samples.qd, samples.qdd, epsilon)
    Y, tau = _filter(samples, Y), _filter(samples, samples.tau)
    qd = _filter(samples, samples.qd)
    slow = _widened(np.abs(qd) < np.minimum(SLOW, 0.25 * rms(qd)), reach)
    Y[slow], tau[slow] = 0.0, 0.0
    return Y, tau


def _widened(mask, k):
    """Return ``mask`` (K, n) with each True spread to the k rows either side of it."""
    if k <= 0 or not mask.any():
        return mask
    c = np.concatenate([np.zeros((1, mask.shape[1])), np.cumsum(mask, axis=0)])
    K = len(mask)
    hi = np.minimum(np.arange(K) + k + 1, K)
    lo = np.maximum(np.arange(K) - k, 0)
    return (c[hi] - c[lo]) > 0


def condition_number(W):
    """Return the condition number of W with its columns scaled to unit norm."""
    norms = np.linalg.norm(W, axis=0)
    s = np.linalg.svd(W / np.where(norms > 0, norms, 1.0), compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float('inf')


def least_squares(model, samples, base, epsilon):
    """
    Fit the base parameters; IdentificationError naming the unexcited ones when rank deficient.

    Ordinary least squares first; each joint's residual standard deviation then weights its rows
    and the fit is repeated (Gautier & Poignet 2001).
    """
    Y, tau = observation(model, samples, epsilon)
    K, n = tau.shape
    W = base.columns(Y)                          # (K, n, r)
    r = base.count
    if K * n < 2 * r:
        raise IdentificationError(f'{K} samples ({K * n} torque equations) for {r} base '
                                  f'parameters: record longer')
    moving = int(np.count_nonzero(np.any(W != 0.0, axis=2)))
    if moving < 2 * r:
        raise IdentificationError(
            f'too little excitation: {moving} of the {K * n} torque equations have their joint '
            f'moving faster than {SLOW:g} rad/s (m/s), for {r} base parameters. Move every '
            f'joint through its range, at several speeds (robot-dynamics excite)')
    A = W.reshape(-1, r)
    norms = np.linalg.norm(A, axis=0)
    U, s, Vt = np.linalg.svd(A / np.where(norms > 0, norms, 1.0), full_matrices=False)
    if s[-1] < 1e-6 * s[0]:
        weak = [k for k in range(r) if norms[k] == 0]
        for v in Vt[s < 1e-6 * s[0]]:
            weak.append(int(np.argmax(np.abs(v))))
        weak = sorted(set(weak))
        raise IdentificationError(
            f'too little excitation: {int(np.sum(s < 1e-6 * s[0]))} of the {r} base '
            f'parameters cannot be told apart in these data (condition number '
            f'{s[0] / max(s[-1], 1e-300):.3g}); not excited: '
            + '; '.join(base.combination(k, 3) for k in weak[:6])
            + ('; ...' if len(weak) > 6 else '')
            + '. Move every joint through its range, at several speeds (robot-dynamics excite)')
    beta = np.linalg.lstsq(A, tau.ravel(), rcond=None)[0]
    residual = (A @ beta - tau.ravel()).reshape(K, n)
    sigma = np.sqrt(np.sum(residual ** 2, axis=0) / max(K - r / n, 1))
    sigma = np.where(sigma > 1e-12 * max(sigma.max(), 1e-300), sigma, max(sigma.max(), 1e-12))
    weights = 1.0 / sigma
    Aw = (W * weights[None, :, None]).reshape(-1, r)
    beta = np.linalg.lstsq(Aw, (tau * weights).ravel(), rcond=None)[0]
    cov = np.linalg.pinv(Aw.T @ Aw)
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    rel = std / np.maximum(np.abs(beta), 1e-300)
    return LeastSquares(base, beta, rel, float(s[0] / s[-1]), weights, K * n,
                        tau - (W @ beta))


def predict(model, samples, epsilon):
    """
    Return the measured and the model's torques, filtered and decimated as the fit sees them.

    The model's torques: RNEA and its friction with the smooth sign (``tanh(qd / epsilon)``).
    """
    tau = rnea(model, samples.q, samples.qd, samples.qdd)
    tau += (model.damping * samples.qd + model.friction * np.tanh(samples.qd / epsilon)
            + model.torque_offset)
    return _filter(samples, samples.tau), _filter(samples, tau)


# ---- what the efforts are ----------------------------------------------------------------------

EFFORT_UNITS = ('torque', 'current')
# efforts this many times larger or smaller than the description's torques (or of the other sign)
# on a joint that carries load are not torques in N m: a current, a raw count, another unit
UNIT_RATIO = 3.0
# a step in a joint's residual that explains this share of it and is at least STEP_SIZE of the
# joint's torque RMS (not a step in what is left of an exact fit): an offset that changed during
# the recording (a torque sensor re-zeroed). Measured on a real Franka recording (Gaz et al.
# 2019): shares 0.02-0.18; with a 0.5 N m step added to its first joint found, 0.47 N m
STEP_SHARE, STEP_SIZE = 0.5, 0.001


def check_efforts(model, samples, epsilon, units='torque'):
    """
    Refuse efforts that cannot be what ``units`` says (IdentificationError naming the joints).

    Any units: a joint whose effort never changes (all zero: a driver that reports none).
    ``torque``: on the joints that carry load (a description's rigid-body torque RMS at least a
    fifth of the largest), the efforts must follow the description's rigid-body torques with a
    gain within 1 / ``UNIT_RATIO`` .. ``UNIT_RATIO`` (a least-squares gain with viscous and
    Coulomb friction and an offset per joint): a motor current is typically 5-100 times
    smaller.
    """
    flat = np.flatnonzero(~(np.ptp(samples.tau, axis=0) > 0))
    if len(flat):
        what = 'zero' if not np.any(samples.tau[:, flat]) else 'constant'
        raise IdentificationError(
            f'the effort of joint(s) {[model.joint_names[j] for j in flat]} is {what}'
            f' throughout the recording: its driver reports no effort there. Record one that '
            f'does, or the commanded efforts (--effort-topic)')
    if units != 'torque':
        return
    zero = np.zeros(model.n)
    rigid = model._replace(damping=zero, friction=zero, torque_offset=zero)
    measured, nominal = predict(rigid, samples, epsilon)
    qd = _filter(samples, samples.qd)
    load = rms(nominal - nominal.mean(axis=0))
    for j in np.flatnonzero(load >= 0.2 * load.max()):
        # the description's rigid-body torque, and friction of any size (a URDF's is often
        # missing or a guess: xarm7's viscous damping alone is 4x the true arm's torque)
        A = np.column_stack([nominal[:, j], qd[:, j], np.tanh(qd[:, j] / epsilon),
                             np.ones(len(nominal))])
        gain = np.linalg.lstsq(A, measured[:, j], rcond=None)[0][0]
        if not 1.0 / UNIT_RATIO <= gain <= UNIT_RATIO:
            raise IdentificationError(
                f'joint {model.joint_names[j]}: its efforts are {gain:.3g} x the torques the '
                f'description predicts for this motion: not torques in N m (N). If the driver '
                f'reports motor current, say so with --effort-units current; if the sign is '
                f'opposite, the driver\'s convention differs from the description\'s axis')


@dataclass
class Gains:
    """Torque per effort unit of each joint (gear included), from efforts in another unit."""

    gains: np.ndarray
    relative_std: np.ndarray        # of each gain, from the fit that gave it
    # the gains the whole motion left uncertain, each found from its joint alone on the
    # description's rigid-body torque on it (see ``effort_gains``)
    from_description: np.ndarray
    # what fixed each gain's scale: DESCRIPTION, DESCRIPTION_ALONE, KNOWN_LOAD, GIVEN or
    # GIVEN_SCALE
    source: list = field(default_factory=list)
    load: object = None             # the known load's 10 parameters as fitted (link frame)

    def __post_init__(self):
        if not self.source:
            self.source = [DESCRIPTION_ALONE if x else DESCRIPTION for x in self.from_description]


DESCRIPTION = 'the description\'s masses'
DESCRIPTION_ALONE = 'the description\'s inertia on this joint alone'
KNOWN_LOAD = 'the known load'
GIVEN = 'given (--effort-gain)'
GIVEN_SCALE = 'the given gains'


# the relative standard deviation (from the motion alone) above which a gain is said to rest on
# the description: 3 of them within 1.5 % (measured: ur5, panda <= 0.2 %; kinova's last joint
# 2 %: its torque is friction and its link's inertia about its own axis)
GAIN_STD = 0.005


def _fit_with(As, C, d):
    """Return y minimising |As y|^2 subject to C y = d (KKT; As's columns of unit norm)."""
    m, k = As.shape[1], len(d)
    KKT = np.zeros((m + k, m + k))
    KKT[:m, :m] = As.T @ As + 1e-12 * np.eye(m)         # exact data: As^T As is singular
    KKT[:m, m:], KKT[m:, :m] = C.T, C
    return np.linalg.solve(KKT, np.concatenate([np.zeros(m), d]))[:m]


def effort_gains(model, samples, base, epsilon):
    """
    Find each joint's torque per effort unit k_j with the base parameters: k_j e_j = Y_j beta.

    The equations are homogeneous: (beta, k) and (c beta, c k) fit alike. The description
    fixes the scale, as a linear constraint under which (beta, k) is a weighted least-squares
    fit (each joint's rows weighted by its residual, as ``least_squares``): the identified
    arm's rigid-body torques along this motion have the description's size,
    ``<W_r beta, tau_0> = |tau_0|^2`` (tau_0 = W beta_0, the description's rigid-body torques,
    its friction left out).
    With a description whose masses are all off by one factor the gains are off by it too.

    A joint whose torque is mostly its own friction (a last wrist joint) leaves its gain
    uncertain in that fit: the gain and the parameters only that joint feels scale together,
    and the noise of its effort biases the gain towards zero. When the fit's relative standard
    deviation of a gain exceeds ``GAIN_STD``, the gain comes from that joint alone: its effort
    regressed on the description's rigid-body torque on it and its own friction columns
    (e_j = tau_0j / k_j + (b qd + fc tanh + fo) / k_j, the regressors free of the effort's
    noise): it rests on the description's inertia of the links it moves.
    """
    Y, e = observation(model, samples, epsilon)
    K, n = e.shape
    W = base.columns(Y)
    r = base.count
    E = np.zeros((K, n, n))
    E[:, np.arange(n), np.arange(n)] = -e
    A = np.concatenate([W, E], axis=2)
    # the rigid-body part only: the description's friction (often none) says nothing of scale
    rigid = np.array([not base.names[i].endswith(('.damping', '.friction', '.offset'))
                      for i in base.independent])
    Wr = W * rigid
    tau0 = Wr @ base.of(parameters(model))                         # (K, n)
    c = np.concatenate([Wr.reshape(-1, r).T @ tau0.ravel(), np.zeros(n)])
    d = float(np.sum(tau0 ** 2))
    if not d > 0:
        raise IdentificationError('the effort gains cannot be scaled: the description predicts '
                                  'no torque along this motion')
    weights = np.ones(n)
    for _ in range(2):
        Aw = (A * weights[None, :, None]).reshape(-1, r + n)
        norms = np.linalg.norm(Aw, axis=0)
        if np.any(norms == 0):
            raise IdentificationError('too little excitation to identify the effort gains')
        x = _fit_with(Aw / norms, (c / norms)[None, :], np.array([d])) / norms
        residual = (A.reshape(-1, r + n) @ x).reshape(K, n)
        sigma = np.sqrt(np.mean(residual ** 2, axis=0))
        weights = 1.0 / np.maximum(sigma, 1e-12 * max(sigma.max(), 1e-300))
    # from the motion alone: the covariance of the fit within the constraint's plane (rows
    # whitened), N (N^T M N)^-1 N^T with N spanning it
    As = (A * weights[None, :, None]).reshape(-1, r + n) / norms
    N = np.linalg.svd((c / norms)[None, :])[2][1:].T
    H = N.T @ (As.T @ As) @ N
    var = np.diag(N @ np.linalg.pinv(H, rcond=1e-14) @ N.T) if np.linalg.cond(H) < 1e14 \
        else np.full(r + n, np.inf)
    gains = x[r:].copy()
    rel = np.where(np.abs(gains) > 0, np.sqrt(np.maximum(var[r:], 0.0)) / norms[r:]
                   / np.abs(gains), np.inf)
    local = ~(rel <= GAIN_STD)
    for j in np.flatnonzero(local):
        own = Y[:, j, [10 * model.n + j, 11 * model.n + j, 13 * model.n + j]]
        used = np.any(own != 0.0, axis=1)               # not left out as slow
        X = np.column_stack([tau0[:, j], own])[used]
        if not np.any(X[:, 0]):
            raise IdentificationError(
                f'joint {model.joint_names[j]}: the motion cannot tell its torque per effort '
                f'unit from its friction, and the description predicts no torque on it to fix '
                f'it: move it against gravity or with a load')
        u, res = np.linalg.lstsq(X, e[used, j], rcond=None)[:2]
        dof = max(len(X) - X.shape[1], 1)
        s2 = float(res[0]) / dof if len(res) else 0.0
        std_u = np.sqrt(s2 * np.linalg.pinv(X.T @ X)[0, 0])
        gains[j] = 1.0 / u[0] if u[0] != 0 else np.inf
        rel[j] = std_u / abs(u[0]) if u[0] != 0 else np.inf
    return Gains(gains, rel, local)


REMEDY = ('record the arm carrying a known load as well (--loaded BAG --load-mass KG), or give '
          'the gain (--effort-gain JOINT=K: the drive\'s torque constant times its gear ratio)')


def check_gains(model, gains):
    """Refuse gains that are not a motor's (IdentificationError naming the joint)."""
    for name, k in zip(model.joint_names, gains.gains):
        if not (np.isfinite(k) and k > 0):
            raise IdentificationError(
                f'joint {name}: the torque per effort unit comes out {k:.3g}: its effort does '
                f'not follow its torque (the opposite sign, another joint\'s, or no effort). '
                f'If its effort is right: {REMEDY}')


# A gain whose relative standard deviation (from the fit's whitened rows, which takes the
# filtered residual as white: it is up to about 4 times too small) exceeds this is not
# identifiable from the data
GAIN_UNCERTAIN = 0.01
# A gain this factor or more from the median of the joints' gains is not believed: the drives of
# one arm differ by less (a 6-joint arm's published gains: 8.5-10.7 N m/A; its fit without a load
# gave 0.015 and 2.3 against 7-12 on the others)
GAIN_SPREAD = 3.0


def judge_gains(model, gains):
    """
    Return [(joint, why)] of the gains not to be trusted: not identifiable, or absurd.

    Not identifiable: a relative standard deviation over GAIN_UNCERTAIN (for a gain the whole
    motion left uncertain, that of its joint's own fit on the description, ``effort_gains``).
    Absurd: GAIN_SPREAD or more from the median of the joints' gains. Gains given by the user
    are not judged.
    """
    k = np.asarray(gains.gains, dtype=float)
    median = float(np.median(k))
    out = []
    for j, name in enumerate(model.joint_names):
        if gains.source[j] == GIVEN:
            continue
        if not gains.relative_std[j] <= GAIN_UNCERTAIN:
            out.append((name, f'not identifiable from these data: {k[j]:.4g} +- '
                              f'{100 * gains.relative_std[j]:.2g} % (over '
                              f'{100 * GAIN_UNCERTAIN:g} %; from {gains.source[j]}): the motion '
                              f'moves too little torque through it to tell its gain from its '
                              f'friction'))
        elif not median / GAIN_SPREAD < k[j] < GAIN_SPREAD * median:
            out.append((name, f'{k[j]:.4g}, {k[j] / median:.2g} times the median of the joints\' '
                              f'gains ({median:.4g}; from {gains.source[j]})'))
    return out


@dataclass
class KnownLoad:
    """A load of known mass (kg), and centre of mass (m, link frame) where known, on a link."""

    link: str
    mass: float
    com: object = None


# The load as the gains the description fixes see it (good to tens of %): within this factor of
# its given mass, else the loaded recording is not of this load on this arm
LOAD_RATIO = 2.0
# A joint's residual in the loaded recording at most this many times its residual in the
# unloaded ones, in the fit of both: else they are not of one arm
LOAD_FIT = 3.0


def check_load(model, load):
    """Refuse a known load that cannot be (IdentificationError)."""
    if load.link not in model.link_names:
        raise IdentificationError(f'--load-link: link "{load.link}" is not in {model.name}')
    link_parameter_map(model, load.link)
    if not (np.isfinite(load.mass) and load.mass > 0):
        raise IdentificationError(f'--load-mass must be a mass > 0 kg, got {load.mass:g}')
    if load.com is not None:
        c = np.asarray(load.com, dtype=float)
        if c.shape != (3,) or not np.all(np.isfinite(c)):
            raise IdentificationError('--load-com needs 3 finite numbers (m, in the link\'s '
                                      'frame)')


def _whitened_fit(parts, columns):
    """
    Return (x, its variances, the residual of each part) of [A_i] x = [b_i] by weighted LS.

    A_i (K_i, n, m): a part (a recording). The rows of a joint are weighted by the inverse
    standard deviation of its residual in that part; the variances are those of the whitened
    fit.
    """
    weights = [np.ones(A.shape[1]) for A, _ in parts]
    for _ in range(3):
        Aw = np.concatenate([(A * w[None, :, None]).reshape(-1, columns)
                             for (A, _), w in zip(parts, weights)])
        bw = np.concatenate([(b * w[None, :]).ravel() for (_, b), w in zip(parts, weights)])
        norms = np.linalg.norm(Aw, axis=0)
        if np.any(norms == 0):
            raise IdentificationError('too little excitation to identify the effort gains')
        x = np.linalg.lstsq(Aw / norms, bw, rcond=None)[0] / norms
        residual = [b - A @ x for A, b in parts]
        weights = []
        for r in residual:
            moving = np.maximum(np.count_nonzero(r, axis=0), 1)
            sigma = np.sqrt(np.sum(r ** 2, axis=0) / moving)
            weights.append(1.0 / np.maximum(sigma, 1e-12 * max(sigma.max(), 1e-300)))
    Aw = np.concatenate([(A * w[None, :, None]).reshape(-1, columns)
                         for (A, _), w in zip(parts, weights)]) / norms
    var = np.diag(np.linalg.pinv(Aw.T @ Aw, rcond=1e-12)) / norms ** 2
    return x, var, residual


def effort_gains_known(model, samples, base, epsilon, loaded=None, load=None, given=None):
    """
    Find each joint's torque per effort unit with its scale fixed by a known load or given gains.

    ``samples``: the unloaded recordings; ``loaded``: recordings of the arm carrying ``load``
    (a ``KnownLoad``); ``given``: {joint index: gain} the user gives. The equations of both,
    k_j e_j = Y_j beta (unloaded) and k_j e_j = Y_j beta + P_j pi (loaded, P the regressor of a
    rigid body on the load's link, pi its 10 parameters in the link frame), are linear in
    (beta, k, pi); the load's mass (and first moment, where its centre of mass is given) and the
    given gains are known, so they are not homogeneous: the difference the load makes fixes
    every gain's scale, whatever the description's masses. The load's inertia is fitted with the
    rest. Each gain's relative standard deviation is that of the weighted fit.
    """
    given = dict(given or {})
    n, r = model.n, base.count
    Y, e = observation(model, samples, epsilon, SLOW_REACH)
    free_k = [j for j in range(n) if j not in given]
    recordings = [(Y, e, None)]
    known, unknown, pk = [], list(range(10)), np.zeros(0)
    if loaded is not None:
        check_load(model, load)
        Yl, el = observation(model, loaded, epsilon, SLOW_REACH)
        known = [0] + ([1, 2, 3] if load.com is not None else [])
        unknown = [i for i in range(10) if i not in known]
        pk = np.r_[load.mass, load.mass * np.asarray(load.com, dtype=float)] \
            if load.com is not None else np.array([load.mass])
        recordings.append((Yl, el, link_columns(model, Yl, load.link)))
    elif not given:
        raise IdentificationError('a known load or a given gain is needed to fix the gains\' '
                                  'scale')
    m = r + len(free_k) + (len(unknown) if loaded is not None else 0)
    parts = []
    for Yi, ei, P in recordings:
        K = len(ei)
        A = np.zeros((K, n, m))
        A[:, :, :r] = base.columns(Yi)
        for c, j in enumerate(free_k):
            A[:, j, r + c] = -ei[:, j]
        b = np.zeros((K, n))
        for j, k in given.items():
            b[:, j] += ei[:, j] * k
        if P is not None:
            A[:, :, r + len(free_k):] = P[:, :, unknown]
            b -= P[:, :, known] @ pk
        parts.append((A, b))
    x, var, residual = _whitened_fit(parts, m)
    gains = np.array([given.get(j, 0.0) for j in range(n)], dtype=float)
    rel = np.zeros(n)
    kx = x[r:r + len(free_k)]
    gains[free_k] = kx
    std = np.sqrt(np.maximum(var[r:r + len(free_k)], 0.0))
    rel[free_k] = std / np.maximum(np.abs(kx), 1e-300)
    source = [GIVEN if j in given else KNOWN_LOAD if loaded is not None else GIVEN_SCALE
              for j in range(n)]
    pi = None
    if loaded is not None:
        pi = np.zeros(10)
        pi[known], pi[unknown] = pk, x[r + len(free_k):]
        # each joint's residual against its torque, in each: the fit of one arm leaves alike
        share = []
        for res, (_, ei, _) in zip(residual, recordings):
            used = np.maximum(np.count_nonzero(ei, axis=0), 1)
            share.append(np.sqrt(np.sum(res ** 2, axis=0) / used) / np.maximum(
                np.sqrt(np.sum((ei * gains) ** 2, axis=0) / used), 1e-300))
        ratio = share[1] / np.maximum(share[0], 1e-300)
        j = int(np.argmax(ratio))
        if ratio[j] > LOAD_FIT:
            raise IdentificationError(
                f'the loaded and the unloaded recordings do not fit one arm: joint '
                f'{model.joint_names[j]}\'s residual is {100 * share[1][j]:.2g} % of its torque '
                f'in the loaded one, {100 * share[0][j]:.2g} % in the unloaded ones: recordings '
                f'of different arms, or the load not rigid or not on {load.link}')
    return Gains(gains, rel, np.zeros(n, dtype=bool), source, pi)


def load_seen(model, samples, loaded, load, base, epsilon):
    """
    Return the load's mass as gains fixed by the description see it; refuse one that is not there.

    The unloaded recordings fitted with the description's scale (``effort_gains``,
    ``least_squares``), the loaded one's efforts beyond that arm fitted by a rigid body on the
    load's link. IdentificationError when the mass is not within LOAD_RATIO of the load's (the
    load was not on, the recordings are of different arms, or the mass is wrong).
    """
    found = effort_gains(model, samples, base, epsilon)
    scaled = replace(samples, tau=samples.tau * found.gains)
    ls = least_squares(model, scaled, base, epsilon)
    Yl, el = observation(model, loaded, epsilon)
    residual = el * found.gains - base.columns(Yl) @ ls.beta
    P = link_columns(model, Yl, load.link).reshape(-1, 10)
    w = np.repeat(ls.weights[None, :], len(el), axis=0).ravel()
    pi = np.linalg.lstsq(P * w[:, None], residual.ravel() * w, rcond=None)[0]
    mass = float(pi[0])
    if not load.mass / LOAD_RATIO <= mass <= LOAD_RATIO * load.mass:
        why = ('was the load on, and is its mass right?' if mass < load.mass else
               'recordings of different arms, or another load?')
        raise IdentificationError(
            f'the loaded recording differs from the unloaded ones by what {mass:.3g} kg on '
            f'{load.link} would make, not the {load.mass:g} kg given (with the gains the '
            f'description\'s masses fix, good to tens of %): {why}')
    return mass


def offset_steps(model, samples, residual):
    """
    Return [(joint, step, time)] of the residuals whose offset changed during a recording.

    Per recording and joint, the split into a before and an after that explains most of the
    residual (the largest k (K - k) / K (mean after - mean before)^2); listed when it explains
    at least ``STEP_SHARE`` of it and is at least ``STEP_SIZE`` of the joint's torque RMS.
    """
    found = []
    torque = rms(samples.tau)
    for a, b in samples.rows:
        for j in range(model.n):
            # the rows the fit used (``observation`` zeroes the left-out ones: they would pull
            # both means towards zero)
            rows = np.flatnonzero(residual[a:b, j] != 0.0)
            K = len(rows)
            if K < 20:
                continue
            x = residual[a:b, j][rows]
            x = x - x.mean()
            c = np.cumsum(x)[:-1]
            k = np.arange(1, K)
            explained = c ** 2 * K / (k * (K - k))          # the SSE a step at k removes
            lo, hi = K // 20, K - K // 20
            best = lo + int(np.argmax(explained[lo:hi]))
            kb = best + 1
            step = x[kb:].mean() - x[:kb].mean()
            if explained[best] >= STEP_SHARE * np.sum(x ** 2) > 0 and \
                    abs(step) >= STEP_SIZE * torque[j]:
                found.append((model.joint_names[j], float(step),       # s from its start
                              float((samples.edge + rows[kb] * samples.step) / samples.rate)))
    return found


def rms(x):
    """Return the root mean square per column."""
    return np.sqrt(np.mean(np.asarray(x) ** 2, axis=0))


def pseudo_inertia(p):
    """Return the 4x4 pseudo-inertia [Sigma h; h^T m] of 10 inertial parameters (numpy)."""
    m, h = p[0], np.asarray(p[1:4])
    Ibar = np.array([[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]])
    J = np.zeros((4, 4))
    J[:3, :3] = 0.5 * np.trace(Ibar) * np.eye(3) - Ibar
    J[:3, 3] = J[3, :3] = h
    J[3, 3] = m
    return J


def _pseudo_inertia_expr(p):
    """Return the pseudo-inertia of a cvxpy 10-vector, as an affine 4x4 expression."""
    import cvxpy as cp
    m, hx, hy, hz, xx, xy, yy, xz, yz, zz = (p[k] for k in range(10))
    tr = 0.5 * (xx + yy + zz)
    return cp.bmat([[tr - xx, -xy, -xz, hx],
                    [-xy, tr - yy, -yz, hy],
                    [-xz, -yz, tr - zz, hz],
                    [hx, hy, hz, m]])


def _reduced(A, b):
    """Return (R, z, rest): ||A x - b||^2 = ||R x - z||^2 + rest, R square (QR of [A b])."""
    P = A.shape[1]
    R = np.linalg.qr(np.column_stack([A, b]), mode='r')
    return R[:P, :P], R[:P, P], float(R[P, P] ** 2) if R.shape[0] > P else 0.0


def _solve(problem):
    import cvxpy as cp
    try:
        problem.solve(solver=cp.CLARABEL)
    except cp.error.SolverError:
        problem.solve(solver=cp.SCS, eps=1e-9, max_iters=200000)
    if problem.status not in ('optimal', 'optimal_inaccurate'):
        raise IdentificationError(f'the semidefinite program ended {problem.status}')


@dataclass
class Consistent:
    """Full parameters with every body physically consistent."""

    pi: np.ndarray
    min_eigenvalue: np.ndarray      # of each body's pseudo-inertia (>= 0 up to the solver)
    fit: float                      # weighted residual norm of the data
    fit_least_squares: float        # the same for the unconstrained base-parameter fit


def consistent(model, samples, ls, epsilon, prior_weight=1e-4):
    """
    Find full parameters that fit the data and are physically consistent: an SDP (cvxpy).

    The problem solved:

    minimise ||w (Y pi - tau)||^2 / ||w tau||^2 + prior_weight ||D (pi - pi_URDF)||^2
    subject to: each body's pseudo-inertia >= 0, damping, friction, armature >= 0 (the
    offsets free),

    D scales each dependent parameter (``BaseParameters``) by its column's norm in the data
    (floored at 1 % of the median) and is zero on the independent ones: the pull towards the
    description is in torque units and acts only where the data cannot speak (the combinations
    that change no torque), and through the constraints.
    """
    import cvxpy as cp
    Y, tau = observation(model, samples, epsilon)
    n, P = model.n, 14 * model.n
    A = (Y * ls.weights[None, :, None]).reshape(-1, P)
    b = (tau * ls.weights).ravel()
    scale = float(np.linalg.norm(b))
    R, z, rest = _reduced(A / scale, b / scale)
    norms = np.linalg.norm(A, axis=0) / scale
    D = np.maximum(norms, 0.01 * np.median(norms[norms > 0]))
    # only the dependent parameters are pulled: given them, the independent ones reach any base
    # parameters, so the pull never trades fit for closeness to the description (with it on
    # every parameter, the offset of ur5's shoulder_lift traded against its gravity terms: 0.13
    # N m on noise-free data)
    D[ls.base.independent] = 0.0
    prior = parameters(model)
    x = cp.Variable(P)
    objective = cp.sum_squares(R @ x - z) + prior_weight * cp.sum_squares(
        cp.multiply(D, x - prior))
    constraints = [x[10 * n:13 * n] >= 0]
    for j in range(n):
        constraints.append(_pseudo_inertia_expr(x[10 * j:10 * j + 10]) >> 0)
    _solve(cp.Problem(cp.Minimize(objective), constraints))
    pi = np.array(x.value)
    pi[10 * n:13 * n] = np.maximum(pi[10 * n:13 * n], 0.0)
    eig = np.array([np.linalg.eigvalsh(pseudo_inertia(pi[10 * j:10 * j + 10]))[0]
                    for j in range(n)])
    A_base = ls.base.columns(Y * ls.weights[None, :, None]).reshape(-1, ls.base.count)
    return Consistent(pi, eig, float(np.linalg.norm(A @ pi - b)),
                      float(np.linalg.norm(A_base @ ls.beta - b)))


# ---- payload ------------------------------------------------------------------------------------

@dataclass
class Payload:
    """A rigid payload on a link: mass (kg), CoM (m) and inertia about the CoM, link axes."""

    link: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray             # ixx, ixy, ixz, iyy, iyz, izz (the nodes' order)
    parameters: np.ndarray          # the 10 parameters in the link frame (regressor order)
    min_eigenvalue: float


def link_columns(model, Y, link):
    """Return the columns (..., 10) of regressor rows Y of a rigid body on ``link``, link frame."""
    body, T = link_parameter_map(model, link)
    return Y[..., 10 * body:10 * body + 10] @ T


def link_parameter_map(model, link):
    """Return (body, T): the link's body and the 10x10 map of link-frame to body parameters."""
    body, X = model.link_frame(link)
    if body < 0:
        raise IdentificationError(f'link "{link}" is fixed to the base: a payload there moves '
                                  f'nothing and cannot be identified')
    T = np.empty((10, 10))
    for c in range(10):
        e = np.zeros(10)
        e[c] = 1.0
        T[:, c] = inertia_parameters(X.T @ spatial_inertia(e) @ X)
    return body, T


def payload(model, samples, link, epsilon):
    """
    Identify a rigid payload on ``link`` (10 parameters, physically consistent) by an SDP.

    The rest of the arm is the model as described (inertias, damping, friction, armature): the
    payload explains what the model's torques miss.
    """
    import cvxpy as cp
    link_parameter_map(model, link)         # a link fixed to the base: refused before the work
    Y, tau = observation(model, samples, epsilon)
    residual = tau - predict(model, samples, epsilon)[1]
    A = link_columns(model, Y, link).reshape(-1, 10)
    b = residual.ravel()
    if np.linalg.matrix_rank(A / np.maximum(np.linalg.norm(A, axis=0), 1e-300), 1e-6) < 10:
        raise IdentificationError(
            f'too little excitation to identify a payload on {link}: move the joints above it '
            f'through different orientations and speeds')
    scale = max(float(np.linalg.norm(b)), 1e-12)
    R, z, _ = _reduced(A / scale, b / scale)
    x = cp.Variable(10)
    _solve(cp.Problem(cp.Minimize(cp.sum_squares(R @ x - z)), [_pseudo_inertia_expr(x) >> 0]))
    p = np.array(x.value)
    m, c, Ic = com_inertia(spatial_inertia(p))
    return Payload(link, m, c, inertia_six(Ic), p,
                   float(np.linalg.eigvalsh(pseudo_inertia(p))[0]))


__all__ = ['BaseParameters', 'Consistent', 'DEFAULT_CUTOFF', 'EFFORT_UNITS', 'Gains',
           'IdentificationError', 'KnownLoad', 'LeastSquares', 'Payload', 'Recording', 'Samples',
           'base_parameters', 'check_efforts', 'check_gains', 'check_load', 'concatenate',
           'consistent', 'effort_gains', 'effort_gains_known', 'inertial_parameters',
           'judge_gains', 'least_squares', 'link_columns', 'load_seen', 'model_order',
           'offset_steps', 'payload', 'predict', 'prepare', 'pseudo_inertia', 'random_states',
           'rms']
