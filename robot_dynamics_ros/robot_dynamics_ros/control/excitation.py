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
Exciting trajectories for identification: finite Fourier series (Swevers et al. 1997).

Joint j moves with

    qd_j(t) = sum_l a_jl cos(l w t) + b_jl sin(l w t),      w = 2 pi f0,  l = 1..L
    q_j(t)  = q0_j + sum_l (a_jl sin(l w t) - b_jl cos(l w t)) / (l w)

periodic with period 1 / f0. At rest at t = 0 (and so at every whole period): sum_l a_jl = 0 and
sum_l l b_jl = 0, which fixes a_jL and b_jL from the others; q0 puts q(0) at the start. The free
coefficients are optimised (scipy's SLSQP) for the condition number of the base regressor over
one period (columns scaled to unit norm) subject to the position limits (5 % of the range kept
free), the velocity limits and the effort limits of the model (90 % of each) with its friction.
scipy is imported by ``optimise`` only.
"""
from dataclasses import dataclass

import numpy as np

from ..dynamics.regressor import parameters, regressor
from .identification import position_range

MARGIN = 0.05          # of the position range kept free at each end
LIMIT_SHARE = 0.9      # of the velocity and effort limits the trajectory may use


@dataclass
class FourierTrajectory:
    """A finite Fourier series per joint, at rest at the start of every period."""

    joint_names: list
    base_frequency: float           # Hz
    a: np.ndarray                   # (n, L)
    b: np.ndarray                   # (n, L)
    start: np.ndarray               # (n,) q(0)

    @property
    def period(self):
        return 1.0 / self.base_frequency

    def sample(self, t):
        """Return q, qd, qdd at times t (K,) as (K, n) arrays."""
        t = np.asarray(t, dtype=float)
        L = self.a.shape[1]
        lw = 2 * np.pi * self.base_frequency * np.arange(1, L + 1)     # (L,)
        s, c = np.sin(np.outer(t, lw)), np.cos(np.outer(t, lw))          # (K, L)
        q0 = self.start + (self.b / lw).sum(axis=1)
        q = q0 + s @ (self.a / lw).T - c @ (self.b / lw).T
        qd = c @ self.a.T + s @ self.b.T
        qdd = -s @ (self.a * lw).T + c @ (self.b * lw).T
        return q, qd, qdd

    @classmethod
    def from_free(cls, joint_names, base_frequency, free, start, harmonics):
        """Build it from the free coefficients (n, 2 (L - 1)): a_1..a_L-1, b_1..b_L-1."""
        n, L = len(joint_names), harmonics
        free = np.asarray(free, dtype=float).reshape(n, 2 * (L - 1))
        a, b = np.zeros((n, L)), np.zeros((n, L))
        a[:, :-1], b[:, :-1] = free[:, :L - 1], free[:, L - 1:]
        a[:, -1] = -a[:, :-1].sum(axis=1)                           # qd(0) = 0
        b[:, -1] = -(b[:, :-1] * np.arange(1, L)).sum(axis=1) / L     # qdd(0) = 0
        return cls(list(joint_names), float(base_frequency), a, b, np.asarray(start, float))

    def waypoints(self, duration, rate=100.0):
        """Return (times, q, qd, qdd) sampled every 1/rate s from 0 to duration inclusive."""
        t = np.arange(int(round(duration * rate)) + 1) / rate
        return (t,) + self.sample(t)


@dataclass
class Excitation:
    trajectory: FourierTrajectory
    condition: float
    iterations: int
    message: str


def default_start(model):
    """Return the middle of each joint's position range (zero for a continuous joint)."""
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    bounded = np.isfinite(lo) & np.isfinite(hi)
    return np.where(bounded, 0.5 * (np.where(bounded, lo, 0.0) + np.where(bounded, hi, 0.0)), 0.0)


def optimise(model, base, *, harmonics=5, base_frequency=0.1, start=None, epsilon=0.01,
             samples=None, seed=0, maxiter=200):
    """
    Optimise a Fourier excitation for ``model`` whose base parameters are ``base``.

    Returns an Excitation; ValueError when the start lies outside the limits or no feasible
    excitation was found.
    """
    from scipy.optimize import minimize
    n, L = model.n, int(harmonics)
    if L < 2:
        raise ValueError('harmonics must be >= 2 (one is taken by the rest conditions)')
    if not base_frequency > 0:
        raise ValueError(f'base frequency must be > 0 Hz, got {base_frequency}')
    start = default_start(model) if start is None else np.asarray(start, dtype=float)
    lo, hi = position_range(model)
    span = hi - lo
    lo_m, hi_m = lo + MARGIN * span, hi - MARGIN * span
    if start.shape != (n,) or np.any(start < lo_m) or np.any(start > hi_m):
        raise ValueError(f'the start must have {n} values within the position limits less '
                         f'{MARGIN:.0%} of each range')
    K = samples or max(100, 20 * L)
    t = np.arange(K) / (K * base_frequency)          # one period
    vmax = LIMIT_SHARE * model.velocity_limits
    emax = LIMIT_SHARE * model.effort_limits
    names = model.joint_names

    def traj(x):
        return FourierTrajectory.from_free(names, base_frequency, x, start, L)

    params = parameters(model)
    finite_v, finite_e = np.isfinite(vmax), np.isfinite(emax)

    def evaluate(X):
        """Return log condition numbers (m,) and limit margins (m, c) of m coefficient sets."""
        m = len(X)
        q, qd, qdd = (np.concatenate(x) for x in zip(*(traj(x).sample(t) for x in X)))
        Y = regressor(model, q, qd, qdd, epsilon)
        tau = np.abs(Y @ params).reshape(m, K, n)
        W = base.columns(Y).reshape(m, K * n, base.count)
        G = np.transpose(W, (0, 2, 1)) @ W                    # cond(W)^2 = cond(W^T W)
        d = np.sqrt(np.maximum(np.diagonal(G, axis1=1, axis2=2), 1e-300))
        ev = np.linalg.eigvalsh(G / d[:, :, None] / d[:, None, :])    # columns scaled
        cost = 0.5 * np.log(ev[:, -1] / np.maximum(ev[:, 0], 1e-300))
        q, qd = q.reshape(m, K, n), qd.reshape(m, K, n)
        margins = np.concatenate([
            (q - lo_m).min(axis=1), (hi_m - q).min(axis=1),
            ((vmax - np.abs(qd).max(axis=1)) / np.where(finite_v, vmax, 1.0))[:, finite_v],
            ((emax - tau.max(axis=1)) / np.where(finite_e, emax, 1.0))[:, finite_e]], axis=1)
        return cost, margins

    values, jacobians = {}, {}

    def value(x):
        """Cost and margins at x (the line search asks for these alone)."""
        key = x.tobytes()
        if key not in values:
            c, g = evaluate(x[None])
            values.clear()
            values[key] = (c[0], g[0])
        return values[key]

    def jacobian(x):
        """Forward-difference Jacobians of cost and margins at x, all in one batch."""
        key = x.tobytes()
        if key not in jacobians:
            h = 1e-6 * np.maximum(1.0, np.abs(x))
            c0, g0 = value(x)
            c, g = evaluate(x + np.diag(h))
            jacobians.clear()
            jacobians[key] = ((c - c0) / h, ((g - g0) / h[:, None]).T)
        return jacobians[key]

    def margins(x):
        return value(x)[1]

    def cost(x):
        return value(x)[0]

    # start: small random coefficients, amplitude a share of each joint's free range
    rng = np.random.default_rng(seed)
    w = 2 * np.pi * base_frequency
    room = np.minimum(start - lo_m, hi_m - start)
    amp = 0.3 * room * w / L
    x0 = (rng.uniform(-1, 1, size=(n, 2 * (L - 1))) * amp[:, None]).ravel()
    for _ in range(20):                              # shrink until feasible
        if margins(x0).min() >= 0:
            break
        x0 *= 0.7
    res = minimize(cost, x0, jac=lambda x: jacobian(x)[0], method='SLSQP',
                   constraints=[{'type': 'ineq', 'fun': margins,
                                 'jac': lambda x: jacobian(x)[1]}],
                   options={'maxiter': maxiter, 'ftol': 1e-3})
    best = res.x if margins(res.x).min() >= -1e-6 else x0
    if margins(best).min() < -1e-6:
        raise ValueError('no excitation within the limits found: lower the base frequency or '
                         'move the start away from the limits')
    return Excitation(traj(best), float(np.exp(cost(best))), int(res.nit), str(res.message))
