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
A payload's mass and centre of mass from the momentum observer, at a few poses (no ROS).

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

Rest alone does not do on a real arm: Coulomb friction (stiction) holds any part of the load up
to its value, and the observer cannot tell that from the payload; whether the model has the
arm's friction is not known. So ``~/estimate_payload`` (nodes.payload_service) fits at rest
first, lets the controller compute with that (``carry``), then sweeps each joint that moves the
link slowly through each pose, forwards and then backwards (``sweep``): what the model has wrong
about the friction changes sign with the direction, so the mean of the two passes is free of it.
``combine`` makes one row of the fit from the two passes, its regressor rows those of the point
mass's gravity and velocity-product torques over the windows (``pass_rows``). The service moves
the arm with its own gains (``take_over``, ``hand_back``), and refuses where a joint did not
follow a pass (``check_followed``), the passes differ (``check_mirrored``) or a joint ran away
(``Runaways``).
"""
from dataclasses import dataclass

import numpy as np

from ..dynamics import crba, gravity_torques
from ..dynamics.regressor import regressor
from .identification import condition_number, link_columns

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
WINDOW = (0.4, 0.6)
MOVE_TIME = 1.0                 # s per move between poses (quintic, rest to rest), at least
MOVE_SPEED = 1.2                # rad/s (m/s): the fastest a move between poses goes (its peak)
QUINTIC_PEAK = 1.875            # a rest-to-rest quintic's peak speed over its mean
SETTLE = 0.15                   # s after a move ends before the next (5 / K_O: 0.025 s at 200 1/s)
# The service's own gains while it moves the arm (``take_over``, ``carry``). Computed torque
# makes each joint a double integrator of natural frequency w = sqrt(kp), critically damped
# (kd = 2 w). With the command a period T late the loop is stable up to w T = 0.4, up to 0.25 if
# the model's inertia is twice the arm's; every joint gets w T = BANDWIDTH (as the task modes'
# warning; SERVICE_FREQUENCY at most) unless the user's gains are stiffer. The node's default
# (kp 100, 10 rad/s) lets a light wrist carrying an unmodelled tool sag and stick.
SERVICE_FREQUENCY = 50.0        # rad/s
BANDWIDTH = 0.1
STABLE_DELAY = 0.25             # w T: the delay the gains hold through (``delay_tolerance``)
# And no joint stiffer than its effort limit can hold: EFFORT_SHARE of it over an error of
# HOLD_ERROR (M_jj w^2 HOLD_ERROR). At w = 50 rad/s ur5's shoulder (M 3 kg m^2) spends its whole
# 150 N m on 2 cm: when the loop stalls for 0.1 s (a loaded machine; the drive holds the last
# command) the error it comes back to saturates the effort, the torque rate limit slews it, and
# the arm swung at 2 rad/s (measured in process, bench/bench_payload_arms.py --stalls). ur5 gets
# 17-33 rad/s on its shoulder to wrist 2; light wrists keep SERVICE_FREQUENCY.
EFFORT_SHARE = 0.5
HOLD_ERROR = 0.05               # rad
# A joint whose friction in the model would hold it more than a quarter of the sweep behind at
# that stiffness (xarm7's wrist: 1 N m Coulomb and 2 N m s/rad on 1e-3 kg m^2) gets more, up to
# w T = MAX_BANDWIDTH: the sweep is made in motion, a joint its friction holds spoils it.
MAX_BANDWIDTH = 0.2
# A joint followed a pass when it moved the same way throughout the window, each step at least
# this share of its mean step
FOLLOWING = 0.3
MIRROR = 0.25           # of a joint's sweep speed: the most its two passes may differ
# A pose whose passes failed those checks while a state came late (the loop's ``late``: a
# process stalled, the drive held its last command for tens of ms) is swept again, this often
STALL_RETRIES = 2
CARRY_REACH = 0.3       # m: a preliminary centre of mass further from the link is not carried
# rad/s (m/s): a joint faster than this aborts the sequence (its moves peak at MOVE_SPEED): the
# service's gains with a model far from the arm's can be unstable
ABORT_SPEED = 2.0
# s: a joint over ABORT_SPEED this soon after a state came late is the stall's doing, not the
# gains': a simulator behind real time by over 0.1 s freezes its arm while the trajectory runs
# on, and the stiff gains then close 0.1-0.2 rad at once (ur5's wrist 3 at 2.02-2.17 rad/s, 4
# runs in 4, each after a 0.11-0.2 s stall). The arm is held and that step made again, up to
# STALL_RETRIES times; the first such speed after the stall comes within 0.05 s of it
STALL_AFTERMATH = 0.5
# s: held after a stall's runaway (``Runaways``), a joint still over ABORT_SPEED this long after
# is not braking: stopped for good. ur5 after 0.15 s stalls (12 runaways, peak 2.08-2.52 rad/s):
# over 2 rad/s for 6-12 ms, under 1 rad/s 14-48 ms after the runaway began
BRAKING = 0.2
AT_REST = 0.02          # rad/s: the largest joint speed that counts as at rest
HELD = 'held'           # Runaways.see: the arm held after a stall, the step to be made again


class Refusal(ValueError):
    """The estimate cannot be made; the message says why and what to change."""


def inner_limits(model):
    """Return (lo, hi) of the position limits less MARGIN (at most a tenth of each range)."""
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    margin = np.minimum(MARGIN, 0.1 * (hi - lo))          # a gripper's fingers: 4 cm of travel
    return lo + margin, hi - margin


def static_regressor(model, link, Q, QD=None):
    """
    Return A (K, n, 4): the gravity torques of [m, h] of a payload on ``link`` at poses Q.

    With velocities QD (K, n), also their velocity-product torques (centripetal, Coriolis: a
    point mass's), which a sweep's two passes do not cancel (even in the velocity).
    """
    Q = np.atleast_2d(np.asarray(Q, dtype=float))
    Z = np.zeros_like(Q)
    QD = Z if QD is None else np.atleast_2d(np.asarray(QD, dtype=float))
    # [m, h] of the link-frame parameters: at rest the inertia's columns are zero
    return link_columns(model, regressor(model, Q, QD, Z), link)[..., :4]


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


def fit(model, link, Q, r, rows=None, A=None):
    """
    Fit mass and centre of mass to observer estimates r (K, n) taken at rest at poses Q (K, n).

    ``A`` (K, n, 4): the rows to fit with instead of ``static_regressor`` at Q (a sweep's: the
    mean over its windows, ``pass_rows``).

    ``rows``: the model joints whose estimates count (default all). ValueError when the poses do
    not determine the four unknowns.
    """
    A = static_regressor(model, link, Q) if A is None else np.asarray(A, dtype=float)
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


def pass_rows(model, link, q, qd, every=10):
    """Return the mean (n, 4) of ``static_regressor`` over a pass's window (every tenth state)."""
    return static_regressor(model, link, q[::every], qd[::every]).mean(axis=0)


def combine(forward, backward):
    """
    One row of the fit from the two passes through a pose: (q, r, friction, A).

    ``forward``, ``backward``: (mean q, mean r, rows A) over each pass's window. q, r and A the
    means of the two (what the friction model misses cancels); friction: half their difference
    in r, the part of each that changed sign with the direction (the model's friction error).
    """
    (qf, rf, Af), (qb, rb, Ab) = forward[:3], backward[:3]
    return (qf + qb) / 2, (rf + rb) / 2, (rf - rb) / 2, (Af + Ab) / 2


def check_mirrored(model, forward, backward, chain):
    """
    Refusal unless each joint of ``chain`` moved as fast in one pass as in the other.

    ``forward``, ``backward``: mean joint speeds (n,) over each pass's window. A viscous
    friction the model has wrong, b qd, cancels between the passes only at the same speed: a
    joint MIRROR faster one way than the other leaves (b_arm - b_model) times the difference
    (z1 with twice the model's friction: 9.6 mm off, the fit's residual small).
    """
    chain = np.asarray(chain, dtype=np.int64)
    f, b = np.abs(forward[chain]), np.abs(backward[chain])
    off = np.abs(f - b) / np.maximum(np.maximum(f, b), 1e-9)
    if off.max(initial=0.0) > MIRROR:
        k = int(np.argmax(off))
        raise Refusal(f'joint {model.joint_names[chain[k]]} swept at {f[k]:.3g} rad/s one way and '
                      f'{b[k]:.3g} the other: the friction the model has wrong does not cancel '
                      f'between passes that differ (held back one way: touched, or its friction '
                      f'differs with the direction; or, a joint light in the model: if the URDF '
                      f'lacks the joint\'s rotor inertia, set armature)')


def service_gains(kp, kd, period, cap=np.inf):
    """
    Return (kp, kd) for the service's moves: SERVICE_FREQUENCY's where the given are softer.

    ``cap``: each joint's highest natural frequency (rad/s; ``effort_frequency``).
    """
    w = np.minimum(min(SERVICE_FREQUENCY, BANDWIDTH / max(float(period), 1e-6)), cap)
    kp, kd = np.asarray(kp, dtype=float), np.asarray(kd, dtype=float)
    softer = kp < w * w
    return np.where(softer, w * w, kp), np.where(softer, 2.0 * w, kd)


def effort_frequency(ctrl):
    """
    Return each joint's highest natural frequency (rad/s) for the service's gains.

    The one at which EFFORT_SHARE of its effort limit holds HOLD_ERROR with the model's inertia
    at the pose it is at: sqrt(EFFORT_SHARE limit / (M_jj HOLD_ERROR)); inf without a limit.
    """
    limits = ctrl.base_model.effort_limits.copy()
    limits[ctrl.cmd] = ctrl.limits                  # the node's overrides
    M = np.diag(crba(ctrl.model, ctrl.q))
    return np.sqrt(EFFORT_SHARE * limits / (M * HOLD_ERROR))


@dataclass(frozen=True)
class Saved:
    """What ``take_over`` changed of the controller, for ``hand_back``; the service's period."""

    gains: object               # controller.JointGains
    friction_share: float
    model: object               # the RobotModel before a fit was carried
    period: float               # s, the joint states' (the service's gains' bandwidth)


def take_over(ctrl, period, chain):
    """
    Give the controller the service's gains, no friction compensation, the pose it is at.

    No compensation: what the model has wrong about the friction cancels between a sweep's
    passes, while a compensation of friction the arm lacks pushes a light joint off its path
    (xarm7's wrist whirled, 1 N m against 1.4 N m/rad). The gains are the joints of ``chain``'s
    (those that move the link; z1's gripper at kp 1e4 ran away), each at most its
    ``effort_frequency`` at the pose it is at. Return what ``hand_back`` restores.
    """
    saved = Saved(ctrl.gains, ctrl.friction_scale, ctrl.model, float(period))
    # held where it is: the pose it held (a finished trajectory's end) is where the node's
    # softer gains let an unmodelled tool sag from, by up to a radian on a light wrist; the
    # stiffer gains would snap the arm back
    ctrl.hold_here()
    kp, kd = service_gains(ctrl.gains.kp, ctrl.gains.kd, period, effort_frequency(ctrl))
    chain = np.asarray(chain, dtype=np.int64)       # the others (a gripper's fingers) keep theirs
    ctrl.set_gains(ctrl.gains.with_joints(chain, kp, kd))
    ctrl.set_friction_share(0.0)
    ctrl.expect_unknown_load(True)
    return saved


def carry(ctrl, saved, fit, Q, d):
    """
    Ready the controller for the sweeps: a preliminary ``fit`` on its model, friction's gains.

    The fit only when a payload was found within CARRY_REACH of the link's origin whose gravity
    torques at the poses Q are within the effort limits: a fit the friction at rest made up (z1
    with 0.4 kg: 0.38 kg at 0.94 m) would make computed torque wrong instead of right, and a
    model's inertia far over the arm's makes the service's gains unstable (z1 diverged). Then
    each joint whose friction in the model (fc + b v at the sweep's peak speed) would hold it
    more than a quarter of its sweep ``d`` behind gets the kp that holds it within, up to
    MAX_BANDWIDTH (its smallest inertia over Q). Return whether the fit was carried.
    """
    model = saved.model
    carried = False
    if fit.found and fit.mass > 0 and np.linalg.norm(fit.com) <= CARRY_REACH:
        loaded = model.with_payload(fit.link, fit.mass, fit.com)
        extra = np.abs(gravity_torques(loaded, Q) - gravity_torques(model, Q))
        if not np.any(extra[:, ctrl.cmd] > ctrl.limits):
            ctrl.swap_model(loaded)
            carried = True
    inertia = np.min([np.diag(crba(ctrl.model, q)) for q in Q], axis=0)
    speed = QUINTIC_PEAK * 2 * d / SWEEP_TIME
    hold = ctrl.friction.fc + ctrl.friction.b * speed
    j = ctrl.cmd[d[ctrl.cmd] > 0]
    need = hold[j] / (inertia[j] * d[j] / 4)
    w_max = MAX_BANDWIDTH / max(saved.period, 1e-6)
    kp, kd = ctrl.gains.kp.copy(), ctrl.gains.kd.copy()
    raise_ = need > kp[j]
    kp[j] = np.where(raise_, np.maximum(np.minimum(need, w_max * w_max), kp[j]), kp[j])
    kd[j] = np.where(raise_, 2.0 * np.sqrt(kp[j]), kd[j])
    ctrl.set_gains(ctrl.gains.with_joints(j, kp, kd))
    return carried


def compensate(ctrl, chain):
    """
    Compensate the model's friction for a second try of the sweeps; False when it has none.

    The first try compensates none: friction the model has and the arm lacks would push the
    joints (a light one off its path; xarm7 with 0.7 kg: 1.6 % and 7.5 mm off, its passes' speeds
    no longer alike). Where a joint did not follow it, its friction is likely the model's: the
    gains ``carry`` gave it hold that within a quarter of the sweep, compensated or not.
    """
    chain = np.asarray(chain, dtype=np.int64)
    if not (np.any(ctrl.friction.fc[chain] > 0) or np.any(ctrl.friction.b[chain] > 0)):
        return False
    ctrl.set_friction_share(1.0)
    return True


def hand_back(ctrl, saved):
    """Give the controller back what ``take_over`` saved."""
    ctrl.set_gains(saved.gains)
    ctrl.set_friction_share(saved.friction_share)
    ctrl.expect_unknown_load(False)
    if ctrl.model is not saved.model:
        ctrl.swap_model(saved.model)


def followed(q, qd, d, commanded):
    """
    Return a mask (n,): the commanded joints that followed a pass through its window.

    ``q``, ``qd`` (K, n): the positions and velocities over the window; ``d``: the sweep. A joint
    followed when it travelled at least half its share of the window and moved the same way
    throughout, at least FOLLOWING of its mean speed: one its friction held for a while (stuck,
    then slipping) has a friction torque of either sign in the window, which the other pass
    does not cancel. The others are False.
    """
    rows = np.asarray(commanded, dtype=np.int64)
    out = np.zeros(q.shape[1], dtype=bool)
    travel = (q[-1] - q[0])[rows]
    way = np.sign(travel)
    mean_speed = np.abs(travel) / max(len(q) - 1, 1)
    steady = np.min(np.diff(q[:, rows], axis=0) * way, axis=0, initial=np.inf) \
        >= FOLLOWING * mean_speed if len(q) > 1 else np.zeros(len(rows), dtype=bool)
    out[rows] = (np.abs(travel) >= 0.5 * window_travel(d)[rows]) & steady & \
        np.all(qd[:, rows] * way > 0, axis=0)
    return out


def check_followed(ctrl, q, qd, d, chain):
    """
    Refusal naming the first joint of ``chain`` that did not follow a pass (``followed``).

    Its estimate holds a friction torque of either sign, or a push: the mean of the two passes
    is not free of it. The message gives the stiffness the service's gains hold the joint with
    (computed torque: its inertia in the model times kp) and what to change.
    """
    ok = followed(q, qd, d, chain)
    stuck = [j for j in chain if not ok[j]]
    if not stuck:
        return
    j = stuck[0]
    travel, share = abs(q[-1, j] - q[0, j]), window_travel(d)[j]
    M = float(crba(ctrl.model, q.mean(axis=0))[j, j])
    fc, b = float(ctrl.friction.fc[j]), float(ctrl.friction.b[j])
    model = ('the model has no friction for it: give it the arm\'s (the friction and damping '
             'parameters; robot-dynamics identify finds them)' if fc == 0 and b == 0 else
             f'the model\'s friction for it ({fc:.3g} N m Coulomb, {b:.3g} N m s/rad) is less '
             f'than the arm\'s: give it the arm\'s (robot-dynamics identify finds them)')
    kp = ctrl.gains.kp[j]
    raise Refusal(
        f'joint {ctrl.model.joint_names[j]} did not follow a sweep steadily (it moved '
        f'{travel:.3g} of {share:.3g} rad in the window): held back, touched, or held by its '
        f'friction (stuck, or sticking and slipping) against the {M * kp:.3g} N m/rad '
        f'computed torque gives it (its inertia in the model, {M:.3g} kg m^2, times the '
        f'service\'s kp {kp:.4g}). The estimate cannot cancel a friction the joint does '
        f'not slide through: {model}; or, if the URDF lacks the joint\'s rotor inertia, set '
        f'armature')


def move_time(q_from, q_to, commanded):
    """
    Return the duration (s) of the sequence's move from ``q_from`` to ``q_to``.

    MOVE_TIME, longer where a commanded joint travels so far that it would go faster than
    MOVE_SPEED: ur10's wrist from one pose to the next (1 rad) was asked 1.9 rad/s in MOVE_TIME
    and, carrying a load its model lacked, went at 2.01: what ``runaway`` takes for a runaway.
    """
    rows = np.asarray(commanded, dtype=np.int64)
    travel = np.abs(np.asarray(q_to, dtype=float) - np.asarray(q_from, dtype=float))[rows]
    return max(MOVE_TIME, QUINTIC_PEAK * float(travel.max(initial=0.0)) / MOVE_SPEED)


def delay_tolerance(kp, chain):
    """
    Return the longest gap (s) between states that the gains ``kp`` of ``chain`` hold through.

    STABLE_DELAY over the chain's highest natural frequency sqrt(kp) (computed torque): a state
    later than that is a delay the loop may not have been stable through, and a pass refused
    meanwhile is swept again (``retried_after_stalls``, with the loop counting such states).
    """
    w = float(np.sqrt(np.max(np.asarray(kp, dtype=float)[np.asarray(chain, dtype=np.int64)])))
    return STABLE_DELAY / max(w, 1e-9)


def retried_after_stalls(attempt, late, again=None):
    """
    Return ``attempt()``, run again where it was refused while a state came late.

    ``late``: a callable returning how many states have come late (the loop's ``late``). A
    Refusal raised while that grew is retried, up to STALL_RETRIES times, ``again(refusal)``
    called first; any other is raised. The last, when every try had states come late, says so:
    its own text blames the arm (friction, a touch), where the stalls may have done it (z1's
    wrist "moved 0.0729 of 0.073 rad" unsteadily, a stall in each of three windows).
    """
    for k in range(STALL_RETRIES + 1):
        before = late()
        try:
            return attempt()
        except Refusal as e:
            if late() == before:
                raise
            if k == STALL_RETRIES:
                raise Refusal(f'{e}. joint_states came late during each of the {k + 1} tries '
                              f'of this pose (a stalled process: the arm held a command while '
                              f'the sweep ran on): on a quieter machine it may pass') from None
            if again is not None:
                again(e)


def runaway(model, qd, commanded):
    """Return 'joint J moved at X rad/s' of the fastest commanded joint over ABORT_SPEED, or ''."""
    rows = np.asarray(commanded, dtype=np.int64)
    fast = np.abs(np.asarray(qd)[rows])
    if not fast.max(initial=0.0) > ABORT_SPEED:
        return ''
    j = int(rows[np.argmax(fast)])
    return f'joint {model.joint_names[j]} moved at {fast.max():.3g} rad/s'


def unstable(fast, held=None):
    """
    Return why a runaway ``fast`` (``runaway``'s text) stops the sequence.

    ``held``: why the arm was held after a stall (``Runaways.interrupted``) when it is still
    running away BRAKING s on. Traced on xarm7 under bench_payload_arms' stalls: held at a stall's
    runaway, the arm swung at the service's natural frequency, +-4 rad/s, the commands slewing
    between the effort limits at the torque rate limit (a 100 ms swing on joint1), with no state
    late meanwhile; the same rows pass without stalls. The text said only that the gains were
    not stable, and proposed armature.
    """
    if held is not None:
        return (f'{fast} {BRAKING:g} s after the arm was held for a stall ({held}): the '
                f'service\'s gains did not bring it to rest (its commands at the effort limits, '
                f'slewing at the torque rate limit); stopped, the node\'s gains back. Without '
                f'stalls of the joint_states stream (a quieter machine) it may pass')
    return (f'{fast}, faster than the sequence ever asks ({ABORT_SPEED:g}): the service\'s gains '
            f'with this model were not stable on this arm (if the URDF lacks the joints\' rotor '
            f'inertia, set armature); stopped, the node\'s gains back')


class Runaways:
    """
    A joint over ABORT_SPEED while the service's gains act: a stall's, or the gains' own.

    Within STALL_AFTERMATH of a late state (a stalled process: the arm lagged its move, and the
    stiff gains close the lag at once) it is the stall's: the arm is held where it is and the
    step made again (``interrupted`` says why until ``resumed``); braking from it is no
    runaway for BRAKING s. Any other stops the sequence (``unstable``). The node's
    ``~/estimate_payload`` and the in-process rig (test/payload_rig.py) judge with this.
    """

    def __init__(self):
        self.interrupted = None     # why the arm was held after a stall (the step made again)
        self.interrupted_at = 0.0   # when (the caller's clock, s)

    def see(self, model, qd, commanded, now, late_at, gap):
        """
        Judge the state ``qd`` at ``now``: None (no runaway, or braking), HELD, or why to stop.

        ``late_at``: when the latest late state came (the loop's, same clock); ``gap``: how
        long after the state before it (s), for the text.
        """
        fast = runaway(model, qd, commanded)
        if not fast:
            return None
        if self.interrupted is not None and now - self.interrupted_at < BRAKING:
            return None                     # held, braking from it
        if self.interrupted is None and now - late_at < STALL_AFTERMATH:
            self.interrupted = (f'{fast} {(now - late_at) * 1e3:.0f} ms after joint_states came '
                                f'{gap * 1e3:.0f} ms apart (a stalled process: the arm lagged '
                                f'its move meanwhile)')
            self.interrupted_at = now
            return HELD
        return unstable(fast, self.interrupted)

    def resumed(self):
        """Judge the next runaway afresh: the arm is at rest again after a stall's."""
        self.interrupted = None
