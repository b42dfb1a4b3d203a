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
The inverse-dynamics controller, without ROS: joint states and a desired motion in, efforts out.

The node (``feedforward_node.py``) only turns messages into the arrays these methods take.

Modes (the joint modes' laws and the collision reactions are the functions of ``laws.py``):

- ``gravity``: tau = g(q)
- ``feedforward``: tau = RNEA(q_d, qd_d, qdd_d) from the trajectory (g(q) when there is none)
- ``computed_torque``: tau = M(q) (qdd_d + Kp (q_d - q) + Kd (qd_d - qd)) + c(q, qd) + g(q),
  one RNEA call; without a trajectory it holds the position it had when it started holding.
- ``cartesian_impedance``, ``operational_space``: the task-space laws of ``task_space.py`` on the
  frame ``task.frame``, towards a target pose (the frame's pose when the mode became active
  until one is set), with the nullspace holding a posture; a stiffness change ramps over
  ``STIFFNESS_RAMP``.

``hardware_compensates_gravity`` subtracts g(q) from the output. Outputs are clamped to the effort
limits (URDF, overridable) by ``command``; feedforward_node's loop shapes them with
``shaping.CommandShaper``: the effort limits, a fade after a change, then the limits layer
(limits.py, ``limit_layer``): the torque rate, joint positions and velocities, box, tool speed.
"""
from dataclasses import dataclass, field
import difflib
import math

import numpy as np

from ..dynamics import bias_torques, frame_jacobian, frame_placement, gravity_torques, rnea
from ..dynamics.values import Each, Number, per_joint, read_only, same_settings
from .feasibility import check as check_trajectory
from .force import ForceLoop, SensorInput, at_frame, check as check_force
from .joint_state import JointStateStore
from .laws import JOINT_LAWS, REACTION_LAWS
from .limits import LimitLayer, check as check_limits
from .memory import ControlMemory, Sent
from .reference import Followed, Reference
from .shaping import clamp
from .task_space import PROJECTORS, TASK_MODES, TaskSpaceLaw, external_wrench
from .trajectory import JointTrajectory

JOINT_MODES = tuple(JOINT_LAWS)     # laws.py: gravity, feedforward, computed_torque
MODES = JOINT_MODES + TASK_MODES
STIFFNESS_RAMP = 0.5     # s over which a change of task.stiffness takes effect (no torque jump)
TWIST_GAP = 0.1          # s: successive target twists further apart give no target acceleration
STAMP_RANGE = 1.0        # s: a target pose stamped further from the state's time: its arrival
# what task= takes, with the defaults (the node's parameters task.* and nullspace.*)
TASK_DEFAULTS = dict(frame='', stiffness=(1000.0, 1000.0, 1000.0, 50.0, 50.0, 50.0),
                     damping_ratio=(1.0,), min_damping=(0.0,), max_error=(0.05, 0.3),
                     nullspace_stiffness=(10.0,), nullspace_damping_ratio=(1.0,), posture=(),
                     projector='dynamic')
TIMEOUT_BEHAVIOURS = ('zero', 'gravity')
# what the controller's parameters must be (by the node's names): checked here, shown by the
# node's descriptors, --help and the reference (configuration.rule)
RULES = {
    'kp': Each(0.0, of='commanded joint'), 'kd': Each(0.0, of='commanded joint'),
    'armature': Each(0.0, of='model joint', note='(empty: none)'),
    'damping': Each(0.0, of='model joint', note="(empty: the URDF's)"),
    'friction': Each(0.0, of='model joint', note="(empty: the URDF's)"),
    'torque_offset': Each(of='model joint', note='(empty: none)'),
    'friction_compensation': Number(0.0, high=1.0),
    'friction_velocity_epsilon': Number(0.0, strict=True),
    'payload.mass': Number(0.0, note='(kg)'),
    'task.stiffness': Each(0.0, one=False, size=6, of='axis: N/m x3, N m/rad x3'),
    'task.damping_ratio': Each(0.0, size=6, of='axis'),
    'task.min_damping': Each(0.0, size=6, of='axis'),
    'task.max_error': Each(0.0, strict=True, inf=True, one=False, size=2, of='bound: m, rad'),
    'nullspace.stiffness': Each(0.0, of='commanded joint'),
    'nullspace.damping_ratio': Each(0.0, of='commanded joint'),
    'nullspace.posture': Each(of='commanded joint', note='(empty: where a task mode starts)'),
}


@dataclass(frozen=True)
class TaskSettings:
    """
    The task modes' settings, checked once (``Controller.set_task``), never changed after.

    Replaced whole by new parameters; its arrays are read-only. ``posture`` None: the commanded
    joints' positions when a task mode starts.
    """

    frame: str                              # the task frame (a link)
    stiffness: np.ndarray                   # 6: N/m x3, N m/rad x3
    damping_ratio: np.ndarray               # 6
    min_damping: np.ndarray                 # 6
    max_error: np.ndarray                   # 2: m, rad
    nullspace_stiffness: np.ndarray         # one per commanded joint
    nullspace_damping_ratio: np.ndarray     # one per commanded joint
    posture: np.ndarray                     # one per commanded joint, or None
    projector: str                          # one of task_space.PROJECTORS

    def __post_init__(self):
        read_only(self)


@dataclass(frozen=True)
class FrictionSettings:
    """
    The joints' friction model, model order: b qd + fc tanh(qd / epsilon) + fo.

    What ``robot-dynamics identify`` fits; checked once (``Controller.set_friction_compensation``),
    never changed after (its arrays are read-only). How much of it the output compensates is
    the controller's ``friction_scale``, which the payload service changes while it runs.
    """

    b: np.ndarray               # viscous damping (N m s/rad)
    fc: np.ndarray              # Coulomb friction (N m)
    fo: np.ndarray              # torque offset (N m, any sign)
    epsilon: float              # the velocity (rad/s) of tanh's smooth sign

    def __post_init__(self):
        read_only(self)

    @property
    def none(self):
        """Whether the model has no friction nor offset at all (every term zero)."""
        return not (self.b.any() or self.fc.any() or self.fo.any())


@dataclass(frozen=True)
class JointGains:
    """
    The joint modes' PD gains, model order (zero for the joints not commanded), read-only.

    Built from the parameters (``commanded``: one value or one per commanded joint) or from
    another set in model order (``of_model``: the payload service's), replaced whole.
    """

    kp: np.ndarray              # N m/rad (N/m), one per model joint
    kd: np.ndarray              # N m s/rad

    def __post_init__(self):
        read_only(self)

    @classmethod
    def commanded(cls, kp, kd, n, cmd):
        """Return the gains ``kp``, ``kd`` of the commanded joints ``cmd`` (model indices) of n."""
        gains = []
        for name, given in (('kp', kp), ('kd', kd)):
            full = np.zeros(n)
            full[cmd] = RULES[name].check(name, given, len(cmd))
            gains.append(full)
        return cls(*gains)

    @classmethod
    def of_model(cls, kp, kd, n):
        """Return the gains given in model order, one per model joint (n)."""
        return cls(*(per_joint(g, n, name, low=0.0, of='model joint', one=False)
                     for g, name in ((kp, 'kp'), (kd, 'kd'))))

    def with_joints(self, joints, kp, kd):
        """Return these gains with the joints ``joints`` (model indices) at ``kp``, ``kd``'s."""
        new_kp, new_kd = self.kp.copy(), self.kd.copy()
        new_kp[joints], new_kd[joints] = np.asarray(kp)[joints], np.asarray(kd)[joints]
        return JointGains.of_model(new_kp, new_kd, len(new_kp))


@dataclass
class Carried:
    """How far a target twist has carried the task target on since its last pose."""

    time: float = None          # the state time it is carried to (None: not yet)
    offset: np.ndarray = field(default_factory=lambda: np.zeros(3))   # position (m, root axes)
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))   # rotation, before the pose's
    stamp: float = None         # the time the last pose is for (its stamp), until first used


