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
The limits layer against an adversarial set: what a user may tell the controller, and pushes.

    bash scripts/dev.sh run python bench/bench_limits.py [--arms ur5 panda so101] [--only S]

Each scenario runs feedforward_node's loop (``ControlLoop``, the parameters at their defaults
but for the scenario's) with the simulator at 1 kHz, the command of each state applied one step
later (the driver's delay), the momentum observer on, the simulator's joint stops removed (so a
crossing shows as a position past the hard limit, not as a stop's impact). Talos' left arm is
one no controller test uses; the simulator and the controller have the rotor inertia 0.1 kg m^2
where the URDFs lack it (panda, talos, kinova: their bare wrists oscillate in the task modes at 1
kHz, the bandwidth warning). Pushes are 30 N or a third of what the arm holds at its start. Per
scenario and arm it prints the worst figures over the run:

- ``margin``: the least distance of a joint to its hard limit (rad or m; < 0: crossed);
- ``speed``: the largest |qd| / (velocity_scale x URDF velocity limit) (<= 1.02 asked);
- ``wall``: how far the frame went beyond a workspace wall (mm; <= 5 asked);
- ``tool``: its largest speed over limits.tool_speed (<= 1.05 asked);
- ``rate``: the largest effort change per second over limits.max_torque_rate (<= 1).

Then free motion well inside the limits (``--free``; the closed-loop demo's default motion,
25 % -> 75 % of each range as a quintic, computed_torque at the default gains and the demo's
friction compensation, the simulator applying the URDF's friction): the RMS tracking error
with the limits at their defaults against the same run with the layer out of the way (a torque
rate of 1e12 N m/s, a response time of 1e-9 s), and their ratio (1 %: 0.99-1.01 asked).

With ``--bare-arm`` the simulated arm has none of the friction and damping its URDF gives (the
controller's model keeps them): a description that overstates the arm's friction, where a
bound that counts the modelled friction predicts braking that does not come. A change to how
the bounds take friction is to be measured both ways (issue #52: counting the modelled friction
where it tightens a frame bound held xarm7's task rows with the URDF's friction simulated,
0.94-0.98 of the tool speed, and took xarm7's tool 392-824 mm through the floor with none).

With ``--stalls`` every scenario runs under the stall pattern of the payload tests
(``test/payload_rig.py``; issue #52): the loop stalls now and then, as a process on a loaded
machine does (on average every 0.5 s, for 50-150 ms; meanwhile the arm acts on the last command
that reached it, as a ForwardCommandController keeps it), and each command reaches the arm 3
steps (ms) late instead of 1. The figures are of the arm throughout, the stalls included; the
rate, of the commands the loop sent, over the time between them. The column ``back`` is the
larger of the joint speed and the tool speed (as ``speed`` and ``tool``) from RECOVERY (50 ms)
after each stall on: what the layer holds once the loop is back (not counted); ``regain`` the
longest it took, over the stalls, from the loop's return until no joint was over 1.02 of its
velocity bound and the tool within 1.05 of its speed (ms; ">N": not yet when the next stall
came N ms later; not counted).

With ``--driver-limits`` the commands reach the arm through what ros2_control_node does with
``enforce_command_limits`` (``simulation.CommandLimiter``, every step, at that step's state):
what a real-time limiter in the driver adds where the loop cannot act, as in a stall.
``--set NAME=VALUE`` (repeatable) starts every scenario from that parameter (for instance
``--set limits.response_time=0.15``).

Exits 1 when a figure is outside what issue #41 asks, else 0, but for those ``NOT_HELD`` names
(marked ``known``). The simulator applies each URDF's friction; the bounds count none of it beyond
the command's own compensation and the observer's estimate. Not held: feedforward moving one joint
1.6 rad in 0.3 s runs ur5's and panda's shoulder 11 % and 33 % over v_max (the elbow's reaction
asks the shoulder's torque to turn faster than the torque rate limit lets it, and the bounds, a
millisecond ahead, cannot slow the elbow early enough). Outside the default arms (``--arms xarm7 z1
so101``), not listed: so101 (0.5 kg, 5e-5 kg m^2 at its wrist_roll, 5 joints to its hand) reaches
v_max within ms of an 11-13 N push, before the observer's estimate of it (5 ms at the default
gain) lets the bounds count it (the node says so at start-up from 3.1 N: printed beside the row),
runs 2-2.5 v_max and a joint 0.07 rad past a hard limit, and its tool 2-4 times the tool
speed in the task modes (its task-space law above the loop's bandwidth, and 5 joints for 6
axes: both said at start-up). xarm7 holds every row since the observer's default gain went from
50 to 200 1/s (it ran a joint 3 % over v_max and its tool 4-18 % over; kinova's hand guiding, 8 %
and 13 %, too); z1 since its default frame is its wrist's (``control.default_task_frame``): on its
jaw, which its revolute jointGripper moves, the tool ran 16 % over under a 50 N target wrench and
10 % by hand towards a wall.
"""
import argparse
import os
import sys
import time

import numpy as np

from robot_dynamics_ros.control import configuration
from robot_dynamics_ros.control.loop import (BANDWIDTH_LIMIT, DAMPING_LIMIT, ControlLoop,
                                             over_bandwidth)
from robot_dynamics_ros.control.task_space import TASK_MODES
from robot_dynamics_ros.dynamics import (RobotModel, frame_jacobian, frame_placement,
                                         gravity_torques)
from robot_dynamics_ros.nodes.feedforward_declarations import PARAMETERS
from robot_dynamics_ros.simulation import CommandLimiter, Simulator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Delivery, Log, read_urdf  # noqa: E402

# arm: (URDF under example-robot-data's robots/, start pose, the joint pushed towards its stop)
ARMS = {
    'ur5': ('ur_description/urdf/ur5_robot.urdf', [0.0, -1.2, 1.5, -1.9, -1.57, 0.0], 2),
    'panda': ('panda_description/urdf/panda.urdf',
              [0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8, 0.02, 0.02], 3),
    'so101': ('so_arm_description/urdf/so101.urdf', [0.0, -0.6, 0.8, 0.6, 0.0, 0.5], 2),
    'talos_arm': ('talos_data/robots/talos_left_arm.urdf', [0.6, 0.3, -1.2, 0.0, 0.0, 0.0, -0.5],
                  2),
    'kinova': ('kinova_description/robots/kinova.urdf', [0.0, 2.9, 1.3, -2.07, 1.4, 0.0], 1),
    'xarm7': ('xarm_description/urdf/xarm7.urdf', [0.0, -0.3, 0.0, 0.8, 0.0, 1.1, 0.0], 3),
    'z1': ('z1_description/urdf/z1.urdf', [0.0, 1.0, -1.0, 0.0, 0.0, 0.0, -0.5], 2),
}
# the arms the bench runs by default (xarm7 and z1 hold too, so101 misses the rows it says: see
# the module doc)
DEFAULT_ARMS = ['ur5', 'panda', 'talos_arm', 'kinova']
# (scenario, arm) -> what is not held there (issue #52; the module doc)
NOT_HELD = {
    ('feedforward, one joint 1.6 rad in 0.3 s', 'ur5'): 'the shoulder 11 % over v_max',
    ('feedforward, one joint 1.6 rad in 0.3 s', 'panda'): 'the shoulder 33 % over v_max',
}
# the rotor inertia where the URDF lacks it, as in the task-space tests (panda's bare wrist, no
# rotor, oscillates in the task modes at 1 kHz: the bandwidth warning of feedforward_node)
ARMATURE = {'panda': [0.1], 'talos_arm': [0.1], 'kinova': [0.1]}
PUSH = 30.0             # N, hand guiding
TOOL_SPEED = 0.25       # m/s, in the workspace scenarios
ASKED = dict(margin=0.0, speed=1.02, wall=5.0, tool=1.05, rate=1.0 + 1e-9)
STALLED = {'on': False}     # --stalls (benchlib.Delivery)
RECOVERY = 0.05             # s after a stall from which --stalls' ``back`` column counts
BARE = {'on': False}        # --bare-arm: the simulated arm without its URDF's friction
DRIVER = {'on': False}      # --driver-limits: ros2_control's enforce_command_limits at the arm
SETTINGS = {}               # --set NAME=VALUE: parameters every scenario starts from


class Rig:
    """ControlLoop + simulator, one step of delay (or stalls); records what the figures need."""

    @staticmethod
    def load(rel):
        """Return the model of ``rel``: a path, or one under example-robot-data's robots/."""
        return RobotModel.from_urdf(open(rel, encoding='utf-8').read() if os.path.isabs(rel)
                                    else read_urdf(rel))

    def __init__(self, arm, mode, **values):
        rel, q0, self.pushed = ARMS[arm]
        self.model = self.load(rel)
        self.v = {name: d[1] for name, d in PARAMETERS.items()}
        self.v.update(mode=mode, trajectory_scaling='off', armature=list(ARMATURE.get(arm, [])))
        if os.environ.get('RATE'):
            self.v['limits.max_torque_rate'] = [float(os.environ['RATE'])]
        self.v.update(SETTINGS)
        self.v.update({k.replace('__', '.'): x for k, x in values.items()})
        self.loop = ControlLoop(Log())
        self.loop.set_observer_ready(True)
        self.t, self.force = 0.0, None     # a push at the frame (N, root axes; None: none)
        self._pushed = False                # whether the simulator has one on (to end it)
        self.said = None    # what the node says it cannot hold here (``sudden``, bandwidth)
        self.delivery = Delivery.of(STALLED['on'])     # the commands on their way to the arm
        self._use_values(self.v, first=True)
        plant = self.model.with_armature(ARMATURE[arm]) if arm in ARMATURE else self.model
        bare = dict(friction=[0.0], damping=[0.0]) if BARE['on'] else {}
        self.sim = Simulator(plant, q0=q0, position_limits=False, **bare)
        self.limiter = CommandLimiter(plant, self.ctrl.cmd) if DRIVER['on'] else None
        self.frame = self.ctrl.limit_layer.frame
        self.rec = []
        for _ in range(300):                 # 0.3 s to settle: the arm holds itself up
            self.step(record=False)
        over = over_bandwidth(self.ctrl.law, self.sim.dt) if mode in TASK_MODES else None
        if over is not None:                # what the node says of the law (its bandwidth)
            w, d, _ = over
            T = self.sim.dt
            self.said = (f'the task law at {w * T:.2f} rad and its damping at {d * T:.2g} '
                         f'per period, over {BANDWIDTH_LIMIT} and {DAMPING_LIMIT}')

    def _use_values(self, v, first=False):
        ctrl = configuration.controller(self.model, v)
        obs, observing = configuration.observer(ctrl, v)
        if first:
            self.loop.use_model(ctrl, obs, observing, v, self.t)
        else:
            self.loop.use_parameters(ctrl, obs, observing, v, '~/target_pose')
        self.ctrl = ctrl

    def set(self, **values):
        """Change parameters at runtime, as `ros2 param set` does."""
        v = dict(self.v, **{k.replace('__', '.'): x for k, x in values.items()})
        self._use_values(v)
        self.v = v

    def step(self, record=True):
        sim, loop = self.sim, self.loop
        if self.force is not None:
            R = frame_placement(self.model, sim.q, self.frame)[:3, :3]
            sim.set_wrench(self.frame, np.concatenate([R.T @ self.force, np.zeros(3)]))
            self._pushed = True
        elif self._pushed:                  # a push ended (the simulator keeps a wrench)
            sim.set_wrench(self.frame, np.zeros(6))
            self._pushed = False
        tau = np.zeros(self.model.n)
        applied = self.delivery.applied()
        if applied is not None:
            cmd = self.ctrl.cmd
            tau[cmd] = (applied if self.limiter is None else
                        self.limiter(sim.q[cmd], sim.qd[cmd], applied))
        q, qd = sim.step(tau)
        self.t += sim.dt
        t = self.t
        if self.delivery.stalls_now(sim.dt, applied):     # the last command stays
            if record and applied is not None:
                self._record(t, q, qd, None)
            return
        reply = loop.joint_states(self.model.joint_names, q.tolist(), qd.tolist(), [], t, t,
                                  lambda: t)
        sent = None if reply is None or reply.command is None else reply.command.copy()
        self.delivery.send(sent)
        if record and sent is not None:
            self._record(t, q, qd, sent)

    def _record(self, t, q, qd, sent):
        """Note the arm's state at ``t`` and the command sent then (None: the loop stalled)."""
        p = frame_placement(self.model, q, self.frame)[:3, 3].copy()
        v = frame_jacobian(self.model, q, self.frame)[:3] @ qd
        self.rec.append((t, q.copy(), qd.copy(), sent, p, v))

    def run(self, seconds, each=None):
        for _ in range(int(round(seconds / self.sim.dt))):
            if each is not None and not self.delivery.stalled:     # (a stalled loop: nothing)
                each(self)
            self.step()

    def figures(self):
        """Return the worst figures of the recorded run (see the module doc)."""
        ctrl, layer = self.ctrl, self.ctrl.limit_layer
        c = ctrl.cmd
        q = np.array([r[1] for r in self.rec])[:, c]
        qd = np.array([r[2] for r in self.rec])[:, c]
        sent = [r for r in self.rec if r[3] is not None]        # (stalls: the loop's only)
        t = np.array([r[0] for r in sent])
        tau = np.array([r[3] for r in sent])
        p = np.array([r[4] for r in self.rec])
        v = np.array([r[5] for r in self.rec])
        lo, hi = self.model.position_limits[c].T
        with np.errstate(invalid='ignore'):
            margin = np.nanmin(np.where(np.isfinite(lo), q - lo, np.inf).min(),
                               initial=np.inf)
            margin = min(margin, np.where(np.isfinite(hi), hi - q, np.inf).min())
        speed = float(np.max(np.abs(qd) / layer.vmax))
        wall = 0.0
        if layer.box is not None:
            wall = 1e3 * max(0.0, float(np.max(layer.box[:3] - p)),
                             float(np.max(p - layer.box[3:])))
        tool = float(np.max(np.linalg.norm(v, axis=1)) / layer.tool_speed) \
            if np.isfinite(layer.tool_speed) else 0.0
        rate = float(np.max(np.abs(np.diff(tau, axis=0)) / np.diff(t)[:, None] / layer.rate))
        # under stalls: the joint speed and tool speed once the loop has been back RECOVERY s
        times = np.array([r[0] for r in self.rec])
        stalled = np.array([r[3] is None for r in self.rec])
        last = np.maximum.accumulate(np.where(stalled, times, -np.inf))
        back = times - last >= RECOVERY
        speed_back = float(np.max(np.abs(qd[back]) / layer.vmax, initial=0.0))
        tool_back = float(np.max(np.linalg.norm(v[back], axis=1) / layer.tool_speed,
                                 initial=0.0)) if np.isfinite(layer.tool_speed) else 0.0
        # and how long after each stall the loop took to bring them within what is asked
        over = (np.abs(qd) / layer.vmax).max(axis=1) > ASKED['speed']
        if np.isfinite(layer.tool_speed):
            over |= np.linalg.norm(v, axis=1) / layer.tool_speed > ASKED['tool']
        # (a stall that came first, the time to it, marked '>')
        regain = (0.0, '')
        for k in np.flatnonzero(stalled[:-1] & ~stalled[1:]) + 1:   # the loop back at k
            end = k + int(np.argmax(stalled[k:])) if stalled[k:].any() else len(stalled)
            within = np.flatnonzero(~over[k:end])
            took = ((times[k + within[0]] - times[k], '') if len(within) else
                    (times[end - 1] - times[k], '>'))
            regain = max(regain, took)
        return dict(margin=float(margin), speed=speed, wall=wall, tool=tool, rate=rate,
                    back=max(speed_back, tool_back), regain=f'{regain[1]}{1e3 * regain[0]:.0f}')


def _box(rig, below=0.1, around=0.3):
    """Return a workspace box around the frame's start: a floor ``below``, walls ``around``."""
    p = frame_placement(rig.model, rig.sim.q, rig.frame)[:3, 3]
    return dict(limits__workspace=[p[0] - around, p[1] - around, p[2] - below,
                                   p[0] + around, p[1] + around, p[2] + around],
                limits__tool_speed=TOOL_SPEED)


def boxed(arm, mode, below=0.1, **values):
    """Return a rig whose frame starts in a workspace box with a floor ``below`` it."""
    probe = Rig(arm, mode)
    return Rig(arm, mode, **_box(probe, below), **values)


def past_the_limits(rig, speed):
    """Send a trajectory taking every joint 0.3 past a hard limit, asking ``speed`` x v_max."""
    ctrl = rig.ctrl
    c, m = ctrl.cmd, rig.model
    q0 = rig.sim.q[c]
    lo, hi = m.position_limits[c].T
    goal = np.where(np.isfinite(hi), np.where(hi - q0 < q0 - lo, hi + 0.3, lo - 0.3), q0 + 1.0)
    vmax = np.where(np.isfinite(m.velocity_limits[c]), m.velocity_limits[c], 1.0)
    T = float(np.max(1.875 * np.abs(goal - q0) / (speed * vmax)))      # a quintic's peak speed
    names = list(ctrl.joints)
    rig.loop.trajectory(lambda: (names, [T], [goal.tolist()], [[0.0] * len(c)],
                                 [[0.0] * len(c)], None), 1, 0.0, lambda: rig.t, '~/target_pose')
    return T


def one_joint_fast(rig, distance=1.6, duration=0.3):
    """
    Send a quintic moving the pushed joint ``distance`` rad in ``duration`` s (#52's case).

    Towards the side with more room; the other joints stay. Its peak speed, 1.875 x 1.6 / 0.3 =
    10 rad/s, is past every arm's velocity limit: the limits must hold it.
    """
    ctrl = rig.ctrl
    c, m = ctrl.cmd, rig.model
    goal = rig.sim.q[c].copy()
    j = rig.pushed
    lo, hi = m.position_limits[c[j]]
    goal[j] += distance if hi - goal[j] >= goal[j] - lo else -distance
    names = list(ctrl.joints)
    rig.loop.trajectory(lambda: (names, [duration], [goal.tolist()], [[0.0] * len(c)],
                                 [[0.0] * len(c)], None), 1, 0.0, lambda: rig.t, '~/target_pose')


def push(rig, direction):
    """
    Push the frame along ``direction``: 30 N, or a third of what the arm can hold there if less.

    What it can hold: the force whose torques, beside gravity's, reach the first effort limit
    (talos' arm holds 21 N downwards at its start: no controller keeps 30 N off it; pushed, it
    moves where it holds less: with half of it, 10 N, its shoulder held 22.3 of its 22.32 N m
    and the arm sank through the floor as its torque ran out).
    """
    m, q, c = rig.model, rig.sim.q, rig.ctrl.cmd
    n = direction / np.linalg.norm(direction)
    Jn = np.abs(frame_jacobian(m, q, rig.frame)[:3][:, c].T @ n)
    spare = rig.ctrl.limits - np.abs(gravity_torques(m, q)[c])
    with np.errstate(divide='ignore'):
        holds = float(np.min(np.where(Jn > 1e-9, spare / Jn, np.inf)))
    rig.force = min(PUSH, holds / 3.0) * n
    return float(np.linalg.norm(rig.force))


def sudden(rig):
    """
    Note whether the node says at start-up that the rig's push outruns the bounds (see main).

    A push arriving at once (as these do) above ``LimitLayer.sudden_push`` takes a joint to its
    velocity bound before the observer's estimate lets the bounds count it; the node says so at
    start-up, with that figure (issue #52).
    """
    at = rig.ctrl.limit_layer.sudden_push(rig.sim.q, rig.loop.estimate_time)
    F = float(np.linalg.norm(rig.force))
    if F > at.force:
        rig.said = (f'a {F:.3g} N push above the {at.force:.3g} N the node says takes '
                    f'{at.joint} to v_max within {at.within * 1e3:.3g} ms')


def push_towards_stop(rig):
    """Push along the direction that turns the pushed joint towards its nearer limit."""
    m, i = rig.model, rig.ctrl.cmd[rig.pushed]
    Jv = frame_jacobian(m, rig.sim.q, rig.frame)[:3, i]
    lo, hi = m.position_limits[i]
    sign = 1.0 if hi - rig.sim.q[i] < rig.sim.q[i] - lo else -1.0
    return push(rig, sign * Jv)


def target_far(rig, offset):
    p = frame_placement(rig.model, rig.sim.q, rig.frame)
    rig.loop.target_pose(p[:3, 3] + offset, _quat(p), rig.t)


def _quat(T):
    from scipy.spatial.transform import Rotation
    return Rotation.from_matrix(T[:3, :3]).as_quat().tolist()


def scenarios():
    """Return the scenarios: name -> function(arm) returning the Rig it ran."""
    def joint_far(mode, speed):
        def run(arm):
            rig = Rig(arm, mode)
            T = past_the_limits(rig, speed)
            rig.run(T + 1.0)
            return rig
        return run

    def joint_fast(mode):
        def run(arm):
            rig = Rig(arm, mode)
            one_joint_fast(rig)
            rig.run(1.3)
            return rig
        return run

    def hand_to_stop(arm):
        rig = Rig(arm, 'gravity')
        push_towards_stop(rig)
        sudden(rig)
        rig.run(3.0)
        return rig

    def hand_to_wall(arm):
        rig = boxed(arm, 'gravity')
        push(rig, np.array([0.0, 0.0, -1.0]))
        sudden(rig)
        rig.run(3.0)
        return rig

    def task_far(mode):
        def run(arm):
            rig = boxed(arm, mode)
            target_far(rig, np.array([0.0, 0.0, -1.0]))
            rig.run(3.0)
            return rig
        return run

    def wrench_to_wall(arm):
        rig = boxed(arm, 'cartesian_impedance', below=0.02)
        rig.loop.target_wrench([0.0, 0.0, -min(50.0, 2 * push(rig, np.array([0.0, 0.0, -1.0]))),
                                0.0, 0.0, 0.0])
        rig.force = None
        rig.run(3.0)
        return rig

    def twist_to_wall(arm):
        rig = boxed(arm, 'cartesian_impedance')
        T0 = frame_placement(rig.model, rig.sim.q, rig.frame)
        v = np.array([0.0, 0.0, -5 * TOOL_SPEED])
        q = _quat(T0)
        start = rig.t

        def stream(r):
            r.loop.target_pose(T0[:3, 3] + v * (r.t - start), q, r.t)
            r.loop.target_twist(np.concatenate([v, np.zeros(3)]), r.t)
        rig.run(2.0, stream)
        return rig

    def gains_tenfold_joint(arm):
        rig = Rig(arm, 'computed_torque')
        T = past_the_limits(rig, 0.8)
        rig.run(0.3 * T)
        rig.set(kp=[1000.0], kd=[200.0])
        rig.run(0.7 * T + 1.0)
        return rig

    def gains_tenfold_task(mode):
        def run(arm):
            rig = boxed(arm, mode)
            target_far(rig, np.array([0.15, 0.1, -0.05]))
            rig.run(0.2)
            rig.set(task__stiffness=[10000.0, 10000.0, 10000.0, 500.0, 500.0, 500.0])
            rig.run(2.0)
            return rig
        return run

    return {
        'computed_torque past the limits': joint_far('computed_torque', 0.8),
        'computed_torque past the limits at 1.6x v_max': joint_far('computed_torque', 1.6),
        'feedforward past the limits at 1.6x v_max': joint_far('feedforward', 1.6),
        'computed_torque, one joint 1.6 rad in 0.3 s': joint_fast('computed_torque'),
        'feedforward, one joint 1.6 rad in 0.3 s': joint_fast('feedforward'),
        'hand guiding, 30 N towards a joint stop': hand_to_stop,
        'hand guiding, 30 N towards a wall': hand_to_wall,
        'cartesian_impedance, a target 1 m through the floor': task_far('cartesian_impedance'),
        'operational_space, a target 1 m through the floor': task_far('operational_space'),
        'cartesian_impedance, a 50 N target wrench into the floor': wrench_to_wall,
        'twist stream at 5x the tool speed into the floor': twist_to_wall,
        'computed_torque gains x10 mid-motion': gains_tenfold_joint,
        'cartesian_impedance stiffness x10 mid-motion': gains_tenfold_task('cartesian_impedance'),
        'operational_space stiffness x10 mid-motion': gains_tenfold_task('operational_space'),
    }


FREE_ARMS = {'planar_2r': None, 'ur5': 'ur_description/urdf/ur5_robot.urdf',
             'panda': 'panda_description/urdf/panda.urdf', 'z1': 'z1_description/urdf/z1.urdf',
             'xarm7': 'xarm_description/urdf/xarm7.urdf'}
OUT_OF_THE_WAY = dict(limits__max_torque_rate=[1e12], limits__response_time=1e-9)


def free_motion(arm, **values):
    """
    Return the RMS tracking error (rad) of the demo's default motion on ``arm``.

    Over the joints whose motion stays inside their soft limits; and the others' names.
    """
    from robot_dynamics_ros.control.trajectory import quintic
    from robot_dynamics_ros.dynamics import example_urdf
    from robot_dynamics_ros.tools.demo import default_motion
    rel = FREE_ARMS[arm] or example_urdf()
    model = Rig.load(rel)
    start, goal, duration = default_motion(model)
    ARMS[arm] = (rel, list(start), 0)
    rig = Rig(arm, 'computed_torque', friction_compensation=1.0, **values)
    names = list(rig.ctrl.joints)
    t0 = rig.t
    rig.loop.trajectory(lambda: (names, [duration], [list(goal)], [[0.0] * len(goal)],
                                 [[0.0] * len(goal)], None), 1, 0.0, lambda: rig.t, '')
    rig.rec.clear()
    rig.run(duration + 0.5)
    t = np.array([r[0] for r in rig.rec]) - t0
    q = np.array([r[1] for r in rig.rec])
    q_d = quintic(start, goal, duration, t)[0]
    # the joints whose motion stays inside the soft limits (panda's fingers go from one to the
    # other: 25 % and 75 % of 4 cm, the soft limits a quarter of the range in)
    layer = rig.ctrl.limit_layer
    lo, hi = np.full(model.n, -np.inf), np.full(model.n, np.inf)
    lo[rig.ctrl.cmd], hi[rig.ctrl.cmd] = layer.lower, layer.upper
    inside = (np.minimum(start, goal) > lo + 1e-6) & (np.maximum(start, goal) < hi - 1e-6)
    return float(np.sqrt(np.mean((q_d - q)[:, inside] ** 2))), \
        [j for j, ok in zip(model.joint_names, inside) if not ok]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--arms', nargs='+', default=DEFAULT_ARMS, choices=list(ARMS))
    parser.add_argument('--only', help='run the scenarios whose name contains this')
    parser.add_argument('--free', action='store_true', help='free motion only')
    parser.add_argument('--stalls', action='store_true',
                        help='the loop stalls now and then, its commands late (module doc)')
    parser.add_argument('--bare-arm', action='store_true',
                        help="the simulated arm has none of its URDF's friction and damping "
                             '(the model keeps them; module doc)')
    parser.add_argument('--driver-limits', action='store_true',
                        help="ros2_control's enforce_command_limits between the loop and the arm, "
                             'clamping the command at every step (module doc)')
    parser.add_argument('--set', action='append', default=[], metavar='NAME=VALUE',
                        help='a feedforward_node parameter every scenario starts from (a float, '
                             'or a list of floats in [])')
    args = parser.parse_args(argv)
    BARE['on'], DRIVER['on'] = args.bare_arm, args.driver_limits
    for item in args.set:
        name, _, value = item.partition('=')
        if name not in PARAMETERS:
            parser.error(f'--set: no parameter {name!r}')
        SETTINGS[name] = ([float(x) for x in value.strip('[]').split(',') if x.strip()]
                          if value.startswith('[') else float(value))
        print(f'{name} := {SETTINGS[name]}')
    if args.stalls:
        STALLED['on'] = True
        print(Delivery.describe())
    failed = 0
    if args.free:
        print(f'{"free motion (demo default)":28s} {"RMS, defaults":>14s} {"layer out":>12s} '
              f'{"ratio":>7s}')
        for arm in FREE_ARMS:
            (with_layer, out), (without, _) = free_motion(arm), free_motion(arm, **OUT_OF_THE_WAY)
            ratio = with_layer / without
            failed += not 0.99 <= ratio <= 1.01
            print(f'{arm:28s} {with_layer:14.3e} {without:12.3e} {ratio:7.4f}'
                  + (f'  (not counted: {out}, moved onto their soft limits)' if out else ''),
                  flush=True)
        return 1 if failed else 0
    print(f'{"scenario":52s} {"arm":6s} {"margin":>8s} {"speed":>6s} {"wall mm":>8s} '
          f'{"tool":>6s} {"rate":>6s}' + (f' {"back":>6s} {"regain":>6s}' if args.stalls else '')
          + '  s')
    for name, run in scenarios().items():
        if args.only and args.only not in name:
            continue
        for arm in args.arms:
            t0 = time.perf_counter()
            rig = run(arm)
            f = rig.figures()
            bad = [k for k in ASKED if (f[k] < ASKED[k] if k == 'margin' else f[k] > ASKED[k])]
            known = bool(bad) and (name, arm) in NOT_HELD
            # what the node says as it happens (LimitLayer.crossed: 'limit crossed: ...')
            crossed = sorted({line.split(';')[0][len('limit crossed: '):]
                              for line in rig.loop.log.lines if line.startswith('limit crossed')})
            failed += bool(bad) and not known
            print(f'{name:52s} {arm:6s} {f["margin"]:8.4f} {f["speed"]:6.3f} {f["wall"]:8.2f} '
                  f'{f["tool"]:6.3f} {f["rate"]:6.3f}'
                  + (f' {f["back"]:6.3f} {f["regain"]:>6s}' if args.stalls else '')
                  + f'  {time.perf_counter() - t0:.1f}'
                  + (f'  known {bad}' if known else f'  FAIL {bad}' if bad else '')
                  + (f' (said at start-up: {rig.said})' if bad and rig.said else '')
                  + (f' (said as it crossed: {crossed[0]}{" …" if len(crossed) > 1 else ""})'
                     if bad and not rig.said and crossed else ''),
                  flush=True)
    print(f'{failed} failed' if failed else
          'every figure within what #41 asks, but those marked known (NOT_HELD)')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
