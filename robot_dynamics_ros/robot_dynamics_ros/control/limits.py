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
The limits layer: what every mode's output passes through before it goes to the arm.

The control laws stay as they are; this layer bounds what they ask, per command, so that the
arm stays within its joint positions and velocities, a workspace box and a tool speed, and the
efforts change at a bounded rate.

Each limit is a bound on a velocity, held by bounding the acceleration that the command may
cause (a velocity servo with time constant ``response_time``, T below):

- **Joint velocity**: joint i may move at most ``v_max = velocity_scale x`` its URDF velocity
  limit. The accelerations the command makes, M^-1 (tau - h - its friction compensation) with
  h = c + g (what holds the arm still), are kept within (v_lo - qd_i) / T and
  (v_hi - qd_i) / T: the joints S out of these bounds get the torque change
  (M^-1)_SS^-1 da_S that gives them exactly that acceleration, the others keep theirs. Beyond
  the limit a joint is damped back to it, it is not frozen.
- **Joint position**: between the soft limits the bounds are +-v_max; towards a soft limit the
  allowed velocity falls to zero at it, as min(v_max, k_position d, sqrt(2 a d)) with d the
  distance to the soft limit and a half the deceleration the joint's effort limit leaves
  beside h; past it the joint is pushed back at k_position d (ros_control's soft limits, whose
  velocity bounds these are). The soft limits are the URDF's ``<safety_controller>`` ones and
  its k_position where the description has them, moved in to at least ``position_margin`` from
  the hard limit (panda's soft limits equal its hard ones: no room to stop in); else the hard
  limits less the margin (at most a quarter of the range) and ``position_gain``. Continuous
  joints have none. The URDF's k_velocity is not used: the velocity gain here is M_ii / T, from
  the model, since a fixed N m s/rad gain of ros_control's kind (panda's 40) acts 4 times
  within one millisecond on panda's last joint and is unstable in a 1 kHz loop.
- **Workspace**: a box in root axes that the frame ``frame``'s origin may not leave, each face
  a virtual wall: the frame's velocity towards it is bounded as a joint's towards its soft
  limit (k = ``position_gain``); what holds the bound is a force at the frame along the wall's
  normal n, J^T n f, f from the task-space inertia along n: only the acceleration towards the
  wall beyond the bound is taken away (along the wall the frame feels that force's coupling,
  Lambda^-1 n f, as a hand pressed on a table would).
- **Tool speed**: the frame's linear speed at most ``tool_speed`` (UR's tool speed limit), the
  same way along the direction of motion.