@dataclass
class TaskTarget:
    """The task modes' target at the task frame (root axes), as the topics and services set it."""

    position: np.ndarray
    rotation: np.ndarray
    twist: np.ndarray = field(default_factory=lambda: np.zeros(6))
    acceleration: np.ndarray = field(default_factory=lambda: np.zeros(6))
    wrench: np.ndarray = field(default_factory=lambda: np.zeros(6))
    twist_time: float = None    # when the twist came (None: no twist stream)
    changed: bool = True        # since the law took its copy
    carried: Carried = field(default_factory=Carried)


def _ancestors(model, frame):
    """Model indices of the joints that move ``frame``."""
    out, i = [], model.frame(frame)[0]
    while i >= 0:
        out.append(i)
        i = int(model.parent[i])
    return out


def frame_joints(model, cmd, frame):
    """Return the names of the commanded joints (model indices ``cmd``) that move ``frame``."""
    moving = set(_ancestors(model, frame))
    return [model.joint_names[int(i)] for i in cmd if int(i) in moving]


def _finite6(values, what):
    a = np.asarray(values, dtype=float).ravel()
    if a.shape != (6,) or not np.all(np.isfinite(a)):
        raise ValueError(f'the {what} needs 6 finite numbers, got {a.tolist()}')
    return a


def _suggest(name, candidates):
    close = difflib.get_close_matches(name, candidates, n=1)
    return f' (did you mean "{close[0]}"?)' if close else ''


def default_joints(model):
    """
    (joints, why): the command order when the ``joints`` parameter is empty.

    A description with ``<ros2_control>`` blocks states the order its ForwardCommandController
    expects: the joints with an ``effort`` command interface, in document order. Else every movable
    joint in model order.
    """
    rc = model.ros2_control
    effort = [j for j in rc.effort_joints if j in model.joint_names]
    if effort:
        return tuple(effort), ('the effort command interfaces of the description\'s '
                               '<ros2_control> blocks, in their order')
    why = ('the description\'s <ros2_control> blocks have no effort command interface'
           if rc.joints else 'the description has no <ros2_control> block')
    return model.joint_names, f'every movable joint in model order ({why})'


def unknown_joint_keys(model, names, what):
    """Messages for ``what.<joint>`` parameter names that are not joints of ``model``."""
    return [f'{what}.{name}: "{name}" is not a movable joint of {model.name}'
            + _suggest(name, model.joint_names) for name in names
            if name not in model.joint_names]


# A commanded joint whose name has one of these moves a gripper's jaw or finger, not the hand:
# the default task frame is not on it (so101's, z1's and talos' grippers are revolute, and their
# jaw was the default frame: the task law then tracked poses with the gripper, talos' 1 N m one
# held at its effort limit, 7 mm RMS round the demo's square)
JAW_WORDS = ('gripper', 'finger', 'jaw')
# Of the links fixed to the frame's body, the last whose name has one of these is the default
# (a tool centre point: panda_hand_tcp, tool0, link_eef, kinova's end_effector, talos'
# wrist_left_ft_tool_link), else the last with none of JAW_LINK_WORDS (a link named "gripper"
# may be the hand: z1's gripperStator, so101's gripper_frame_link), else the last
TOOL_WORDS = ('tcp', 'tool', 'eef', 'end_effector', 'flange')
JAW_LINK_WORDS = ('finger', 'jaw')


def default_task_frame(model, cmd):
    """
    Return the default task frame: a tool frame fixed to the deepest revolute commanded joint.

    Deepest: the most commanded joints from the root to it, a gripper's joints aside (prismatic
    fingers, and joints named with JAW_WORDS: panda's frame is on its hand, not a finger; z1's
    on link06, not its revolute jaw). Of the links fixed to that joint's child (merged through
    fixed joints), the last in model order named as a tool (TOOL_WORDS: ur5's tool0, after
    wrist_3_link and ee_link), else the last not named as a jaw or finger, else the last.
    """
    commanded = set(int(i) for i in cmd)

    def depth(i):
        d = 0
        while i >= 0:
            d += i in commanded
            i = int(model.parent[i])
        return d

    def named(name, words):
        return any(w in name.lower() for w in words)
    revolute = [int(i) for i in cmd if model.jtype[i] == 0]
    arm = ([i for i in revolute if not named(model.joint_names[i], JAW_WORDS)] or revolute
           or [int(i) for i in cmd])
    body = max(arm, key=lambda i: (depth(i), -i))
    links = [link for link in model.frames if model.frame(link)[0] == body]
    tools = [link for link in links if named(link, TOOL_WORDS)]
    hand = [link for link in links if not named(link, JAW_LINK_WORDS)]
    return (tools or hand or links)[-1]


