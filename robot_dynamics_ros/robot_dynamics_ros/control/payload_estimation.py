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
A payload's mass and centre of mass from the momentum observer at rest, at a few poses (no ROS).

At rest the observer's estimate is r = g_model(q) - g_true(q): what the model's gravity torques
miss. A rigid payload on a link adds gravity torques linear in its mass m and first moment
h = m c (c in the link frame): g_payload(q) = A(q) [m; h], A the columns of the joint torque
regressor (``dynamics.regressor``) of the link's body at rest, mapped from the link's frame. Its
inertia has no effect at rest (only motion shows it: ``robot-dynamics identify --payload``).
So r = -A [m; h] at every pose, and least squares over poses where gravity points in different
directions in the link frame gives m and c.

``poses`` plans those poses from the current one: the commanded joints nearest the link (the
wrist) turned by +-amplitude, each pose within the position limits (with a margin) and the
effort limits (gravity, with the model's payload); enough of them for the four unknowns to be
determined (the rank of the stacked A), at least four.

On an arm with joint friction, rest does not do: Coulomb friction (stiction) holds any part of
the load up to its value, and the observer cannot tell that from the payload. There every
commanded joint is swept slowly through each pose, forwards and then backwards (``sweep``): in
motion the observer takes out the modelled friction, and what the model has wrong in it changes
sign with the direction, so the mean of the two passes is free of it (and of a viscous term's
error alike). ``combine`` makes one row of the fit from the two passes.
"""
from dataclasses import dataclass

import numpy as np

from ..dynamics import gravity_torques
from ..dynamics.regressor import regressor
from .identification import condition_number, link_parameter_map

MARGIN = 0.05                   # rad (m; at most a tenth of the range): kept from each limit
RANK_TOLERANCE = 1e-3           # of the largest singular value, columns scaled to unit norm
# kg: a fitted mass smaller than this is no payload, and its centre of mass (first moment / mass)
# is not defined by the data: an arm carrying nothing gave 1e-10 kg "at" 88 m
MASS_RESOLUTION = 1e-3
# The sweep on an arm with friction: each commanded joint +-SWEEP about a pose (less where a
# limit is near, at least MIN_SWEEP), one pass a rest-to-rest quintic of SWEEP_TIME; the
# estimate averaged over the pass's middle (WINDOW, fractions of the pass), where every joint
# moves at 0.7-1 of its peak speed (0.13-0.19 rad/s: far above the friction model's
# epsilon, 0.01 by default) and the acceleration averages to zero (the payload's inertia, which
# the model lacks, drops out of the mean).
SWEEP = 0.1
MIN_SWEEP = 0.03
SWEEP_TIME = 2.0
WINDOW = (0.3, 0.7)


def inner_limits(model):
    """Return (lo, hi) of the position limits less MARGIN (at most a tenth of each range)."""
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    margin = np.minimum(MARGIN, 0.1 * (hi - lo))          # a gripper's fingers: 4 cm of travel
    return lo + margin, hi - margin


def static_regressor(model, link, Q):
    """Return A (K, n, 4): the gravity torques of [m, h] of a payload on ``link`` at poses Q."""
    body, T = link_parameter_map(model, link)       # link-frame parameters -> the body's
    Q = np.atleast_2d(np.asarray(Q, dtype=float))
    Z = np.zeros_like(Q)
    Y = regressor(model, Q, Z, Z)[:, :, 10 * body:10 * body + 10]
    return Y @ T[:, :4]         # at rest the inertia's columns are zero


@dataclass
class PayloadFit:
    link: str
    mass: float                     # kg; below zero when the configured payload is too heavy
    com: np.ndarray                 # m, link frame (zero when no payload was found)
    first_moment: np.ndarray        # mass * com (kg m): defined for any mass
    residual: float                 # N m, RMS of the fit over the rows used
    torque: float                   # N m, RMS of the estimates fitted (what the payload explains)
    poses: int
    condition: float

    @property
    def found(self):
        """Return whether there is a payload (its centre of mass then defined by the data)."""
        return is_payload(self.mass)


def is_payload(mass):
    """Return whether a fitted ``mass`` (kg, either sign) is at least MASS_RESOLUTION."""
    return abs(mass) >= MASS_RESOLUTION


def fit(model, link, Q, r, rows=None):
    """
    Fit mass and centre of mass to observer estimates r (K, n) taken at rest at poses Q (K, n).

    ``rows``: the model joints whose estimates count (default all). ValueError when the poses do
    not determine the four unknowns.
    """
    A = static_regressor(model, link, Q)
    r = np.atleast_2d(np.asarray(r, dtype=float))
    rows = np.arange(model.n) if rows is None else np.asarray(rows, dtype=np.int64)
    A, b = A[:, rows].reshape(-1, 4), -r[:, rows].ravel()
    cond = condition_number(A)
    if not cond < 1.0 / RANK_TOLERANCE:
        raise ValueError(f'the poses do not determine a payload on {link} (condition number '
                         f'{cond:.3g}): gravity must point in different directions in its frame')
    x, *_ = np.linalg.lstsq(A, b, rcond=None)
    residual = float(np.sqrt(np.mean((A @ x - b) ** 2)))
    m = float(x[0])
    com = x[1:] / m if is_payload(m) else np.zeros(3)
    return PayloadFit(link, m, com, x[1:].copy(), residual, float(np.sqrt(np.mean(b ** 2))),
                      len(Q), cond)


def wrist_joints(model, link, commanded):
    """Return the commanded joints that move ``link``, nearest it first (model indices)."""
    body, _ = model.link_frame(link)
    chain = []
    i = body
    while i >= 0:
        chain.append(i)
        i = int(model.parent[i])
    return [i for i in chain if i in set(commanded)]


def poses(model, q0, link, commanded, amplitude, effort_limits=None, max_poses=8):
    """
    Plan static poses around q0 that determine a payload on ``link``; q0 first.

    Candidates turn the two (then three) commanded joints nearest the link by +-amplitude, alone
    and together; each must lie within the position limits less MARGIN and hold its gravity
    torques within ``effort_limits`` (default the model's). Taken in order until the stacked
    static regressor has full rank and there are at least four (the rank check is the one
    ``fit`` makes); ValueError when the candidates cannot do it.
    """
    q0 = np.asarray(q0, dtype=float)
    wrist = wrist_joints(model, link, commanded)
    if not wrist:
        raise ValueError(f'no commanded joint moves link "{link}"')
    lo, hi = inner_limits(model)
    limits = model.effort_limits if effort_limits is None else np.asarray(effort_limits)
    a = float(amplitude)
    steps = []
    for w in (wrist[:2], wrist[:3]):
        for i in w:
            steps += [{i: a}, {i: -a}]
        if len(w) >= 2:
            steps += [{w[0]: a, w[1]: a}, {w[0]: -a, w[1]: a}, {w[0]: a, w[1]: -a},
                      {w[0]: -a, w[1]: -a}]
    chosen, refused = [q0], []
    for step in steps:
        q = q0.copy()
        for i, d in step.items():
            q[i] += d
        if any(np.allclose(q, p) for p in chosen):
            continue
        moved = list(step)                  # the others stay where they are
        if np.any(q[moved] < lo[moved]) or np.any(q[moved] > hi[moved]):
            refused.append('position limits')
            continue
        if np.any(np.abs(gravity_torques(model, q)) > limits):
            refused.append('effort limits')
            continue
        chosen.append(q)
        if len(chosen) >= 4 and condition_number(
                static_regressor(model, link, chosen)[:, commanded].reshape(-1, 4)) \
                < 1.0 / RANK_TOLERANCE:
            return np.array(chosen)
        if len(chosen) >= max_poses:
            break
    why = f' ({len(refused)} candidates outside the {" and ".join(sorted(set(refused)))})' \
        if refused else ''
    raise ValueError(f'no {max_poses} poses within amplitude {a:g} of this one determine a '
                     f'payload on "{link}"{why}: turn the wrist joints, or move away from the '
                     f'limits')


def sweep(model, Q, commanded, half=SWEEP):
    """
    Return d (n,): each commanded joint swept +-d about every pose of Q; the others 0.

    ``half`` (rad, m) or less where a pose is near a position limit (kept MARGIN from it);
    ValueError naming the joint when that leaves less than MIN_SWEEP.
    """
    Q = np.atleast_2d(np.asarray(Q, dtype=float))
    lo, hi = inner_limits(model)
    room = np.minimum(Q - lo, hi - Q).min(axis=0)
    d = np.zeros(model.n)
    commanded = np.asarray(commanded, dtype=np.int64)
    d[commanded] = np.minimum(half, room[commanded])
    short = [i for i in commanded if not d[i] >= min(MIN_SWEEP, half)]
    if short:
        i = short[0]
        raise ValueError(f'joint {model.joint_names[i]} is too near a limit to be swept by '
                         f'+-{MIN_SWEEP:g} through the poses (friction: the estimate is made in '
                         f'motion): move it away from its limits')
    return d


def window_travel(d):
    """Return how far (n,) a joint swept by +-d travels within a pass's WINDOW (quintic)."""
    def s(x):
        return 10 * x ** 3 - 15 * x ** 4 + 6 * x ** 5
    return 2 * np.asarray(d, dtype=float) * (s(WINDOW[1]) - s(WINDOW[0]))


def combine(forward, backward):
    """
    One row of the fit from the two passes through a pose: (q, r, friction).

    ``forward``, ``backward``: (mean q, mean r) over each pass's window. q and r the means of
    the two (what the friction model misses cancels); friction: half their difference in r,
    the part of each that changed sign with the direction (the model's friction error).
    """
    (qf, rf), (qb, rb) = forward, backward
    return (qf + qb) / 2, (rf + rb) / 2, (rf - rb) / 2