- **External torques**: an estimate of them (the momentum observer's) enters each bound where
  it pushes towards the limit (never where it would loosen one), while the joint moves towards
  it: a steady push (hand guiding, a person leaning on the arm) is held off, not only damped.
  The opposite bound does not count it, and yields where the two would cross (a joint far over
  its limit, pushed on: its braking is not capped at what reaches the other limit in T). A
  push that brakes the joint loosens the bound it moves towards only as far as its sudden end
  would be caught within the estimate's time constant, and only the part the loop's two views
  of it agree on (``apply``'s ``braking`` and ``estimate_time``).
  While ``~/estimate_payload`` runs (``unknown_load``) the estimate is of a tool the model
  lacks and of the model's errors, not of a push, and no bound takes it (see ``apply``).
- **Effort** (the effort limits) and **torque rate**: each effort changes by at most
  ``max_torque_rate`` N m/s (N/s; by default RATE_PER_EFFORT times its effort limit) from the
  previous command, whatever the mode, so that a change
  of gains, mode, payload, friction compensation, target or trajectory, or of these limits,
  is ramped at that rate: nothing steps the output.

Where limits conflict (a joint pushed past a soft limit by a wall's force), the joints' bounds
come last: the hard limits are the arm's own. The torque rate comes after everything: the output
never jumps, not even to obey a limit (the position and velocity bounds start early enough for
it at the default rate: measured in ``bench/bench_limits.py``).

Per command the model terms are computed (M by the CRBA, h by the RNEA: ~3 us for 7 joints,
compiled); the bounds' inverse and corrections only when a joint's acceleration comes within
a hair (``RELATIVE_MARGIN``) of its bounds, which holding still or following a trajectory
inside the limits does not: there the output is the rate and effort limits' alone, to the bit
what the full path gives (``joints_clear``; ~10 us a command saved of ~20).

``LimitLayer.apply`` writes what acted into ``active``: a tuple of (name, kind) for the joints
or frame whose bound shaped the command (kinds: ``position``, ``velocity``, ``workspace``,
``tool_speed``, ``effort``, ``torque_rate``), empty when nothing did.
"""
from dataclasses import dataclass
import math
from typing import NamedTuple

from numba import njit, types
import numpy as np

from ..dynamics import crba, frame_jacobian, frame_placement, gravity_torques
from ..dynamics.model import PRISMATIC
from ..dynamics.kernels import entry_point, HandC_H, ID, split_data
from ..dynamics.values import Each, Number, read_only
from .memory import Sent

# what limits= takes, with the defaults (the node's parameters limits.*)
LIMIT_DEFAULTS = dict(position_margin=0.05, position_gain=10.0, velocity_scale=1.0,
                      response_time=0.01, max_torque_rate=(), frame='',
                      workspace=(), tool_speed=math.inf)
JERK_SHARE = 0.5        # of the jerk the torque rate limit allows, what the bounds count on
FRAME_PASSES = 3        # the frame's and the joints' bounds, taken in turn while both act
CORRECTIONS = 4         # passes of the joints' bounds against the effort and rate limits
RELATIVE_MARGIN = 1e-7  # how clearly within its bounds joints_clear wants each acceleration
# a joint counts as past a limit the layer did not hold (said: LimitLayer.crossed) this much over
# its velocity bound (issue #52's 2 %), or this far past its hard position limit (rad or m: a
# state read at the stop is not past it)
CROSSED_SPEED, CROSSED_POSITION = 1.02, 1e-3
# the frame likewise: this much over the tool speed, or this far beyond a wall (m; issue #52's
# 5 % and 5 mm)
CROSSED_TOOL_SPEED, CROSSED_WALL = 1.05, 5e-3
# The default torque rate: each joint's effort limit in 1 / RATE_PER_EFFORT s, at least
# MIN_RATE (Franka's 1000 N m/s; also where a joint has no effort limit): ur5's shoulder 3000
# N m/s, its wrist 1000. A rate limit is a slew limit inside the loop: what a stiff loop's
# feedback needs (M kp A w for an error A at the loop's frequency w) it withholds, and the loop
# oscillates: ur5 at kp 400, pushed by 200 N for 0.5 s, kept swinging its shoulder +-0.4 rad at
# 1000 N m/s; at 3000 it settled. And a light joint must answer what the heavy ones do to it
# through the coupling: talos' wrist (3 N m) at 60 N m/s ran to 1.11 v_max when the elbow's gains
# went up tenfold.
RATE_PER_EFFORT = 20.0  # 1/s
MIN_RATE = 1000.0       # N m/s
MAX_RATE_STEP = 0.01    # s: after a gap (or a time jump) the rate limit allows this long a step
KINDS = ('position', 'velocity', 'workspace', 'tool_speed', 'effort', 'torque_rate')
# the settings of one number: what ``check`` takes (the node's descriptors show them)
RULES = {'position_margin': Number(0.0), 'position_gain': Number(0.0, strict=True),
         'velocity_scale': Number(0.0, strict=True, high=1.0),
         'response_time': Number(0.0, strict=True), 'tool_speed': Number(0.0, strict=True)}
# the per-joint one: checked without a model by ``check`` (each > 0), by the layer per joint
MAX_TORQUE_RATE = Each(0.0, strict=True, inf=True, of='commanded joint',
                       note='(N m/s; empty: from the effort limits)')
FACES = ('x min', 'y min', 'z min', 'x max', 'y max', 'z max')


def soft_limits(model, cmd, margin, gain):
    """
    Return (soft lower, soft upper, k_position) of the commanded joints (model indices ``cmd``).

    From the URDF's ``<safety_controller>`` where the description has it, moved in to at least
    ``margin`` (at most a quarter of the joint's range) from the hard limits; else the hard
    limits less that margin and the gain ``gain``; +-inf for joints without position limits.
    ValueError naming the joint for a soft limit outside its hard limits, or crossed ones.
    """
    k = len(cmd)
    lo, hi, kp = np.full(k, -np.inf), np.full(k, np.inf), np.full(k, float(gain))
    for j, i in enumerate(cmd):
        name = model.joint_names[i]
        lower, upper = model.position_limits[i]
        soft_lo, soft_hi, k_position = model.soft_limits[i, :3]
        if np.isfinite(soft_lo) and np.isfinite(lower) and soft_lo < lower:
            raise ValueError(f'joint {name}: <safety_controller soft_lower_limit="{soft_lo:g}"> '
                             f'is below its lower limit {lower:g}: a soft limit must lie inside '
                             f'the hard one')
        if np.isfinite(soft_hi) and np.isfinite(upper) and soft_hi > upper:
            raise ValueError(f'joint {name}: <safety_controller soft_upper_limit="{soft_hi:g}"> '
                             f'is above its upper limit {upper:g}: a soft limit must lie inside '
                             f'the hard one')
        if np.isfinite(k_position):
            if not k_position > 0:
                raise ValueError(f'joint {name}: <safety_controller k_position="{k_position:g}"> '
                                 f'must be > 0')
            kp[j] = k_position
        m = min(margin, 0.25 * (upper - lower)) if np.isfinite(upper - lower) else margin
        if np.isfinite(lower):
            lo[j] = max(soft_lo if np.isfinite(soft_lo) else -np.inf, lower + m)
        if np.isfinite(upper):
            hi[j] = min(soft_hi if np.isfinite(soft_hi) else np.inf, upper - m)
        if lo[j] >= hi[j]:
            raise ValueError(f'joint {name}: its soft limits [{lo[j]:g}, {hi[j]:g}] leave no '
                             f'range (hard limits [{lower:g}, {upper:g}], limits.position_margin '
                             f'{margin:g})')
    return lo, hi, kp


def braking_speed(d, a, jerk):
    """
    Return the speed from which a deceleration ``a``, reached at ``jerk``, stops within d.

    The stopping distance from v is v^2 / 2a + v t_r / 2 with t_r = a / jerk, the time the
    deceleration takes to build up (the torque rate limit's); inverted. sqrt(2 a d) without it.
    """
    t_r = a / jerk
    return a * (np.sqrt(0.25 * t_r * t_r + 2.0 * d / a) - 0.5 * t_r)


def acceleration_bound(dv, T, jerk):
    """
    Return the acceleration that brings a velocity ``dv`` below its bound to it (< 0: above).

    dv / T (the velocity servo), but never more than the jerk lets fall to zero by the time the
    velocity is reached: sqrt(2 jerk dv), so that the torque rate limit does not make it
    overshoot (measured before: panda's joint 4 rebounded off its soft limit at 1.2 v_max);
    above the bound, no more deceleration than the jerk lets end there.
    """
    with np.errstate(invalid='ignore', over='ignore'):
        root = np.sqrt(2.0 * jerk * np.abs(dv))
        root = np.where(np.isnan(root), np.inf, root)        # jerk inf, dv 0
        return np.where(dv >= 0, np.minimum(dv / T, root), np.maximum(dv / T, -root))


@njit(cache=True)
def _nan_min(a, b):
    # np.minimum's: NaN when either is
    return a + b if math.isnan(a) or math.isnan(b) else min(a, b)


@njit(cache=True)
def _nan_max(a, b):
    return a + b if math.isnan(a) or math.isnan(b) else max(a, b)


@njit(cache=True)
def _div(a, b):
    # numpy's a / b (compiled code raises on a zero b): +-inf, or NaN for 0 / 0
    if b == 0.0:
        return math.nan if a == 0.0 or math.isnan(a) else math.copysign(math.inf, a) * (
            math.copysign(1.0, b))
    return a / b


@njit(cache=True)
def _allowed_one(d, a, jerk, kp, vmax):
    """
    Return the velocity a joint may have towards a soft limit at distance ``d`` (< 0: past it).

    v_max far from it, falling to zero at it (min(k_position d, what a braking at the
    deceleration ``a``, reached at ``jerk``, stops in: braking_speed)), pushed back at
    k_position d past it. No limit (inf - inf): v_max. NaN as numpy's np.minimum would give.
    """
    dd = max(d, 0.0)
    t_r = _div(a, jerk)
    brake = a * (math.sqrt(0.25 * t_r * t_r + _div(2.0 * dd, a)) - 0.5 * t_r)
    if d >= 0.0:
        v = _nan_min(kp * d, brake)
    else:
        v = _nan_max(kp * d, -vmax)
    if math.isnan(v):
        v = math.inf                    # no limit: inf - inf
    return _nan_min(v, vmax)


@njit(cache=True)
def _acceleration_bound_one(dv, T, jerk):
    """acceleration_bound of one joint, in compiled code."""
    root = math.sqrt(2.0 * jerk * abs(dv))
    if math.isnan(root):
        root = math.inf                 # jerk inf, dv 0
    if dv >= 0.0:
        return _nan_min(dv / T, root)
    return _nan_max(dv / T, -root)


@njit(cache=True)
def _solve(A, b, k):
    """b[:k] = A[:k, :k]^-1 b[:k] in place, A overwritten (Gaussian elimination, row pivots)."""
    for j in range(k):
        p = j
        for i in range(j + 1, k):
            if abs(A[i, j]) > abs(A[p, j]):
                p = i
        if p != j:
            for m in range(k):
                A[j, m], A[p, m] = A[p, m], A[j, m]
            b[j], b[p] = b[p], b[j]
        for i in range(j + 1, k):
            f = A[i, j] / A[j, j]
            for m in range(j, k):
                A[i, m] -= f * A[j, m]
            b[i] -= f * b[j]
    for i in range(k - 1, -1, -1):
        s = b[i]
        for m in range(i + 1, k):
            s -= A[i, m] * b[m]
        b[i] = s / A[i, i]


_F1, _F2 = types.Array(types.float64, 1, 'C'), types.Array(types.float64, 2, 'C')
_I1 = types.Array(types.int64, 1, 'C')


@njit(cache=True)
def _velocity_bounds(x, qd, h, Minv, Mii, r, rb, lower, upper, kp, vmax, effort, rate, T, catch,
                     a_lo, a_hi, kind):
    """
    Write the accelerations the joints may have (``a_lo``, ``a_hi``) and the bounds' kinds.

    Each joint's velocity bound (its soft limits' and v_max: _allowed_one) as an acceleration
    that brings it there (_acceleration_bound_one), less the external torques' acceleration
    where it pushes towards the bound (see LimitLayer.apply). ``kind``: bit 1 where the upper
    bound is a position one (below v_max), bit 2 the lower.
    """
    k = x.shape[0]
    for j in range(k):
        jerk = JERK_SHARE * rate[j] * Minv[j, j]
        spare = _div(max(0.5 * (effort[j] - abs(h[j])), 0.1 * effort[j]), Mii[j])
        v_hi = _allowed_one(upper[j] - x[j], spare, jerk, kp[j], vmax[j])
        v_lo = -_allowed_one(x[j] - lower[j], spare, jerk, kp[j], vmax[j])
        a_r, a_b = 0.0, 0.0
        for m in range(k):
            a_r += Minv[j, m] * r[m]
            a_b += Minv[j, m] * rb[m]
        hi = _acceleration_bound_one(v_hi - qd[j], T, jerk)
        lo = -_acceleration_bound_one(qd[j] - v_lo, T, jerk)
        # the push only for a joint moving towards that bound; the other side's bound, which
        # does not count it, then yields where they cross: so101's wrist_roll at 3.4 v_max,
        # pushed on by more than a braking from +v_max to -v_max in T, was capped at that
        # braking (the middle of the crossed bounds) and coasted down (issue #52)
        # A push that brakes the joint loosens that bound only as far as its sudden end would
        # be caught: the velocity bound not passed within ``catch`` (the estimate's time
        # constant) at the acceleration the command then gives alone. Not at all before
        # (z1 pushed onto a floor, sliding along it: its wrist's command, braked by the hand
        # through the wall, was held to the rate its velocity servo asks alone, which undid
        # the tool speed's braking: the tool at 1.14 of its speed, steadily)
        if qd[j] > 0.0:
            if a_r > 0.0:
                hi -= a_r
            elif catch > 0.0 and a_b < 0.0:
                hi = max(hi, min(hi - a_b, (v_hi - qd[j]) / catch))
            lo = min(lo, hi)
        if qd[j] < 0.0:
            if a_r < 0.0:
                lo -= a_r
            elif catch > 0.0 and a_b > 0.0:
                lo = min(lo, max(lo - a_b, (v_lo - qd[j]) / catch))
            hi = max(hi, lo)
        a_hi[j], a_lo[j] = hi, lo
        kind[j] = (1.0 if v_hi < vmax[j] else 0.0) + (2.0 if v_lo > -vmax[j] else 0.0)


@entry_point(types.boolean(_F2, _F1, _F1, _F1, _F1, _F1, _F1, _F1, _F1, _F1, _F1, _F1, _F1,
                           _F1, _F1, _F2))
def joints_clear(Mcc, x, qd, h, Mii, r, rb, lower, upper, kp, vmax, effort, rate, P, out, W):
    """
    Return True when no joint's velocity bound is near what ``out`` asks: joint_bounds not needed.

    The same bounds as joint_bounds, from an inverse of ``Mcc`` = (M)_cc computed here
    (Gauss-Jordan, ~1 us for 7 joints, where numpy's inv takes ~16 us a command), each
    acceleration within its bounds by a margin of RELATIVE_MARGIN of the numbers it is made
    of (this inverse and numpy's differ by ~cond(M) 1e-16 relative: the margin holds up to
    cond(M) ~1e8, and beyond it only a correction of that relative size would be missed). True
    promises that joint_bounds, with numpy's inverse, would change nothing and name no joint;
    False (a bound near, NaN anywhere) takes the exact path.
    ``W``: a (2k + 5) x k workspace (its rows 5.. hold the inverse).
    """
    k = x.shape[0]
    a_lo, a_hi, kind = W[0], W[1], W[4]
    Minv = W[5:5 + k]
    A = W[5 + k:5 + 2 * k]
    for i in range(k):
        for j in range(k):
            A[i, j] = Mcc[i, j]
            Minv[i, j] = 1.0 if i == j else 0.0
    for j in range(k):                  # Gauss-Jordan with row pivots: A -> I, Minv -> A^-1
        p = j
        for i in range(j + 1, k):
            if abs(A[i, j]) > abs(A[p, j]):
                p = i
        if A[p, j] == 0.0:
            return False
        if p != j:
            for m in range(k):
                A[j, m], A[p, m] = A[p, m], A[j, m]
                Minv[j, m], Minv[p, m] = Minv[p, m], Minv[j, m]
        f = 1.0 / A[j, j]
        for m in range(k):
            A[j, m] *= f
            Minv[j, m] *= f
        for i in range(k):
            if i != j:
                f = A[i, j]
                if f != 0.0:
                    for m in range(k):
                        A[i, m] -= f * A[j, m]
                        Minv[i, m] -= f * Minv[j, m]
    _velocity_bounds(x, qd, h, Minv, Mii, r, rb, lower, upper, kp, vmax, effort, rate, P[0], P[1],
                     a_lo, a_hi, kind)
    for j in range(k):
        s, size = 0.0, 1.0
        for m in range(k):
            term = Minv[j, m] * (out[m] - h[m])
            s += term
            size += abs(term) + abs(Minv[j, m] * r[m])
        if not (abs(s) < math.inf):
            return False                # NaN or inf: the exact path says what
        hi, lo = a_hi[j], a_lo[j]
        # within both bounds by the margin (an infinite bound: nothing to be near)
        if not (hi == math.inf or s <= hi - RELATIVE_MARGIN * (size + abs(hi))):
            return False
        if not (lo == -math.inf or s >= lo + RELATIVE_MARGIN * (size + abs(lo))):
            return False
    return True


@entry_point(types.int64(_F1, _F1, _F1, _F2, _F1, _F1, _F1, _F1, _F1, _F1, _F1, _F1, _F1,
                         _F1, _F1, _F1, _F1, _I1, _F2))
def joint_bounds(x, qd, h, Minv, Mii, r, rb, lower, upper, kp, vmax, effort, rate, P, low, high,
                 out, bound, W):
    """
    Keep the accelerations ``out`` makes within the joints' velocity bounds, in place.

    LimitLayer.apply's joint part, compiled (~70 us of numpy a command before): the commanded
    joints at positions ``x`` and velocities ``qd``; ``h`` what holds them still (friction
    compensation included); ``Minv`` = ((M)_cc)^-1, ``Mii`` = diag((M)_cc); ``r`` the external
    torques; their soft limits, k_position, v_max, effort limits and torque rates; ``P`` =
    (response_time, estimate_time). ``out`` (within [``low``, ``high``]: the effort and
    rate limits) is corrected within them. On return ``bound[:count]`` lists the joints whose
    bound shaped the command, in the order they first did: j for a position bound, -1 - j for
    a velocity bound; returns count. ``W``: a (k + 6) x k workspace (or larger).
    """
    k = x.shape[0]
    a_lo, a_hi, a, b, kind = W[0], W[1], W[2], W[3], W[4]
    A = W[5:5 + k]
    # the side of the bound a correction brought each joint to (1 upper, -1 lower, 0 none):
    # such a joint keeps its acceleration while the next passes correct others (z1's elbow and
    # wrist, their axes parallel, were corrected in turn, each pass undoing the other's, and
    # the last pass left the wrist's acceleration 32 rad/s^2 beyond its bound)
    side = W[5 + k]
    for j in range(k):
        side[j] = 0.0
    _velocity_bounds(x, qd, h, Minv, Mii, r, rb, lower, upper, kp, vmax, effort, rate, P[0], P[1],
                     a_lo, a_hi, kind)
    count = 0
    for _ in range(CORRECTIONS):
        # what moves the joints: what is beyond holding them and the friction compensated
        n_out = 0
        for j in range(k):
            s = 0.0
            for m in range(k):
                s += Minv[j, m] * (out[m] - h[m])
            a[j] = s
            if s > a_hi[j] + 1e-9 or s < a_lo[j] - 1e-9:
                n_out += 1
        if n_out == 0:
            break
        n_s = 0
        for j in range(k):
            over, under = a[j] > a_hi[j] + 1e-9, a[j] < a_lo[j] - 1e-9
            if over and under:
                d = 0.5 * (a_lo[j] + a_hi[j]) - a[j]         # crossed (not by a push): the middle
            elif over:
                d = a_hi[j] - a[j]
                side[j] = 1.0
            elif under:
                d = a_lo[j] - a[j]
                side[j] = -1.0
            elif side[j] > 0.0:         # brought to a bound before: held there, not beyond
                d = min(a_hi[j] - a[j], 0.0)
            elif side[j] < 0.0:
                d = max(a_lo[j] - a[j], 0.0)
            else:
                continue
            # the joints that can still move their torque that way (see apply)
            if not ((d > 0.0 and out[j] >= high[j]) or (d < 0.0 and out[j] <= low[j])):
                b[n_s] = d
                bound[k + n_s] = j      # (the second half of ``bound``: this pass's S)
                n_s += 1
        if n_s == 0:
            break
        for j in range(k):              # the joints out of bounds, newly: noted with the kind
            over, under = a[j] > a_hi[j] + 1e-9, a[j] < a_lo[j] - 1e-9
            if not (over or under):
                continue
            new = True
            for u in range(count):
                if bound[u] == j or bound[u] == -1 - j:
                    new = False
            if new:
                position = (int(kind[j]) & 1) if over else (int(kind[j]) & 2)
                bound[count] = j if position else -1 - j
                count += 1
        for u in range(n_s):
            for w in range(n_s):
                A[u, w] = Minv[bound[k + u], bound[k + w]]
        _solve(A, b, n_s)
        for u in range(n_s):            # (the others are within [low, high] already)
            j = bound[k + u]
            out[j] = min(max(out[j] + b[u], low[j]), high[j])
    return count


@entry_point(types.void(_F1, _F1, _F1, _F1, _F2, _F1, _F1, _I1, _F2, _F2, _F2, _F2, _F1, _F1,
                        _F1, _F1, _F1, _F1, _F1, _F2))
def limit_terms(data, q, qd, zeros, no_f_ext, friction, flags, cmd, M, V, Mcc, U, mode, effort,
                rate, last, low, high, out, edge):
    """
    Compute the model terms of LimitLayer.apply in one call (~25 us of numpy calls before).

    M(q) (``M``, n x n) by the CRBA; h = c(q, qd) + g(q) (``V[0]``), less g(q) where
    ``flags[0]`` (the hardware compensates gravity: ``V[1]`` has it), plus ``friction`` where
    ``flags[1]``; then of the commanded joints ``cmd``: (M)_cc (``Mcc``), and as ``U``'s rows
    h_c, diag((M)_cc), qd_c and q_c; the output's bounds [``low``, ``high``]: +-``effort``,
    and where ``flags[4]`` (a last command ``last`` is known) within ``rate`` * ``flags[5]`` (dt)
    of it, as np.maximum / np.minimum give them; ``out`` = ``mode`` clipped to them as np.clip
    does, ``flags[2]`` 1 where that changed any (out != mode), ``flags[3]`` the largest |qd_c|
    (what the loop's rest detection asks; a Python reduction each message otherwise),
    ``flags[6]`` 1 where a commanded joint is past what ``edge`` (3 x k) allows: |qd_c| above
    its row 0, q_c below its row 1 or above its row 2 (LimitLayer.crossed). The same
    kernels (and so the same numbers) as crba, bias_torques and gravity_torques; ``zeros`` (n)
    and ``no_f_ext`` (n x 6) are the model's zero qdd and f_ext.
    """
    n, model, ws, _ = split_data(data)
    k = cmd.shape[0]
    if (q.shape[0] != n or qd.shape[0] != n or friction.shape[0] != n or M.shape[0] != n
            or V.shape[1] != n or Mcc.shape[0] != k or U.shape[1] != k or mode.shape[0] != k
            or effort.shape[0] != k or rate.shape[0] != k or last.shape[0] != k
            or low.shape[0] != k or high.shape[0] != k or out.shape[0] != k
            or edge.shape[1] != k):
        raise ValueError('the limits layer got arrays of the wrong size for this model')
    for i in range(n):
        for j in range(n):
            M[i, j] = 0.0
    HandC_H(model, ws, q, M)
    h = V[0]
    ID(model, ws, q, qd, zeros, no_f_ext, h)
    if flags[0] > 0.5:
        g = V[1]
        ID(model, ws, q, None, None, None, g)
        for i in range(n):
            h[i] = h[i] - g[i]
    if flags[1] > 0.5:
        for i in range(n):
            h[i] = h[i] + friction[i]
    held, speed, crossed = 0.0, 0.0, 0.0
    prior, dt = flags[4] > 0.5, flags[5]
    for a in range(k):
        i = cmd[a]
        for b in range(k):
            Mcc[a, b] = M[i, cmd[b]]
        U[0, a] = h[i]
        U[1, a] = M[i, i]
        U[2, a] = qd[i]
        U[3, a] = q[i]
        lo, hi = -effort[a], effort[a]
        if prior:   # np.maximum / np.minimum's rule: NaN wins, else the first unless beyond
            step = rate[a] * dt
            y = last[a] - step
            lo = lo if (lo >= y or math.isnan(lo)) else y
            y = last[a] + step
            hi = hi if (hi <= y or math.isnan(hi)) else y
            hi = hi if (hi >= lo or math.isnan(hi)) else lo   # a last command beyond the limits
        low[a], high[a] = lo, hi
        # np.clip's float rule: NaN stays NaN, else max(x, low) then min(that, high), each
        # with the first operand kept unless the second is strictly beyond it
        x = mode[a]
        if not math.isnan(x):
            x = x if x > low[a] else low[a]
        if not math.isnan(x):
            x = x if x < high[a] else high[a]
        out[a] = x
        if x != mode[a]:
            held = 1.0
        speed = max(speed, abs(qd[i]))
        if abs(qd[i]) > edge[0, a] or q[i] < edge[1, a] or q[i] > edge[2, a]:
            crossed = 1.0
    flags[2], flags[3], flags[6] = held, speed, crossed


class Crossed(NamedTuple):
    """A joint or the frame past a limit the layer did not hold (LimitLayer.crossed)."""

    kind: str           # 'velocity' or 'position' (a joint), 'tool_speed' or 'workspace'
    at: float           # its |qd| or q; the frame's speed, or how far beyond the wall (m)
    limit: float        # the velocity bound, or the hard position limit it is past; the tool
    #                     speed (workspace: 0)
    name: str           # the joint; the frame (workspace: and the wall's face)
    pushed: float       # the observer's estimate of what acts on it beyond the model (the
    #                     frame: the force along its motion or towards the wall, N)
    effort: float       # its effort limit (the frame: the force the arm can exert there, N)
    prismatic: bool     # (m, m/s, N) else (rad, rad/s, N m); the frame: True


class Resistance(NamedTuple):
    """The push at the frame the arm resists at a pose (LimitLayer.resistance)."""

    force: float        # N, in the weakest direction (< 0: the arm's weight is too much)
    joint: str          # the joint that gives out first
    effort: float       # its effort limit
    gravity: float      # its gravity torque there


class SuddenPush(NamedTuple):
    """The push that outruns the external-torque estimate at a pose (LimitLayer.sudden_push)."""

    force: float        # N, in the direction that accelerates ``joint`` most
    joint: str          # the joint it takes to its velocity bound first
    within: float       # s: in this long, from rest


@dataclass(frozen=True)
class LimitSettings:
    """
    The limits layer's settings (``LIMIT_DEFAULTS``' keys), checked once (``check``).

    Never changed after (replaced whole by new parameters); its arrays are read-only. The
    per-joint torque rates are counted against the commanded joints by the layer (``LimitLayer``).
    """

    position_margin: float      # rad (m): the soft limits inside the hard ones
    position_gain: float        # 1/s: the velocity allowed per distance to a soft limit
    velocity_scale: float       # of the URDF's velocity limits
    response_time: float        # s: how fast the bounds want a velocity reached
    max_torque_rate: np.ndarray     # N m/s per commanded joint (one for all; empty: the default)
    frame: str                  # the box's and tool speed's frame ('': the task frame)
    workspace: np.ndarray       # the box's corners (6, m, root axes; empty: no box)
    tool_speed: float           # m/s (inf: no limit)

    def __post_init__(self):
        read_only(self)


def check(settings):
    """
    Return the LimitSettings (``LIMIT_DEFAULTS`` for what is not given): no model needed.

    ValueError naming the parameter for a setting that cannot be.
    """
    s = dict(LIMIT_DEFAULTS, **(settings or {}))
    unknown = set(s) - set(LIMIT_DEFAULTS)
    if unknown:
        raise ValueError(f'unknown limits settings {sorted(unknown)}')
    for key, rule in RULES.items():
        rule.check(f'limits.{key}' + (' (inf: no limit)' if key == 'tool_speed' else ''), s[key])
    rate = np.array(s['max_torque_rate'], dtype=float).ravel()
    if np.any(np.isnan(rate)) or np.any(rate <= 0):
        raise ValueError(f'limits.max_torque_rate must be > 0 (N m/s; empty: from the effort '
                         f'limits), got {rate.tolist()}')
    box = LimitLayer._box(s['workspace'])
    return LimitSettings(float(s['position_margin']), float(s['position_gain']),
                         float(s['velocity_scale']), float(s['response_time']), rate,
                         str(s['frame']), np.zeros(0) if box is None else box,
                         float(s['tool_speed']))


class LimitLayer:
    """
    The limits of the commanded joints ``cmd`` (model indices) of ``model``, and their state.

    ``effort_limits``: of the commanded joints; ``frame``: the frame of the workspace box and
    the tool speed (the task frame); ``settings``: a LimitSettings, or a dict of
    ``LIMIT_DEFAULTS``' keys (checked here); ``sent``: where the
    last command is noted (a ``memory.Sent``: the controller's memory; None: the layer's own).
    ValueError naming the parameter (``limits.*``) for a setting that cannot be.
    """

    def __init__(self, model, cmd, effort_limits, settings=None, frame='',
                 hardware_compensates_gravity=False, sent=None):
        s = settings if isinstance(settings, LimitSettings) else check(settings)
        self.model, self.cmd = model, np.asarray(cmd, dtype=np.int64)
        k = len(self.cmd)
        self.margin, self.gain = s.position_margin, s.position_gain
        self.scale, self.T = s.velocity_scale, s.response_time
        # joint_bounds takes writable C arrays: a copy (a model's are read-only); the other
        # arrays it takes (rate, soft limits, kp, vmax) are computed here, new
        self.effort = np.array(effort_limits, dtype=float)
        self.rate = (np.maximum(np.where(np.isfinite(self.effort), RATE_PER_EFFORT * self.effort,
                                         MIN_RATE), MIN_RATE)
                     if len(s.max_torque_rate) == 0 else
                     MAX_TORQUE_RATE.check('limits.max_torque_rate', s.max_torque_rate, k))
        self.tool_speed = s.tool_speed
        self.lower, self.upper, self.kp = soft_limits(model, self.cmd, self.margin, self.gain)
        self.vmax = model.velocity_limits[self.cmd] * self.scale
        self.hardware_compensates_gravity = bool(hardware_compensates_gravity)
        self.frame = frame
        self.box = self._box(s.workspace)
        # whether a workspace box or a tool speed limit is set (an attribute, read per command)
        self.watches_frame = self.box is not None or math.isfinite(self.tool_speed)
        self.settings = s
        self.names = tuple(model.joint_names[i] for i in self.cmd)
        # the last command (output, its state time, monotonic time): the rate limit ramps from it
        self._sent = Sent(self.names) if sent is None else sent
        self.active = ()
        # the estimate is of a load the model lacks (set by ~/estimate_payload while it runs):
        # no bound takes it, see apply
        self.unknown_load = False
        self._J = np.empty((6, model.n))
        # joint_bounds' parameters: response_time, estimate_time (apply's)
        self._P = np.array([self.T, 0.0])
        self._W = np.empty((2 * k + 5, k))         # its and joints_clear's workspace
        self._bound = np.empty(2 * k, dtype=np.int64)
        # limit_terms' outputs and flags (hardware gravity, friction given; out of it: the
        # output clipped, the commanded joints' top speed; a last command known, dt; out of
        # it: a joint past ``_edge``), reused
        n = model.n
        self._M, self._V = np.empty((n, n)), np.empty((2, n))
        self._Mcc, self._U = np.empty((k, k)), np.empty((4, k))
        self._rows = tuple(self._U)                 # h_c, diag(M_cc), qd_c, q_c
        self._r0 = np.zeros(k)                      # no external torques
        self._flags = np.array([1.0 if self.hardware_compensates_gravity else 0.0, 0.0, 0.0,
                                0.0, 0.0, 0.0, 0.0])
        # where a joint counts as past a limit the layer did not hold (``crossed``): CROSSED_SPEED
        # times its velocity bound, CROSSED_POSITION past its hard position limit
        hard = model.position_limits[self.cmd]
        self._edge = np.ascontiguousarray([CROSSED_SPEED * self.vmax,
                                           hard[:, 0] - CROSSED_POSITION,
                                           hard[:, 1] + CROSSED_POSITION], dtype=float)
        # a Crossed per joint (and the frame) past a limit at the last apply; () mostly
        self.crossed = ()
        self._frame_crossed = {}    # the frame's, by what (_frame_limits, once per apply)
        self._low, self._high = np.empty(k), np.empty(k)    # the output's bounds (apply)
        self.top_speed = 0.0        # the commanded joints' largest |qd| at the last apply

    @staticmethod
    def _box(box):
        if len(box) == 0:
            return None
        box = np.array(box, dtype=float).ravel()        # a copy: the settings' is read-only
        if box.shape != (6,) or np.any(np.isnan(box)):
            raise ValueError(f'limits.workspace needs 6 numbers, x y z of the lower corner then '
                             f'of the upper (m, root axes; empty: no box), got {box.tolist()}')
        if np.any(box[:3] >= box[3:]):
            raise ValueError(f'limits.workspace: the lower corner {box[:3].tolist()} must be '
                             f'below the upper {box[3:].tolist()} on every axis')
        return box

    def drop_box(self):
        """Stop using the workspace box (the arm was found outside it: see ``outside``)."""
        self.box = None
        self.watches_frame = math.isfinite(self.tool_speed)

    def resistance(self, q):
        """
        Return the push at the frame the arm resists at ``q`` (a Resistance).

        The largest force, in the frame's weakest direction, that the commanded joints' effort
        limits less gravity at q hold: per joint its spare effort over the frame's lever on it
        (the norm of its column of the frame's linear Jacobian), the least of them. A larger
        push overpowers the arm: no limit holds it (issue #52: said at start-up, not crossed
        silently). ``force`` < 0: ``joint`` cannot hold the arm's own weight there; inf: no
        joint bears on the frame within an effort limit.
        """
        c = self.cmd
        g = np.zeros(len(c)) if self.hardware_compensates_gravity else \
            gravity_torques(self.model, q)[c]
        spare = self.effort - np.abs(g)
        lever = np.linalg.norm(frame_jacobian(self.model, q, self.frame)[:3][:, c], axis=0)
        if (spare < 0).any():
            j = int(np.argmin(spare))
            return Resistance(-math.inf, self.names[j], float(self.effort[j]), float(g[j]))
        force = np.where(lever > 1e-9, spare / np.maximum(lever, 1e-9), math.inf)
        j = int(np.argmin(force))
        return Resistance(float(force[j]), self.names[j], float(self.effort[j]), float(g[j]))

    def sudden_push(self, q, within):
        """
        Return the push at the frame that takes a joint to its velocity bound ``within`` s.

        From rest at ``q``, a force arriving at once (a SuddenPush): per commanded joint its
        velocity bound over ``within`` times its acceleration per newton in the direction that
        accelerates it most (the norm of its row of M^-1 J^T, the commanded joints' M and the
        frame's linear J), the least of them. The bounds count a push only through its estimate
        (the observer's, which follows it with the time constant 1/K_O): a larger push, arriving
        faster than that, carries a joint past its velocity bound before they do (so101's
        wrist_roll, 5e-5 kg m^2: 3.8 N in 5 ms; issue #52). inf: no joint moves the frame.
        """
        c = self.cmd
        J = frame_jacobian(self.model, q, self.frame)[:3][:, c]
        M = crba(self.model, q)[np.ix_(c, c)]
        per_newton = np.linalg.norm(np.linalg.solve(M, J.T), axis=1)
        with np.errstate(divide='ignore'):
            force = np.where(per_newton > 1e-12, self.vmax / (within * per_newton), math.inf)
        j = int(np.argmin(force))
        return SuddenPush(float(force[j]), self.names[j], float(within))

    def outside(self, q):
        """Return why the frame at q is outside the workspace box (None: inside or no box)."""
        if self.box is None:
            return None
        p = frame_placement(self.model, q, self.frame)[:3, 3]
        low, high = self.box[:3], self.box[3:]
        if np.all(p >= low) and np.all(p <= high):
            return None
        return (f'the frame {self.frame} is at {np.round(p, 4).tolist()} m, outside the '
                f'workspace box limits.workspace {self.box.tolist()}')

    def shape_target(self, position, twist, acceleration):
        """
        Keep a task target (the layer's frame's) within the box and the tool speed, in place.

        A target beyond a wall is taken to the wall, with no velocity or acceleration through
        it; a target twist faster than the tool speed is scaled down to it. The output is bounded
        either way; a target the arm may reach does not make the law push against the bounds
        with all its stiffness and damping (a twist stream at 5 times the tool speed: the law's
        damping towards it, 180 N on ur5, against the walls' and speed's forces).
        """
        if self.box is not None:
            low, high = self.box[:3], self.box[3:]
            out_low, out_high = position < low, position > high
            np.clip(position, low, high, out=position)
            for vec in (twist, acceleration):
                vec[:3][out_low & (vec[:3] < 0)] = 0.0
                vec[:3][out_high & (vec[:3] > 0)] = 0.0
        speed = float(np.linalg.norm(twist[:3]))
        if speed > self.tool_speed:
            twist[:3] *= self.tool_speed / speed
            acceleration[:3] = 0.0

    def remember(self, sent):
        """Note the commands in ``sent`` (a ``memory.Sent``: a controller's memory) from now."""
        self._sent = sent

    @property
    def last(self):
        """Return the last command noted: (output, its state time, monotonic time), or None."""
        return self._sent.last

    def sent(self, tau, now, received=None):
        """Note ``tau`` as what went out at ``now`` (None: a time of another base)."""
        self._sent.last = (np.array(tau, dtype=float), now, received)

    # ---- the bounds ------------------------------------------------------------------------
    def apply(self, tau, q, qd, now, external=None, friction=None, received=None, braking=None,
              estimate_time=0.0):
        """
        Return the command ``tau`` (commanded joints) within every limit; ``active`` says which.

        ``q``, ``qd``: the state (model order); ``now``: its time (s), for the rate limit (None:
        one MAX_RATE_STEP since the last); ``received``: the monotonic time (s) of the call, for
        the rate limit when ``now`` did not advance (states stamped alike); ``external``:
        estimated external torques (model order) or None; ``friction``: the friction
        compensation in the command (model order), which the joints' friction takes again (z1's
        gripper, 1e-4 kg m^2 with 1 N m of friction: its compensation counted as acceleration
        held it still); ``braking``: what of ``external`` a bound may count where it brakes the
        joint (None: ``external`` itself), ``estimate_time``: the estimate's time constant (s,
        1 / K_O; 0: none is counted). Such a push loosens the bound the joint moves towards
        only as far as the joint, were the push to end at once, would stay within it until the
        estimate follows: the command alone at most (v_bound - qd) / estimate_time.
        """
        self._P[1] = estimate_time
        model, c = self.model, self.cmd
        q = np.ascontiguousarray(q, dtype=float)
        qd = np.ascontiguousarray(qd, dtype=float)
        active = []
        mode = np.array(tau, dtype=float)
        # what the output may be now: within the effort limits and the rate limit's step from
        # the last command. Everything below is computed from torques inside it, so that what
        # the bounds count on is what goes out (bounds computed from a torque the rate limit
        # then withholds let panda's wrist run away while its elbow braked: measured)
        # (low, high: within the effort limits, and where a last command is known, within
        # the rate limit's step of it; a last command beyond lowered effort limits: high >= low)
        flags = self._flags
        sent = self._sent
        prior = sent.last
        last = self._r0
        flags[4] = 0.0 if prior is None else 1.0
        if prior is not None:
            last, then, before = prior
            if now is not None and then is not None and now > then:
                dt = min(now - then, MAX_RATE_STEP)
            elif received is not None and before is not None and received >= before and \
                    now is not None and then is not None and now == then:
                dt = min(received - before, MAX_RATE_STEP)     # a state stamped as the last
            else:
                dt = MAX_RATE_STEP          # a gap, a time jump, or a time of another base
            flags[5] = dt
        # M, h (friction compensation included), their commanded joints' parts, the output's
        # bounds and the output within them: one compiled call (limit_terms). Then, unless a
        # frame is watched, whether any joint is near a bound (joints_clear, compiled): mostly
        # none is, and the bounds' inverse (numpy's) and corrections are skipped, their answer
        # known
        flags[1] = 0.0 if friction is None else 1.0
        friction = model._zeros if friction is None else np.ascontiguousarray(friction,
                                                                              dtype=float)
        out = np.empty(len(c))
        low, high = self._low, self._high
        limit_terms(model._data, q, qd, model._zeros, model._no_f_ext, friction, flags, c,
                    self._M, self._V, self._Mcc, self._U, mode, self.effort, self.rate, last,
                    low, high, out, self._edge)
        self.top_speed = flags[3]
        hc, Mii, qdk, xk = self._rows
        r = self._r0 if external is None else np.asarray(external, dtype=float)[c]
        self.crossed = self._crossed(xk, qdk, r) if flags[6] > 0.5 else ()
        rb = r if braking is None else np.ascontiguousarray(braking, dtype=float)[c]
        if self.unknown_load:           # a tool the model lacks, not a push (see _bounds)
            r = rb = self._r0
        if self.watches_frame or not joints_clear(
                self._Mcc, xk, qdk, hc, Mii, r, rb, self.lower, self.upper, self.kp, self.vmax,
                self.effort, self.rate, self._P, out, self._W):
            self._frame_crossed.clear()
            out, bound = self._bounds(out, q, r, rb, low, high, active)
            changed = bool((out != mode).any())
            if self._frame_crossed:
                self.crossed += tuple(self._frame_crossed.values())
        else:       # no joint near its bound (the usual case): the bounds would change nothing
            bound, changed = (), flags[2] > 0.5     # the clip changed the output
        if changed:             # (mostly not: what follows only names what held the output)
            held = out != mode
            for j in np.flatnonzero(held & (np.abs(mode) > self.effort)):
                if j not in bound:
                    active.append((self.names[j], 'effort'))
            if prior is not None:
                edge = (out == low) | (out == high)
                for j in np.flatnonzero(held & edge & (np.abs(out) < self.effort)):
                    active.append((self.names[j], 'torque_rate'))
        sent.last = (out, now, received)
        self.active = tuple(active)
        return out

    def _crossed(self, x, qd, r):
        """
        Name the joints past a limit the layer did not hold (Crossed, a tuple of them).

        A joint faster than CROSSED_SPEED times its velocity bound, or past its hard position
        limit: the bounds act from the state and the observer's estimate, a command late, so a
        push faster than the estimate follows (a light joint: so101's shoulder at its velocity
        limit 5 ms into a push, the estimate taking 5-20 ms), larger than the effort limits can
        counter, or a command delayed (a stall) can carry a joint past them. Said, not hidden.
        """
        edge, model = self._edge, self.model
        out = []
        for j in range(len(x)):
            i = self.cmd[j]
            joint = (self.names[j], float(r[j]), float(self.effort[j]),
                     bool(model.jtype[i] == PRISMATIC))
            if abs(qd[j]) > edge[0, j]:
                out.append(Crossed('velocity', abs(float(qd[j])), float(self.vmax[j]), *joint))
            if x[j] < edge[1, j] or x[j] > edge[2, j]:
                lo, hi = model.position_limits[i]
                out.append(Crossed('position', float(x[j]), float(lo if x[j] < lo else hi),
                                   *joint))
        return tuple(out)

    def _bounds(self, out, q, r, rb, low, high, active):
        """
        Return (``out`` within the frame's and the joints' bounds, the joints bound), naming them.

        ``active`` gets the frame's and joints' bounds that acted; the joints bound are their
        indices (of the commanded joints).
        """
        hc, Mii, qdk, xk = self._rows
        Minv = np.linalg.inv(self._Mcc)
        if self.watches_frame:
            out = self._frame_limits(out, q, qdk, Minv, hc, r, low, high, active)
        # the joints' accelerations the command makes (an external push counted where it
        # tightens a bound), each kept within what brings the joint back within its velocity
        # bound in response_time: the torques of the joints S out of bounds change by
        # (M^-1)_SS^-1 da_S, which gives them exactly that acceleration (M_ii da_i would not:
        # panda's M_ii is up to 5 times 1 / (M^-1)_ii). Only theirs: correcting with M da to
        # keep the others' accelerations asks torque of every joint at once, which the rate
        # limit withholds (measured: ur5's shoulder ran away while its elbow was held). Where a
        # correction meets the effort or rate limit, again from what is left.
        # the jerk the rate limit allows a joint: half of it alone (the others move too), and
        # the estimate counts only for a joint moving towards that bound: a push moves the arm;
        # an arm held still (brakes, a jam, a state that ignores the command) shows the bounds'
        # own torque as external, which would then tighten them without end. While a load the
        # model lacks is estimated (``unknown_load``: a tool) the estimate is the tool's weight
        # and the model's errors (the friction the model has and the arm lacks reads as a push
        # along the motion that flips with it), and no bound takes it (``apply`` passes zero).
        # A light wrist's command is then cut to what moves its model inertia (xarm7's joint7,
        # 1.4e-4 kg m^2: 0.04 N m against a 1.5 kg tool's 0.5) and the tool hangs, up to 0.3 rad
        # from a pose, until the service's first fit is carried. Counted both ways, that
        # flipping 1 N m over the model inertia, 36 times below the tooled wrist's (7e3 rad/s^2,
        # as large as the bounds), became a relay lagged by the estimate: joint7 at 2 rad/s
        # within 5 ms of the service's start (issue 52's case). All in joint_bounds (compiled)
        out = np.ascontiguousarray(out, dtype=float)
        bound = set()
        for attempt in range(FRAME_PASSES):
            count = joint_bounds(xk, qdk, hc, Minv, Mii, r, rb, self.lower, self.upper, self.kp,
                                 self.vmax, self.effort, self.rate, self._P, low, high, out,
                                 self._bound, self._W)
            for b in self._bound[:count]:
                j = b if b >= 0 else -1 - b
                if j not in bound:
                    bound.add(j)
                    active.append((self.names[j], 'position' if b >= 0 else 'velocity'))
            if not (self.watches_frame and count) or attempt == FRAME_PASSES - 1:
                break
            # a joint its bound holds no longer takes its share of the frame's correction: the
            # frame's bounds again with the bound joints' torques as they are, then the joints'
            # bounds again (so101's tool in a box: its wall 5.9 mm crossed with one pass, 3.3
            # with three)
            pin_low, pin_high = low.copy(), high.copy()
            for j in bound:
                pin_low[j] = pin_high[j] = out[j]
            before = out
            out = np.ascontiguousarray(
                self._frame_limits(out, q, qdk, Minv, hc, r, pin_low, pin_high, active),
                dtype=float)
            if (out == before).all():
                break
        return out, bound

    def _frame_limits(self, tau, q, qd, Minv, h, r, low, high, active):
        """Bound the frame's velocity towards each wall and its speed: forces at the frame."""
        model, c = self.model, self.cmd
        p = frame_placement(model, q, self.frame)[:3, 3]
        J = frame_jacobian(model, q, self.frame, out=self._J)[:3][:, c]
        v = J @ qd
        bounds = []                 # (unit direction n, distance to the wall or None, what)
        speed = float(np.linalg.norm(v))
        if math.isfinite(self.tool_speed) and speed > 1e-9:
            bounds.append((v / speed, None, (self.frame, 'tool_speed')))
        if self.box is not None:
            for f in range(6):
                axis, sign = f % 3, (1.0 if f >= 3 else -1.0)
                n = np.zeros(3)
                n[axis] = sign
                bounds.append((n, sign * (self.box[f] - p[axis]),      # inside: > 0
                               (f'{self.frame} {FACES[f]}', 'workspace')))
        if not bounds:
            return tau
        JMinv = J @ Minv
        spare = np.maximum(0.5 * (self.effort - np.abs(h)), 0.1 * self.effort)
        limits = []            # (g, Jn, a_max, what) per bound
        for n, d, what in bounds:
            vn = float(n @ v)
            g = n @ JMinv                        # the frame's acceleration along n per torque
            Jn = J.T @ n                         # the torques of a unit force along n
            inv_lambda = float(g @ Jn)           # 1 / the task-space inertia along n
            # the jerk along n: a force at the frame changes as fast as the slowest joint's
            # share of it may (the torque rate limit), half of it counted on
            with np.errstate(divide='ignore'):
                force_rate = float(np.min(self.rate / np.abs(Jn)))
                force = float(np.min(spare / np.abs(Jn)))
            jerk = JERK_SHARE * force_rate * inv_lambda
            if (vn > CROSSED_TOOL_SPEED * self.tool_speed if d is None else d < -CROSSED_WALL):
                # past what the layer holds (said, as a joint's: _crossed)
                push = float(Jn @ r) / max(float(Jn @ Jn), 1e-12)     # least squares along n
                self._frame_crossed[what] = Crossed(
                    what[1], vn if d is None else -d, self.tool_speed if d is None else 0.0,
                    what[0], push, force, True)
            if d is None:
                allowed = self.tool_speed
            elif d >= 0:       # a wall: what a braking at the force the effort limits leave stops
                allowed = min(self.gain * d, float(braking_speed(d, force * inv_lambda, jerk)))
            else:
                allowed = self.gain * d
            a_max = float(acceleration_bound(allowed - vn, self.T, jerk))
            limits.append((g, Jn, a_max - max(float(g @ r), 0.0), what))
        # each bound's force at the frame from the joints whose torque can still go that way
        # (the others are at their effort or rate limit: a force through them would not be)
        tau = np.clip(tau, low, high)
        for _ in range(CORRECTIONS):
            done = True
            for g, Jn, a_max, what in limits:
                excess = float(g @ (tau - h)) - a_max
                if excess <= 1e-9:
                    continue
                free = ~(((Jn > 0) & (tau <= low)) | ((Jn < 0) & (tau >= high)))
                gain = float(g[free] @ Jn[free])
                if gain <= 1e-12:
                    continue
                tau = np.clip(tau - np.where(free, Jn, 0.0) * (excess / gain), low, high)
                if what not in active:
                    active.append(what)
                done = False
            if done:
                break
        return tau