def payload_model(model, payload):
    """
    Return the model to compute with.

    That is ``model`` with the rigid payload (None or dict(link, mass, com, inertia)) on its link.
    ValueError (naming the parameter) for a negative mass or a link not in the model.
    """
    payload = payload or {}
    link, mass = payload.get('link', ''), payload.get('mass', 0.0)
    RULES['payload.mass'].check('payload.mass', mass)
    if link and link not in model.link_names:
        raise ValueError(f'payload.link "{link}" is not a link of {model.name}'
                         + _suggest(link, model.link_names))
    if not link or mass == 0.0:
        return model
    return model.with_payload(link, mass, payload.get('com', (0.0, 0.0, 0.0)),
                              payload.get('inertia', (0.0,) * 6))


def _ramp_at(ramp, now):
    """Return the task stiffness at ``now`` of ``ramp`` ([from, to, since], STIFFNESS_RAMP)."""
    K0, K1, since = ramp
    s = min(1.0, max(0.0, (now - since) / STIFFNESS_RAMP))
    return K0 + (K1 - K0) * s


class Controller:
    """Efforts for the ``joints`` of a model, from joint states and a desired trajectory."""

    def __init__(self, model, *, joints=(), mode='gravity', kp=(100.0,), kd=(20.0,),
                 hardware_compensates_gravity=False, effort_limits=None, default_positions=None,
                 payload=None, armature=None, friction_compensation=0.0, damping=None,
                 friction=None, friction_velocity_epsilon=0.01, task=None, torque_offset=None,
                 limits=None, force=None):
        # the rotor inertias (armature) are part of the arm: with the payload on top
        self.base_model = model if armature is None or len(armature) == 0 else \
            model.with_armature(RULES['armature'].check('armature', armature, model.n))
        model = self.base_model
        joints = tuple(joints) or default_joints(model)[0]
        unknown = [j for j in joints if j not in model.joint_names]
        if unknown:
            raise ValueError(f'joints {unknown} are not movable joints of {model.name} '
                             f'(it has {list(model.joint_names)})')
        if len(set(joints)) != len(joints):
            raise ValueError(f'joints names a joint twice: {list(joints)}')
        self.joints = joints
        self.cmd = np.array([model.index(j) for j in joints], dtype=np.int64)
        self.set_default_positions(default_positions or {})
        self.force_settings = check_force(force)
        # what changes while it runs (control/memory.py): taken over whole by new parameters
        self._bind(ControlMemory(JointStateStore(model, self.cmd, self.default_q), Reference(),
                                 Sent(self.joints), ForceLoop(self.force_settings)))
        self.mode = 'gravity'
        self.set_mode(mode)
        self.set_gains(JointGains.commanded(kp, kd, model.n, self.cmd))
        self.hardware_compensates_gravity = bool(hardware_compensates_gravity)
        self.set_effort_limits(effort_limits or {})
        self.set_payload(payload)
        self.set_friction_compensation(friction_compensation, damping, friction,
                                       friction_velocity_epsilon, torque_offset)
        self.law = None               # the TaskSpaceLaw of self.model, built on first use
        self._law_posture = None      # the posture the law has
        self._law_target = None       # the TaskTarget the law has a copy of
        self.compensated = None       # the friction compensation of the last output, or None
        self.set_task(task)
        self.set_limits(limits)
        self.external_torques = None  # the observer's estimate at the last full_torque

    # ---- configuration ---------------------------------------------------------------------
    @property
    def n(self):
        return self.model.n

    def set_mode(self, mode):
        if mode not in MODES:
            raise ValueError(f'mode must be one of {MODES}, got "{mode}"')
        if mode != self.mode:
            self.ref.keep(hold=False)
            self.ref.start_task()               # a task mode starts where the frame is
        self.mode = mode

    def set_task(self, task):
        """
        Configure the task modes (``TASK_DEFAULTS`` for what is not given); ValueError naming it.

        Checked whatever the mode, so that a switch to a task mode cannot fail.
        """
        t = dict(TASK_DEFAULTS, **(task or {}))
        unknown = set(t) - set(TASK_DEFAULTS)
        if unknown:
            raise ValueError(f'unknown task settings {sorted(unknown)}')
        m, k = self.base_model, len(self.joints)
        frame = t['frame'] or default_task_frame(m, self.cmd)
        if frame not in m.frames:
            raise ValueError(f'task.frame "{frame}" is not a link of {m.name}'
                             + _suggest(frame, m.frames))
        if m.frame(frame)[0] < 0 or not any(i in self.cmd for i in _ancestors(m, frame)):
            raise ValueError(f'task.frame "{frame}" is not moved by any commanded joint')
        stiffness, damping_ratio, min_damping, max_error = (
            RULES[f'task.{key}'].check(f'task.{key}', t[key])
            for key in ('stiffness', 'damping_ratio', 'min_damping', 'max_error'))
        kn, zn = (RULES[f'nullspace.{key}'].check(f'nullspace.{key}', t[f'nullspace_{key}'], k)
                  for key in ('stiffness', 'damping_ratio'))
        posture = None if len(t['posture']) == 0 else \
            RULES['nullspace.posture'].check('nullspace.posture', t['posture'], k)
        if t['projector'] not in PROJECTORS:
            raise ValueError(f'nullspace.projector must be one of {PROJECTORS}, got '
                             f'"{t["projector"]}"')
        self.task = TaskSettings(frame, stiffness, damping_ratio, min_damping, max_error, kn, zn,
                                 posture, t['projector'])
        self.law = None

    def set_limits(self, limits):
        """
        Configure the limits layer (``limits.LIMIT_DEFAULTS`` for what is not given).

        ValueError naming the parameter; the frame defaults to the task frame.
        """
        settings = dict(limits or {})
        frame = settings.get('frame') or self.task.frame
        m = self.base_model
        if frame not in m.frames:
            raise ValueError(f'limits.frame "{frame}" is not a link of {m.name}'
                             + _suggest(frame, m.frames))
        self.limit_settings = check_limits(dict(settings, frame=frame))
        self.limit_layer = self._layer()

    def _layer(self):
        return LimitLayer(self.model, self.cmd, self.limits, self.limit_settings,
                          self.limit_settings.frame, self.hardware_compensates_gravity,
                          sent=self.memory.sent)

    def _rebuild_layer(self):
        """Build the layer anew (a new model or effort limits); the last command is memory's."""
        old = getattr(self, 'limit_layer', None)
        if old is not None:
            self.limit_layer = self._layer()
            self.limit_layer.unknown_load = old.unknown_load    # this controller's, still

    def take_task(self, other):
        """
        Go on with the task state of another Controller (a parameter change, a new model).

        Into this controller's memory (``other``'s itself after ``carry_on_from``): the target
        and the posture taken at activation (in the reference taken over, or given to a new
        model's: call ``take_motion`` first), the stiffness where its ramp is (it ramps from
        there to this controller's), the last command for the rate limit (the same joints'),
        the force loop (the same settings') and the sensor (the same description's).
        """
        mine, theirs = self.memory, other.memory
        carries = other.mode in TASK_MODES and self.mode in TASK_MODES and \
            other.task.frame == self.task.frame and other.joints == self.joints
        ramp, last = theirs.ramp, theirs.sent.last
        if carries and ramp is not None:
            # from where the ramp is at the last command's state time
            now = ramp[2] + STIFFNESS_RAMP if last is None or last[1] is None else last[1]
            mine.ramp = [_ramp_at(ramp, now), self.task.stiffness, now]
        else:
            mine.ramp = None
        mine.sent = theirs.sent if theirs.sent.names == self.joints else Sent(self.joints)
        mine.force = theirs.force if same_settings(theirs.force.settings, self.force_settings) \
            else ForceLoop(self.force_settings)
        # the sensor and its bias: kept by new parameters (the same description, even where
        # they give it another payload or armature: the node takes the sensor's frame on the
        # new model at the next reading, the bias kept); a new description's is made anew
        if mine is not theirs:
            mine.sensor = theirs.sensor if other.model is self.model else None
        # the target; the posture taken at activation, unless this controller is given one
        posture = self.task.posture is None
        if mine is theirs:                      # new parameters: the reference taken over
            mine.ref.keep(task=carries, posture=posture)
        elif carries:                           # a new model: its reference remapped
            mine.ref.take_task(theirs.ref, posture)
        self._bind(mine)

    def task_pose(self):
        """Return the task frame's pose (4x4) at the current state."""
        from ..dynamics import frame_placement
        return frame_placement(self.model, self.q, self.task.frame)

    def set_task_pose(self, position, quaternion, stamp=None):
        """
        Set the target pose: position (m) and orientation as a quaternion (x, y, z, w).

        The quaternion is normalised; a zero or non-finite one is refused (ValueError), as is a
        non-finite position. The target twist and wrench are kept; the target moves on from this
        pose with the target twist (``_carry_on``), from ``stamp`` (the time the pose is for, in
        the states' clock; within STAMP_RANGE of the state's time, else ignored) or from the
        first command after it.
        """
        p = np.asarray(position, dtype=float)
        x, y, z, w = np.asarray(quaternion, dtype=float)
        norm = math.sqrt(x * x + y * y + z * z + w * w)
        if not np.all(np.isfinite(p)):
            raise ValueError(f'the target position is not finite: {p.tolist()}')
        if not math.isfinite(norm) or norm < 1e-6:
            raise ValueError(f'the target orientation is not a rotation: quaternion '
                             f'{[x, y, z, w]}')
        x, y, z, w = x / norm, y / norm, z / norm, w / norm
        R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                      [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                      [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        target = self._target()
        target.position, target.rotation, target.changed = p, R, True
        target.carried = Carried(stamp=stamp)       # carried on from here (_carry_on)
        self._keep_force_hold(target)
        return norm

    def set_task_twist(self, twist, now):
        """Set the target's velocity (6, root axes) at time ``now``; its change gives a_d."""
        v = _finite6(twist, 'target twist')
        target = self._target()
        dt = now - target.twist_time if target.twist_time is not None else math.inf
        target.acceleration = (v - target.twist) / dt if 0 < dt <= TWIST_GAP else np.zeros(6)
        target.twist, target.twist_time, target.changed = v, now, True
        self._keep_force_hold(target)

    def set_task_wrench(self, wrench, now=None):
        """
        Set the wrench at the task frame's origin (6, root axes); False if a hold kept it out.

        A feedforward, and on the force axes the force asked. ``now``: when it came (monotonic
        s; None: a single request): after a hold, only one after a pause in the target wrenches
        re-arms the force axes (``ForceLoop.asked``); one of a stream leaves them held, and is
        then not asked of them.
        """
        target = self._target()
        target.wrench, target.changed = _finite6(wrench, 'target wrench'), True
        taken = self.memory.force.asked(now)
        self._keep_force_hold(target)
        return taken

    def _keep_force_hold(self, target):
        """
        Keep the task target where the force axes hold, if they do: no motion, no force.

        The held pose along the force axes (its twist's carrying too), the rest of the target
        as it is; from ``_force_axes`` when the hold begins, and after every target meanwhile.
        """
        fl = self.memory.force
        if fl.holding is None or not fl.held:
            return
        ax = fl.axes
        position, rotation = fl.held_pose
        target.position[ax[:3]] = position[ax[:3]]
        target.carried.offset[ax[:3]] = 0.0
        if np.any(ax[3:]):
            target.rotation[:] = rotation
            target.carried.rotation = np.eye(3)
        target.twist[ax], target.acceleration[ax], target.wrench[ax] = 0.0, 0.0, 0.0

    def hold_task_target(self):
        """Hold the target where it is: no target velocity or acceleration (a stream stopped)."""
        target = self.ref.task_target
        if target is not None:
            if target.twist_time is not None and self._law_target is target and \
                    self.law is not None:
                # where the twist had carried it, not back at the last pose
                target.position, target.rotation = (self.law.target_position.copy(),
                                                    self.law.target_rotation.copy())
            target.carried = Carried()
            target.twist, target.acceleration = np.zeros(6), np.zeros(6)
            target.twist_time, target.changed = None, True

    def _target(self):
        """Return the TaskTarget, first set to the frame's current pose (activation)."""
        ref = self.ref
        if ref.task_target is None:
            T = self.task_pose()
            ref.task_target = TaskTarget(T[:3, 3].copy(), T[:3, :3].copy())
        return ref.task_target

    def _task_law(self):
        """Return the TaskSpaceLaw, built for this controller's model and settings on first use."""
        law = self.law
        if law is None or law.mode != self.mode:
            t = self.task
            law = TaskSpaceLaw(self.model, self.cmd, t.frame, self.mode)
            law.set_damping_ratio(t.damping_ratio)
            law.set_min_damping(t.min_damping)
            law.set_max_error(t.max_error)
            law.set_limits(self.limits)
            law.set_nullspace(t.nullspace_stiffness, t.nullspace_damping_ratio,
                              np.zeros(len(self.cmd)), t.projector)
            self.law, self._law_posture, self._law_target = law, None, None
        return law

    def _task_torque(self, q, qd, now):
        law = self._task_law()
        t = self.task
        target = self._target()
        ref = self.ref
        if ref.posture is None:
            ref.posture = t.posture if t.posture is not None else q[self.cmd].copy()
        if self._law_posture is not ref.posture:
            law.posture[:] = self._law_posture = ref.posture
        memory = self.memory
        ramp = memory.ramp
        if ramp is None or ramp[1] is not t.stiffness:
            memory.ramp = ramp = [t.stiffness if ramp is None else _ramp_at(ramp, now),
                                  t.stiffness, now]
            law.stiffness[:] = ramp[0]
        if ramp[0] is not ramp[1]:
            law.stiffness[:] = _ramp_at(ramp, now)
            if now - ramp[2] >= STIFFNESS_RAMP:
                ramp[0] = ramp[1]
        if self._law_target is not target or target.changed:     # copied when it changed
            law.target_position[:], law.target_rotation[:] = target.position, target.rotation
            law.target_twist[:], law.target_acceleration[:] = target.twist, target.acceleration
            law.target_wrench[:] = target.wrench
            if self.limit_layer.frame == t.frame:
                self.limit_layer.shape_target(law.target_position, law.target_twist,
                                              law.target_acceleration)
            self._law_target, target.changed = target, False
        if target.twist_time is not None:                   # a target twist: moving on
            self._carry_on(law, target, now)
        if memory.force.active:
            self._force_axes(law, q, now, target)
        tau = law.torques(q, qd).copy()
        law.feedback_within(tau, self.limits)      # past the effort limits: its direction kept
        return tau

    def _friction_velocity(self, qd):
        """
        Return the velocities the task modes' friction compensation takes (model order).

        Per commanded joint the one the target's twist asks (J^+ v_d, least norm; not the force
        axes, whose target twist is a force's), zero while the target is still: a joint held by
        its stiction gets its friction compensated as soon as the target moves, as along a joint
        trajectory (xarm7, 1 N m Coulomb per joint: stuck for 0.33 s when a slide began, the
        pressed force sagging 1.9 N). Never the measured one: that is negative damping wherever
        the model's friction exceeds the arm's (fc / epsilon against the impedance's damping:
        xarm7's URDF friction, compensated in full on an arm without it, diverged in 6 ms), as
        while holding a pose in the joint modes. ``qd`` gives the shape.
        """
        out = np.zeros_like(qd, dtype=float)
        law, target = self.law, self.ref.task_target
        if law is None or target is None or not np.any(target.twist):
            return out
        v = target.twist
        if self.memory.force.active:
            v = np.where(self.memory.force.axes, 0.0, v)
        J = law.jacobian[:, self.cmd]
        out[self.cmd] = J.T @ np.linalg.solve(J @ J.T + 1e-6 * np.eye(6), v)
        return out

    def _carry_on(self, law, target, now):
        """
        Move the law's target pose on from the last target pose by the target twist.

        The twist is integrated over the state time (the commands' ``now``) since the pose, so a
        pose and twist stream is a smooth reference whatever its rate or jitter, and a twist
        stream alone moves the target (velocity control). The loop holds the target where it
        got to once the stream is silent for task.target_timeout (``hold_task_target``).
        """
        carried = target.carried
        t0, first = carried.time, carried.time is None
        if first and carried.stamp is not None:
            # the first command after a stamped pose: from the time the pose is for (a stream
            # arriving late is not stepped back and forth; one for later is behind), unless the
            # stamp is of another clock
            if abs(now - carried.stamp) <= STAMP_RANGE:
                t0 = carried.stamp
            carried.stamp = None
        if t0 is not None and (now > t0 or first):
            dt, tw = now - t0, target.twist
            p = carried.offset
            p[0] += tw[0] * dt
            p[1] += tw[1] * dt
            p[2] += tw[2] * dt
            x, y, z = tw[3] * dt, tw[4] * dt, tw[5] * dt
            angle = math.sqrt(x * x + y * y + z * z)
            if angle > 1e-12:
                # exp([w] dt) (Rodrigues), the rotation carried on about the root axes
                x, y, z = x / angle, y / angle, z / angle
                c, s = math.cos(angle), math.sin(angle)
                v = 1.0 - c
                E = np.array([[c + x * x * v, x * y * v - z * s, x * z * v + y * s],
                              [x * y * v + z * s, c + y * y * v, y * z * v - x * s],
                              [x * z * v - y * s, y * z * v + x * s, c + z * z * v]])
                carried.rotation = E @ carried.rotation
        if first or now > carried.time:
            carried.time = now
        np.add(target.position, carried.offset, out=law.target_position)
        np.matmul(carried.rotation, target.rotation, out=law.target_rotation)
        if self.limit_layer.frame == self.task.frame:
            self.limit_layer.shape_target(law.target_position, law.target_twist,
                                          law.target_acceleration)

    def _force_axes(self, law, q, now, target):
        """
        Put the force axes' loop into the law (``control.force``), or hold them.

        Off the force axes the law keeps its target; on them zero stiffness, the damping of the
        force servo and its target twist v_ref. Holding (stale source, lost contact): the target
        there becomes the current pose, no wrench.
        """
        memory = self.memory
        fl = memory.force
        ax = fl.axes
        applied, why = self._applied_wrench(q, now)
        if why is not None and fl.hold(why):
            memory.force_event = why
        if fl.holding is None:
            v_ref, damping = fl.update(applied, target.wrench, now)
            if fl.holding is not None:
                memory.force_event = fl.holding
        if fl.holding is not None:
            if not getattr(fl, 'held', False):
                # hold where the frame is now, with no force asked along the force axes
                T = self.task_pose()
                fl.held, fl.held_pose = True, (T[:3, 3].copy(), T[:3, :3].copy())
                self._keep_force_hold(target)
                target.changed = True
                law.target_position[:], law.target_rotation[:] = target.position, target.rotation
                law.target_twist[:], law.target_acceleration[:] = target.twist, target.acceleration
                law.target_wrench[:] = target.wrench
                law.set_min_damping(self.task.min_damping)
                law.stiffness[:] = _ramp_at(memory.ramp, now)
            return
        fl.held = False
        law.stiffness[ax] = 0.0
        law.min_damping[:] = np.where(ax, damping, self.task.min_damping)   # checked values
        law.target_twist[ax] = v_ref[ax]
        law.target_acceleration[ax] = 0.0
        law.target_wrench[ax] = 0.0
        target.changed = True       # the law's copy of the target to be made again next time

    def _applied_wrench(self, q, now):
        """Return (the wrench the arm applies at the task frame, root axes; why not or None)."""
        s, frame = self.force_settings, self.task.frame
        if s.source == 'sensor':
            src = self.memory.sensor
            if src is None or not src.fresh(now, s.timeout):
                return np.zeros(6), (f'no force/torque reading on {s.topic} for '
                                     f'{s.timeout} s: the force axes hold their position')
            T_s = frame_placement(self.model, q, src.side.frame)
            T_t = frame_placement(self.model, q, frame)
            external = at_frame(src.external(q), T_s[:3, :3], T_s[:3, 3], T_t[:3, 3])
        else:
            r = self.external_torques
            if r is None:
                return np.zeros(6), ('no external torque estimate (observer.enabled off?): the '
                                     'force axes hold their position')
            J = frame_jacobian(self.model, q, frame)
            external = external_wrench(J[:, self.cmd], np.asarray(r)[self.cmd])
        return -external, None

    def set_gains(self, gains):
        """Use ``gains`` (JointGains of this model: its number of joints checked)."""
        if len(gains.kp) != self.base_model.n:
            raise ValueError(f'gains for {len(gains.kp)} joints, the model has '
                             f'{self.base_model.n}')
        self.gains = gains

    def set_friction_share(self, scale):
        """Compensate a share ``scale`` (0..1) of the friction set by the last call below."""
        self.friction_scale = RULES['friction_compensation'].check('friction_compensation', scale)

    def expect_unknown_load(self, unknown):
        """
        Say whether a load the model lacks is on the arm (``~/estimate_payload`` runs).

        The limits layer's bounds then take no estimate: it is of that load, not of a push.
        """
        self.limit_layer.unknown_load = bool(unknown)

    def set_friction_compensation(self, scale, damping=None, friction=None, epsilon=0.01,
                                  offset=None):
        """
        Compensate a share ``scale`` (0..1) of the joints' friction in the output.

        Viscous ``damping`` b and Coulomb ``friction`` fc per model joint (one value for all, or
        None for the URDF's <dynamics>), with a smooth sign, and the torque ``offset`` fo (any
        sign; None: the model's, zero from a URDF): b qd + fc tanh(qd / ``epsilon``) + fo, what
        ``robot-dynamics identify`` fits. The observer takes all of it (``model_friction``).
        """
        self.set_friction_share(scale)
        epsilon = RULES['friction_velocity_epsilon'].check('friction_velocity_epsilon', epsilon)
        m = self.base_model
        values = [RULES[name].check(name, urdf if given is None or len(given) == 0 else given,
                                    m.n)
                  for name, given, urdf in (('damping', damping, m.damping),
                                            ('friction', friction, m.friction),
                                            ('torque_offset', offset, m.torque_offset))]
        self.friction = FrictionSettings(*values, float(epsilon))
        self.frictionless = self.friction.none
        self._friction_tmp = np.empty(m.n)
        self._at_rest = np.zeros(m.n)

    def react(self, kind, q):
        """
        React to a collision detected at q: ``hold`` or ``float``, until ``clear_reaction``.

        ``hold``: computed-torque hold of q (kp, kd), whatever the mode; ``float``: gravity
        compensation only, so a person can push the arm away. The trajectory is dropped.
        """
        if kind not in ('hold', 'float'):
            raise ValueError(f'reaction must be hold or float, got "{kind}"')
        self.ref.react(kind, q)

    def hold_here(self):
        """Drop the trajectory and hold the position the arm is at now."""
        self.ref.hold_at(self.q)

    def hold_at(self, q):
        """Drop the trajectory and hold ``q`` (model order)."""
        self.ref.hold_at(q)

    def hold_at_next_command(self):
        """Drop the trajectory and hold where the arm is at the next command (the state then)."""
        self.ref.hold_at(None)

    def use_sensor(self, side, payload=None):
        """
        Read the force/torque sensor of ``side`` (a ``ChildSide``), the tool carrying ``payload``.

        The bias that ``~/zero_ft_sensor`` set is kept when the sensor's frame is the same.
        Return the sensor input.
        """
        memory = self.memory
        old, memory.sensor = memory.sensor, SensorInput(side, payload, self.model.gravity)
        if old is not None and old.side.frame == side.frame:
            memory.sensor.bias = old.bias
        return memory.sensor

    def clear_reaction(self):
        """
        Back to the mode's behaviour (without the dropped trajectory: it holds or floats).

        A task mode starts again where the frame is (the target before the collision is dropped,
        as the trajectory is: going back to it would mean driving into what was hit).
        """
        self.ref.clear_reaction()

    def friction_torque(self, qd):
        """Return the friction compensation for model joint velocities qd (zero when off)."""
        if self.friction_scale == 0.0:
            return np.zeros(self.base_model.n)
        return self.friction_scale * self.model_friction(qd)

    def model_friction(self, qd, out=None):
        """
        Return the joints' friction and offset at velocities qd: b qd + fc tanh + fo.

        ``out``: an array of n to fill (the observer's, once per joint state: no allocation).
        """
        if out is None:
            out = np.empty(self.base_model.n)
        if self.frictionless:           # (a URDF without <dynamics>: 6 numpy calls saved)
            out[:] = 0.0
            return out
        tmp, f = self._friction_tmp, self.friction
        np.divide(qd, f.epsilon, out=tmp)
        np.tanh(tmp, out=tmp)
        np.multiply(f.fc, tmp, out=tmp)
        np.multiply(f.b, qd, out=out)
        out += tmp
        out += f.fo
        return out

    def set_effort_limits(self, overrides):
        """Override effort limits ({joint: limit}); the others keep the URDF's (or inf)."""
        limits = self.base_model.effort_limits.copy()
        for joint, value in overrides.items():
            if not (value > 0):
                raise ValueError(f'effort limit of {joint} must be > 0, got {value}')
            limits[self.base_model.index(joint)] = value
        self.limits = limits[self.cmd]
        self.law = None                 # the task-space law clamps its nullspace torque to them
        self._rebuild_layer()

    def set_default_positions(self, defaults):
        """defaults: {joint: position} for joints that joint_states do not carry."""
        q = np.zeros(self.base_model.n)
        for joint, value in defaults.items():
            if not np.isfinite(value):
                raise ValueError(f'default position of {joint} is not finite')
            q[self.base_model.index(joint)] = value
        self.default_q = q
        if hasattr(self, 'state'):              # joints never received follow the defaults
            self.state.use_defaults(q)

    def set_payload(self, payload):
        """
        payload: None or dict(link, mass, com, inertia); rebuilds the model it computes with.

        ValueError (naming the parameter) for a negative mass or a link not in the model.
        """
        self.swap_model(payload_model(self.base_model, payload))

    def swap_model(self, model):
        """Compute with ``model`` (this arm's, e.g. with a payload on); return the one replaced."""
        # the task-space law is of the model: built again for it (none yet while constructing)
        old, self.model, self.law = getattr(self, 'model', None), model, None
        self._rebuild_layer()
        return old

    # ---- inputs ----------------------------------------------------------------------------
    def _bind(self, memory):
        """
        Take the ControlMemory ``memory``: q, qd and the rest are its store's arrays (in place).

        The state is merged and asked about through ``state``: ``state.merge``,
        ``state.missing()``, ``state.stale(...)``; the reference is ``ref``; the limits layer
        notes the commands in ``memory.sent``.
        """
        self.memory = memory
        self.state = store = memory.state
        self.ref = memory.ref
        self.q, self.qd = store.q, store.qd
        self.received, self.updated, self.stamped = store.received, store.updated, store.stamped
        layer = getattr(self, 'limit_layer', None)
        if layer is not None:
            layer.remember(memory.sent)

    def take_state(self, other):
        """
        Take the merged state of another Controller: its store itself, never a copy.

        Of the same model and commanded joints (new parameters): this controller and ``other``
        then hold one store, joints never received at this one's default positions. Of another
        (a description that changed while running): a store remapped by joint name, the joints
        both models have keeping their state, the others from their defaults.
        """
        store = other.state
        if store.takes_over(self.base_model, self.cmd):
            store.use_defaults(self.default_q)
        else:
            store = store.remapped(self.base_model, self.cmd, self.default_q)
        self.memory.state = store
        self._bind(self.memory)

    def carry_on_from(self, other):
        """
        Go on with what ``other`` (these parameters' predecessor, the same model) was doing.

        Its memory itself, never a copy: the state (``take_state``), the collision reaction
        and the task (``take_task``); the trajectory when the commanded joints stay and this is
        a joint mode, the held position when the mode stays too. Return False when a running
        trajectory is dropped (a task mode, or other joints).
        """
        self._bind(other.memory)
        self.take_state(other)
        kept = self.joints == other.joints and self.mode not in TASK_MODES
        following = self.ref.trajectory is not None
        self.ref.keep(trajectory=kept, hold=kept and self.mode == other.mode)
        self.take_task(other)
        return kept or not following

    def take_motion(self, other):
        """
        Take the reference of another Controller remapped: its trajectory and held position.

        Of this model or of another (a description that changed while running: joints matched
        by name). Returns None when taken (or there was none), else why the trajectory was not:
        a joint it moves is not in this model. The held position is kept in the same mode; the
        collision reaction is not; the task target is ``take_task``'s.
        """
        self.memory.ref, dropped = other.ref.remapped(other.base_model, self.base_model,
                                                      self.default_q, hold=other.mode == self.mode)
        self._bind(self.memory)
        return dropped

    def take_over(self, other):
        """
        Go on with what ``other`` (a controller of another model) was doing, remapped by name.

        The state (``take_state``), the reference (``take_motion``), then the task
        (``take_task``). Return None, or why the running trajectory was dropped.
        """
        self.take_state(other)
        dropped = self.take_motion(other)
        self.take_task(other)
        return dropped

    def set_trajectory(self, joint_names, times, positions, velocities, accelerations, *,
                       start_time, now, q, qd, efforts=None):
        """
        Validate and take a new trajectory (it replaces the old one).

        ``start_time`` is the absolute start (``now`` when the message's stamp is zero); ``q``,
        ``qd`` the state at arrival. ``efforts``: the points' effort feedforward (or None); it
        starts from the running trajectory's feedforward now. Raises ValueError, keeping the
        previous trajectory, when it is invalid.
        """
        effort0 = None
        if efforts is not None:
            effort0 = self.trajectory_effort(now)[[self.base_model.index(j) for j in joint_names
                                                   if self.base_model.has_joint(j)]]
        traj, idx = self._trajectory(joint_names, times, positions, velocities, accelerations,
                                     start_time, q, qd, efforts, effort0)
        if traj.end_time < now:
            raise ValueError(f'the trajectory ended {now - traj.end_time:.3f} s ago '
                             f'(stamped start + last time_from_start is in the past)')
        self.ref.follow(Followed(traj, idx, q.copy()))
        return traj

    def check_trajectory(self, joint_names, times, positions, velocities=None, accelerations=None,
                         *, q, qd=None, sample_period=1e-3):
        """
        Check a trajectory against this controller's limits without taking it (a Feasibility).

        The trajectory starts from ``q``, ``qd`` (model order; the joints not in it stay at q):
        with this controller's model (payload, armature), its effective effort limits and the
        URDF velocity limits, for the commanded joints. ValueError as ``set_trajectory``.
        """
        q = np.asarray(q, dtype=float)
        qd = np.zeros(self.base_model.n) if qd is None else np.asarray(qd, dtype=float)
        traj, _ = self._trajectory(joint_names, times, positions, velocities, accelerations,
                                   0.0, q, qd)
        return check_trajectory(self.model, traj, joints=self.joints, q_rest=q,
                                effort_limits=self.limits,
                                velocity_limits=self.model.velocity_limits[self.cmd],
                                sample_period=sample_period)

    def _trajectory(self, joint_names, times, positions, velocities, accelerations, start_time,
                    q, qd, efforts=None, effort0=None):
        """(JointTrajectory from the state q, qd in model order, its joints' model indices)."""
        unknown = [j for j in joint_names if j not in self.base_model.joint_names]
        if unknown:
            raise ValueError(f'unknown joints {unknown}')
        idx = np.array([self.base_model.index(j) for j in joint_names], dtype=np.int64)
        return JointTrajectory(joint_names, times, positions, velocities, accelerations,
                               start_time=start_time, q0=q[idx], qd0=qd[idx], efforts=efforts,
                               effort0=effort0), idx

    def trajectory_effort(self, t):
        """Return the running trajectory's effort feedforward at t, model order (zeros: none)."""
        out = np.zeros(self.base_model.n)
        followed = self.ref.trajectory
        if followed is not None and followed.path.efforts is not None:
            out[followed.joints] = followed.path.effort(t)
        return out

    def desired(self, t, q):
        """(q_d, qd_d, qdd_d) in model order at time t, or None without trajectory."""
        if self.ref.trajectory is None:
            return None
        traj, idx, q_arrival = self.ref.trajectory
        qd_, qdd_ = np.zeros(self.base_model.n), np.zeros(self.base_model.n)
        q_ = q_arrival.copy()
        q_[idx], qd_[idx], qdd_[idx] = traj.sample(t)
        return q_, qd_, qdd_

    # ---- outputs ---------------------------------------------------------------------------
    def full_torque(self, q, qd, t, des=None, now=0.0, external=None):
        """
        Compute torques for every model joint, before joint selection and clamping.

        What the drives are to add to what they do themselves: the mode's (or the reaction's)
        torque, less g(q) where the hardware compensates gravity (``_drive``). ``des``: the
        desired state at t when the caller has it already. ``now``: the time (s) of the state,
        for the task modes' stiffness ramp. ``external``: the observer's estimate of the
        external torques (model order; None: none), the force axes' input with ``force.source``
        observer.
        """
        self.external_torques = external
        return self._drive(self._law_torque(q, qd, t, des, now), q)

    def _drive(self, tau, q):
        """Return ``tau`` (model order) less g(q) where the hardware compensates gravity."""
        return tau - gravity_torques(self.model, q) if self.hardware_compensates_gravity else tau

    def _law_torque(self, q, qd, t, des, now):
        """Return the torque of the mode's law (or the collision reaction's), gravity included."""
        m, ref = self.model, self.ref
        self.compensated = None             # the friction in the output (model order)
        if ref.reaction is not None:
            return self._reaction_torque(q, qd)
        if self.mode in TASK_MODES:
            tau = self._task_torque(q, qd, now)
            if self.friction_scale:
                self.compensated = self.friction_torque(self._friction_velocity(qd))
                tau += self.compensated
            return tau
        if des is None and ref.trajectory is not None and self.mode != 'gravity':
            des = self.desired(t, q)        # (the caller's: None when holding, asked once)
        # friction compensation: on the desired velocity along a trajectory; holding a pose, on
        # none (the hold is at rest). Not on the measured one there: that is negative damping
        # wherever the model's friction exceeds the arm's (b + fc / epsilon against M_jj kd:
        # xarm7's URDF friction on an arm without it, holding, diverged in 9 ms). The gravity
        # mode, which has no desired velocity, takes the measured one (hand guiding)
        if des is not None:
            v = des[1]
        else:
            v = qd if self.mode == 'gravity' else self._at_rest
        friction = self.friction_torque(v)
        if self.friction_scale:
            self.compensated = friction
        law = JOINT_LAWS[self.mode]
        if self.mode == 'gravity':
            return friction + law(m, q, qd, des, self.gains.kp, self.gains.kd)
        if ref.trajectory is not None and ref.trajectory.path.efforts is not None:
            friction = friction + self.trajectory_effort(t)    # the points' effort feedforward
        if des is None and self.mode == 'computed_torque':
            des = (ref.hold if ref.hold is not None else ref.held(q), np.zeros(m.n),
                   np.zeros(m.n))
        return law(m, q, qd, des, self.gains.kp, self.gains.kd) + friction

    def _reaction_torque(self, q, qd):
        ref = self.ref
        return REACTION_LAWS[ref.reaction](self.model, q, qd, ref.reaction_q, self.gains.kp,
                                           self.gains.kd)

    def command(self, q, qd, t, des=None, now=None):
        """
        Return (efforts of the commanded joints, clamped to the limits; mask of clamped joints).

        ``now``: the time (s) of the state (the task modes' stiffness ramp). The torque rate and
        the other limits are shaped after this, by ``shaping.CommandShaper``.
        """
        return clamp(self.full_torque(q, qd, t, des, 0.0 if now is None else now), self.cmd,
                     self.limits)

    def timeout_command(self, behaviour, q):
        """
        Return what to command when joint states are stale (the commanded joints').

        ``zero``, or ``gravity`` g(q) at the last known q (zero too when the hardware compensates
        gravity itself); the shaper clamps it (``CommandShaper.timeout``).
        """
        if behaviour not in TIMEOUT_BEHAVIOURS:
            raise ValueError(f'on_timeout must be one of {TIMEOUT_BEHAVIOURS}, got "{behaviour}"')
        if behaviour == 'zero' or q is None:
            return np.zeros(len(self.joints))
        return self._drive(gravity_torques(self.model, q), q)[self.cmd]

    def inverse_dynamics(self, names, position, velocity=(), acceleration=(), wrenches=None):
        """
        Answer the InverseDynamics service.

        Returns (effort, gravity, coriolis, inertial, friction) for ``names`` in their order,
        effort being the sum (minus J^T f_ext with wrenches); friction is the compensation at
        the requested velocity (zero when friction_compensation is 0). Joints not
        named take default positions and zero velocity/acceleration. ``wrenches``: {link: [fx,
        fy, fz, tx, ty, tz]} in the link frame.
        """
        names = list(names)
        if not names:
            raise ValueError('name is empty')
        if len(set(names)) != len(names):
            raise ValueError('name lists a joint twice')
        unknown = [j for j in names if j not in self.model.joint_names]
        if unknown:
            raise ValueError(f'unknown joints {unknown}')
        k = len(names)
        pos = per_joint(position, k, 'position', of='name', one=False)
        vel = np.zeros(k) if len(velocity) == 0 else \
            per_joint(velocity, k, 'velocity', of='name', one=False)
        acc = np.zeros(k) if len(acceleration) == 0 else \
            per_joint(acceleration, k, 'acceleration', of='name', one=False)
        m = self.model
        idx = np.array([m.index(j) for j in names], dtype=np.int64)
        q, qd, qdd = self.default_q.copy(), np.zeros(m.n), np.zeros(m.n)
        q[idx], qd[idx], qdd[idx] = pos, vel, acc
        for link, w in (wrenches or {}).items():
            if link not in m.link_names:
                raise ValueError(f'unknown link "{link}" in wrench_link')
            if not np.all(np.isfinite(w)):
                raise ValueError(f'the wrench on "{link}" contains NaN or Inf')
        g = gravity_torques(m, q)
        b = bias_torques(m, q, qd)
        tau_free = rnea(m, q, qd, qdd)
        friction = self.friction_torque(qd)
        effort = (rnea(m, q, qd, qdd, f_ext=wrenches) if wrenches else tau_free) + friction
        return effort[idx], g[idx], (b - g)[idx], (tau_free - b)[idx], friction[idx]
