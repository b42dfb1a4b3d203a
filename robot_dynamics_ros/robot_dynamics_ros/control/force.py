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
Force control along chosen axes of the task frame (root axes), in the task modes.

The axes of ``task.force_axes`` (six 0/1: x, y, z, rx, ry, rz of the root frame, at the task
frame's origin) leave motion control: their stiffness is zero and the task law's wrench there is
a velocity servo,

    f_i = D_i (v_ref,i - v_i),   v_ref,i = sat(F_d,i / D_i + k_p,i e_i + I_i, +-0.95 max_speed),
    e_i = F_d,i - F_a,i,         I_i += k_i,i e_i dt  (in contact, not while v_ref is saturated),

with F_d the target wrench (``~/target_wrench``: what the arm applies to its surroundings), F_a
the wrench it applies, measured (a force/torque sensor, its bias and the tool's weight taken out)
or estimated (the momentum observer's external torques through the frame's Jacobian), and D the
damping ``force.damping``, at least 2 |F_d| / max_speed, and k_p at most LOOP_GAIN / D (the
loop's gain against a rigid surface, D k_p, at most 0.5: see LOOP_GAIN). Pressed on a surface
and at rest, the arm applies D v_ref = F_d + D (k_p e + I): the proportional term and the
integral take out what the model gets wrong (e -> 0 at rest). In free space it moves at v_ref,
never faster than ``force.max_speed`` (an approach to a surface is slow; a lost surface does not
fling it); before contact v_ref speeds up over APPROACH_RAMP, not in one period.
The other axes keep the impedance or operational-space law with the target pose, as before.

Why not feed the measured force through (f = F_a + D (v_ref - v), the arm a pure velocity servo
against the surface): with the observer's estimate, which lags (1 / K_O), a 10 N press ran away
to 52 N on ur5; with the sensor the same law went unstable on ur5 while sliding at the gains
that made pressing settle in 0.2 s. The form above does both on ur5 and panda with one set of
gains (``bench/bench_contact.py``).

What makes the force axes hold their position instead (``ForceLoop.holding`` says why): the
force source gone stale (no sensor reading for ``force.timeout``), and a lost contact — once
the force stayed over half of what was asked for CONTACT_TIME (longer than a late command or a
tool's inertia reads so: see there), it falling under a tenth of it for 0.1 s (a table taken
away; a bounce on impact is shorter): the arm then brakes
(D) and holds where it is instead of chasing a surface that is gone. It holds there whatever
target pose or twist streams meanwhile (on the force axes), and until a target wrench comes
after a pause of REARM_PAUSE in the target wrenches (a stream stopped and started again, or a
single message): a wrench streamed at a steady rate (``ros2 topic pub -r 10``, as the tutorial
shows) re-armed the axes with every message, so the hold never came and a probe whose table was
taken away kept descending at full speed. Nor does a streamed wrench reset the loop while it
controls force (its integral, whether contact was made): only the first after such a pause
does.
"""
from dataclasses import dataclass
import math

import numpy as np

from ..dynamics.values import Each, Number, OneOf, read_only

FORCE_DEFAULTS = {
    'axes': [0, 0, 0, 0, 0, 0],
    'source': 'sensor',
    'topic': 'force_torque_sensor_broadcaster/wrench',
    'gain': [5e-3, 5e-3, 5e-3, 0.2, 0.2, 0.2],
    'integral_gain': [0.16, 0.16, 0.16, 0.5, 0.5, 0.5],
    'damping': [200.0, 200.0, 200.0, 5.0, 5.0, 5.0],
    'max_speed': [0.05, 0.5],
    'timeout': 0.1,
}
SOURCES = ('sensor', 'observer')
# what the force parameters must be (by the node's names): checked by ``check``, shown by the
# node's descriptors, --help and the reference
RULES = {
    'force.source': OneOf(SOURCES),
    'force.gain': Each(0.0, size=6, of='axis'),
    'force.integral_gain': Each(0.0, size=6, of='axis'),
    'force.damping': Each(0.0, size=6, of='axis', note='(> 0 on the force axes)'),
    'force.max_speed': Each(0.0, strict=True, one=False, size=2, of='bound: m/s, rad/s'),
    'force.timeout': Number(0.0, strict=True, note='(s)'),
}
IN_CONTACT, LOST = 0.5, 0.1     # of the target force: contact made, then lost
LOST_TIME = 0.1                 # s under LOST: a bounce on impact is no lost contact
# s over IN_CONTACT before the force counts as contact made. The observer reads a command that
# the arm applies late as a force until the arm does (ur5 after a 93 ms stall, commands 3 ms
# late: 6.3 N of a 10 N press for 2 ms, in free air). A sensor reads the tool's inertia as a
# force (only its weight is taken out): as the approach sets off, the tool's mass m times the
# frame's acceleration F_d / Lambda, m / Lambda of the force asked, decaying within Lambda / D
# (ur3 with a 1 kg probe: 5.4 N of a 10 N press, for 1 ms). Counted as contact, either one's
# loss then held the axes in free air (ur3: 0 N, the probe 2 cm over the table)
CONTACT_TIME = 0.01
# the most the proportional term may give the force loop against a rigid surface: there the
# force follows F_a = D v_ref a few periods d late, F_a[n] = F_d + D k_p (F_d - F_a[n - d]) +
# ..., whose roots z^d = -D k_p leave the unit circle at D k_p = 1, whatever d; with the
# integral it diverges there already. At half of it the force settles in 40 ms 3 periods late
# (test_force_control). ur5 at 10 N (D 400, k_p 5e-3: D k_p 2), commands 3 ms late, stalls:
# 0 to 28 N while sliding
LOOP_GAIN = 0.5
REARM_PAUSE = 0.5               # s without a target wrench before one re-arms the force axes
SPEED_MARGIN = 0.95             # v_ref's share of force.max_speed
APPROACH_RAMP = 0.02            # s from rest to the approach speed, before contact


@dataclass(frozen=True)
class ForceSettings:
    """
    The force axes' settings (module doc), checked once (``check``), never changed after.

    Replaced whole by new parameters (the force loop then starts afresh); its arrays are
    read-only.
    """

    axes: np.ndarray            # 6 bools: x, y, z, about x, y, z (root axes)
    source: str                 # one of SOURCES
    topic: str                  # the sensor's topic (source sensor)
    gain: np.ndarray            # 6: k_p (m/s per N, rad/s per N m)
    integral_gain: np.ndarray   # 6: k_i
    damping: np.ndarray         # 6: D (N s/m, N m s/rad), its floor
    max_speed: np.ndarray       # 6: m/s x3, rad/s x3
    timeout: float              # s without a sensor reading before the axes hold

    def __post_init__(self):
        read_only(self)


def check(settings):
    """Return the ForceSettings (FORCE_DEFAULTS for what is not given); ValueError naming."""
    s = dict(FORCE_DEFAULTS, **(settings or {}))
    unknown = set(s) - set(FORCE_DEFAULTS)
    if unknown:
        raise ValueError(f'unknown force settings {sorted(unknown)}')
    axes = np.asarray(s['axes'], dtype=float).ravel()
    if axes.shape != (6,) or not np.all((axes == 0) | (axes == 1)):
        raise ValueError(f'task.force_axes needs six 0/1 values (x, y, z, rx, ry, rz of the root '
                         f'frame), got {list(s["axes"])}')
    RULES['force.source'].check('force.source', s['source'])
    out = dict(s, axes=axes.astype(bool))
    for name in ('gain', 'integral_gain', 'damping', 'max_speed', 'timeout'):
        out[name] = RULES[f'force.{name}'].check(f'force.{name}', s[name])
    if np.any(out['damping'][out['axes']] <= 0):
        raise ValueError(f'force.damping must be > 0 on the force axes (the velocity servo '
                         f'along them), got {out["damping"].tolist()}')
    out['max_speed'] = np.repeat(out['max_speed'], 3)
    return ForceSettings(**out)


class ForceLoop:
    """The force axes' loop (module doc) of ``settings`` (a ForceSettings), and its state."""

    def __init__(self, settings):
        self.settings = s = settings
        self.axes = s.axes
        self._active = bool(np.any(self.axes))
        self.integral = np.zeros(6)
        self.contact = False            # the force reached IN_CONTACT of the target
        self.holding = None             # why the force axes hold their position (None: not)
        self.last = None                # time of the last update (s)
        self.held = False               # the controller put the hold into its law
        self.below = None               # since when the force is under LOST of the target
        self.above = None               # since when it is over IN_CONTACT, before contact
        self.asked_at = None            # when the last target wrench came (monotonic s)
        # the last v_ref: where the approach's ramp starts (kept by a re-arm: a wrench streamed
        # after a pause, ramping from zero, let xarm7's press sag to 2.4 N of 5, under the half
        # that makes contact, and its stiction held it there: no contact, so no lost-contact
        # hold when the table went, the probe descending on)
        self.v_ref = np.zeros(6)

    @property
    def active(self):
        return self._active

    def asked(self, now):
        """
        Take the arrival of a target wrench at ``now`` (monotonic s; None: a single request).

        The first after a pause of REARM_PAUSE in the target wrenches (or the first of all)
        re-arms the axes; one of a stream changes only the force asked. Returns False for one
        that the hold kept out (the force axes stay held).
        """
        pause = math.inf if now is None or self.asked_at is None else now - self.asked_at
        if now is not None:
            self.asked_at = now
        if pause >= REARM_PAUSE:
            self.rearm()
            return True
        return self.holding is None

    def rearm(self):
        """Control force again (a new target wrench): no hold, no integral, no contact yet."""
        self.integral[:] = 0.0
        self.contact, self.holding, self.last, self.held = False, None, None, False
        self.below = self.above = None

    def hold(self, why):
        """Hold the force axes' position from now (``why``: for the log); True if it is new."""
        new = self.holding is None
        self.holding = why
        self.integral[:] = 0.0
        self.v_ref[:] = 0.0             # held: a later approach ramps from rest
        return new

    def update(self, applied, desired, now):
        """
        Return (v_ref, damping): the force axes' target twist and damping (module doc).

        ``applied``, ``desired``: root axes at the task frame, what the arm applies. Zero off
        the force axes. Sets ``holding`` when the contact is lost (then v_ref is zero).
        """
        s, ax = self.settings, self.axes
        dt = 0.0 if self.last is None else min(max(now - self.last, 0.0), 0.01)
        self.last = now
        limit = SPEED_MARGIN * s.max_speed
        damping = np.maximum(s.damping, 2.0 * np.abs(desired) / s.max_speed)
        e = np.where(ax, desired - applied, 0.0)
        size = float(np.linalg.norm(desired[ax]))
        reached = float(np.linalg.norm(applied[ax]))
        if size > 0 and reached >= IN_CONTACT * size:
            self.below = None
            if self.above is None:
                self.above = now
            if now - self.above >= CONTACT_TIME:
                self.contact = True
        elif self.contact and size > 0 and reached < LOST * size:
            if self.below is None:
                self.below = now
            elif now - self.below >= LOST_TIME:
                self.hold(f'the contact is lost: the force along the force axes has been under '
                          f'{LOST:.0%} of the {size:.3g} asked for {LOST_TIME} s')
        else:
            self.below = None
        if reached < IN_CONTACT * size:
            self.above = None
        if self.holding is not None:
            return np.zeros(6), damping
        base = desired / damping
        # in contact the loop closes through the surface: its gain capped (LOOP_GAIN); before,
        # the force read is none and the approach keeps the full gain (at the speed limit)
        gain = np.minimum(s.gain, LOOP_GAIN / damping) if self.contact else s.gain
        u = base + gain * e + self.integral
        saturated = np.abs(u) > limit
        # the integral only once in contact: integrating a free approach that is not
        # saturated winds it up (a torque about z onto a 5 N m/rad spring: 37 % over)
        grow = s.integral_gain * e * dt if self.contact else 0.0 * e
        # anti-windup: no integration that would push further into the saturation
        self.integral += np.where(saturated & (np.sign(grow) == np.sign(u)), 0.0, grow)
        self.integral = np.clip(np.where(ax, self.integral, 0.0), -2 * limit, 2 * limit)
        v_ref = np.clip(np.where(ax, base + gain * e + self.integral, 0.0), -limit, limit)
        if not self.contact:
            # the approach speeds up over APPROACH_RAMP, not in one period: the step D v_ref of
            # the force axis's wrench, set off at once, flung ur3's 0.1 kg probe sideways through
            # the task law's coupling at 1.29 times force.max_speed (20 N asked: D 800 N s/m);
            # slowing down (a touch) is not held back
            before = self.v_ref
            step = limit * dt / APPROACH_RAMP
            v_ref = np.where(np.abs(v_ref) > np.abs(before),
                             np.clip(v_ref, before - step, before + step), v_ref)
        self.v_ref = v_ref
        return v_ref, damping


class SensorInput:
    """
    A force/torque sensor's readings as the external wrench on the tool.

    ``side``: the ``dynamics.transmitted.ChildSide`` of the sensor's frame (the tool below it:
    its weight is taken out of each reading), ``payload``: (link, mass, com) carried on the
    child side or None. ``zero(q)`` sets the bias so that the reading at rest, the tool's weight
    taken out, is zero (``~/zero_ft_sensor``).
    """

    def __init__(self, side, payload=None, gravity=(0.0, 0.0, -9.81)):
        self.side, self.payload = side, payload
        self.gravity = np.asarray(gravity, dtype=float)
        self.bias = np.zeros(6)
        self.reading, self.received = None, None

    def take(self, wrench, now):
        """Take a reading [fx, fy, fz, tx, ty, tz] at ``now``; why it is refused, or None."""
        w = np.asarray(wrench, dtype=float)
        if w.shape != (6,) or not np.all(np.isfinite(w)):
            return f'a wrench that is not six finite numbers: {w.tolist()}'
        self.reading, self.received = w, now
        return None

    def fresh(self, now, timeout):
        return self.received is not None and now - self.received <= timeout

    def tool(self, q):
        """Return the tool's static wrench in the sensor frame at q (its weight, the payload's)."""
        side = self.side
        wrenches = None
        if self.payload is not None and self.payload[0] in side.links and self.payload[1] > 0:
            from ..dynamics import frame_placement
            link, mass, com = self.payload
            R = frame_placement(side.model, q, link)[:3, :3]
            f = R.T @ (mass * self.gravity)
            wrenches = {link: np.concatenate([f, np.cross(com, f)])}
        n = side.model.n
        return side.wrench(q, np.zeros(n), np.zeros(n), wrenches)

    def external(self, q):
        """Return the external wrench on the tool (sensor frame): reading - bias - tool."""
        return self.reading - self.bias - self.tool(q)

    def zero(self, q):
        """Zero the bias at q (the arm at rest, nothing touching); return the bias."""
        if self.reading is None:
            raise ValueError('no reading from the sensor yet')
        self.bias = self.reading - self.tool(q)
        return self.bias.copy()


FRICTION_SHARE = 0.2    # of the force asked: a friction band over it is warned about
AXIS_NAMES = ('x', 'y', 'z', 'about x', 'about y', 'about z')     # root axes


def friction_band(J, fc, axes):
    """
    Return the force (N, N m) the joints' Coulomb friction can hold along each force axis.

    ``J``: the task frame's Jacobian (6 x commanded joints, root axes); ``fc``: their Coulomb
    friction (N m). At rest a joint holds any torque within +-fc, which sums at the frame to
    up to sum_j |[(J J^T)^+ J]_kj| fc_j along axis k. Friction is not compensated along the
    force axes (their target twist is a force's): a force asked below this band may stop short of
    the surface or settle off (the observer also reads the friction at rest as contact force).
    Zero off the force axes.
    """
    J = np.asarray(J, dtype=float)
    share = np.abs(np.linalg.pinv(J @ J.T) @ J)
    return np.where(axes, share @ np.asarray(fc, dtype=float), 0.0)


def at_frame(wrench, R, p, origin):
    """Return a wrench [f; t] given in a frame (rotation R, origin p) in root axes at origin."""
    f = R @ wrench[:3]
    t = R @ wrench[3:] + np.cross(p - origin, f)
    return np.concatenate([f, t])
