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
simulator_node as a test bench: pause and step, lockstep, and what it says when it halts.

Each node in its own process over real rclpy: ~/pause and ~/step advance a paused simulation by
exactly N steps; in lockstep mode one effort command advances one step (so a closed loop is the
same run after run, whatever the CPU load), and with feedforward_node the answer to the latest
state does, so that each command acts from the state it was computed from; a halt is reported
on /diagnostics (ERROR, with the joint and value) while the held state keeps coming on
joint_states, and ~/reset clears it.
"""
import re
import time

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from robot_dynamics_msgs.srv import Step  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402

from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from robot_dynamics_ros.dynamics import RobotModel, example_urdf, gravity_torques  # noqa: E402

from conftest import ROBOTS, erd_root  # noqa: E402
from ros_harness import NodeProcess, ros_list, seconds, spin_once  # noqa: E402


pytestmark = pytest.mark.usefixtures('ros')      # conftest.ros: rclpy for the module


def spin_until(node, predicate, timeout=10.0):
    """Spin ``node`` until ``predicate()`` or ``timeout`` s; return ``predicate()``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and not predicate():
        spin_once(node, timeout_sec=0.01)
    return predicate()


class Bench:
    """A simulator_node in namespace ns and the test's node beside it."""

    def __init__(self, tmp_path, ns, *args, urdf=None):
        self.proc = NodeProcess('simulator_node', ['-r', f'__ns:=/{ns}', '-p',
                                                   f'urdf_file:={urdf or example_urdf()}', *args],
                                tmp_path / f'{ns}.log')
        self.node = rclpy.create_node(f'{ns}_bench', namespace=f'/{ns}')
        self.states, self.diagnostics, self.clock = [], [], []
        self.node.create_subscription(JointState, 'joint_states', self.states.append, 100)
        self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics, 10)
        self.node.create_subscription(Clock, '/clock', self.clock.append, 100)
        self.pub = self.node.create_publisher(Float64MultiArray, 'effort_controller/commands',
                                              10)
        self.ns = ns

    def _on_diagnostics(self, msg):
        self.diagnostics += [s for s in msg.status if s.name.startswith(f'/{self.ns}/') or
                             s.name.startswith('dynamics_simulator')]

    def spin_until(self, predicate, timeout=10.0):
        return spin_until(self.node, predicate, timeout)

    def call(self, kind, name, request, timeout=20.0):
        client = self.node.create_client(kind, f'dynamics_simulator/{name}')
        try:
            assert client.wait_for_service(timeout_sec=timeout), f'no ~/{name}'
            future = client.call_async(request)
            assert self.spin_until(future.done, timeout), f'~/{name} did not answer'
            return future.result()
        finally:
            self.node.destroy_client(client)

    def stop(self):
        self.node.destroy_node()
        self.proc.stop()


def test_pause_and_step_advance_exactly_n_steps(tmp_path):
    b = Bench(tmp_path, 'stepper', '-p', 'hold_until_command:=false',
              '-p', 'initial_positions:=[0.5, -0.3]')      # not an equilibrium: it falls
    try:
        assert b.spin_until(lambda: len(b.states) > 50, 20), b.proc.log()
        assert b.call(SetBool, 'pause', SetBool.Request(data=True)).success
        answer = b.call(Step, 'step', Step.Request(steps=0))
        t0 = answer.time
        n = len(b.states)
        b.spin_until(lambda: False, 0.3)
        held = [np.array(m.position) for m in b.states[n:]]
        assert len(held) > 10 and all(np.array_equal(q, held[0]) for q in held), \
            'paused, yet it moved'
        answer = b.call(Step, 'step', Step.Request(steps=250))
        assert answer.success and answer.time == pytest.approx(t0 + 0.25, abs=1e-9), answer
        assert b.spin_until(lambda: not np.array_equal(b.states[-1].position, held[0]), 5)
        assert b.call(SetBool, 'pause', SetBool.Request(data=False)).success
        answer = b.call(Step, 'step', Step.Request(steps=1))
        assert not answer.success and 'not paused' in answer.message
    finally:
        b.stop()


@pytest.mark.parametrize('lockstep', [False, True])
def test_started_paused_it_stands_until_resumed(tmp_path, lockstep):
    """
    paused:=true: the state goes out, the arm and the simulated time stand until ~/pause false.

    (In real time the states are stamped with the ROS time they go out at; in lockstep with the
    simulated time, 0.)
    """
    b = Bench(tmp_path, f'born_paused_{lockstep}', '-p', 'paused:=true',
              '-p', 'hold_until_command:=false', '-p', f'lockstep:={str(lockstep).lower()}',
              '-p', 'initial_positions:=[0.5, -0.3]')      # not an equilibrium: it falls
    try:
        assert b.spin_until(lambda: len(b.states) > 5, 20), b.proc.log()
        assert 'paused until ~/pause false' in b.proc.log()
        if lockstep:
            b.pub.publish(Float64MultiArray(data=[0.0, 0.0]))   # a command steps nothing
        b.spin_until(lambda: False, 0.3)
        assert all((seconds(m.header.stamp) == 0.0 or not lockstep) and
                   np.array_equal(m.position, [0.5, -0.3]) for m in b.states), \
            [(seconds(m.header.stamp), list(m.position)) for m in b.states]
        answer = b.call(SetBool, 'pause', SetBool.Request(data=False))
        assert answer.success and answer.message.startswith('running at t = 0.0000'), answer
        if lockstep:
            b.pub.publish(Float64MultiArray(data=[0.0, 0.0]))
        assert b.spin_until(lambda: not np.array_equal(b.states[-1].position, [0.5, -0.3]), 10)
    finally:
        b.stop()


def test_lockstep_advances_one_step_per_command_the_same_way_every_run(tmp_path):
    model = RobotModel.from_urdf_file(example_urdf())
    runs = []
    for run in range(2):
        b = Bench(tmp_path, f'lockstep{run}', '-p', 'lockstep:=true')
        try:
            answered = []

            def on_state(m):            # the controller: a PD law on the state it is given
                t = seconds(m.header.stamp)
                # once per state: a state sent again (nothing stepped for 0.1 s: this process
                # stalled beside a busy core) answered again would step twice (1 run in 5)
                if len(answered) < 300 and not (answered and answered[-1][0] == t):
                    q, qd = np.array(m.position), np.array(m.velocity)
                    tau = gravity_torques(model, q) + 50 * (np.array([0.5, -1.0]) - q) - 5 * qd
                    answered.append((t, q))
                    b.pub.publish(Float64MultiArray(data=tau.tolist()))
            b.node.create_subscription(JointState, 'joint_states', on_state, 100)
            assert b.spin_until(lambda: len(answered) >= 300, 60), (len(answered), b.proc.log())
            b.spin_until(lambda: False, 0.3)    # nothing more: no command, no step
            stamps = np.array([t for t, _ in answered])
            # one step (1 ms) per command, whatever the wall-clock pace
            np.testing.assert_allclose(np.diff(stamps), 1e-3, atol=1e-9)
            assert b.clock and b.clock[-1].clock.sec + 1e-9 * b.clock[-1].clock.nanosec == \
                pytest.approx(stamps[-1] + 1e-3, abs=1e-9)
            runs.append(np.array([q for _, q in answered]))
        finally:
            b.stop()
    np.testing.assert_array_equal(runs[0], runs[1])       # the same run, bit for bit
    assert np.abs(runs[0][-1] - runs[0][0]).max() > 0.05  # and the arm did move


def test_in_lockstep_a_state_nobody_answered_is_sent_again_while_commands_flow(tmp_path):
    """
    Lockstep with stamped answers: a lost state is sent again even while commands come.

    A controller that has no joint state yet commands its on_timeout torque every 50 ms on the
    command topic. The simulator used to send its state again only when no command came for
    0.1 s: a first state lost before the controller's subscription matched left both waiting
    for good (seen in a fresh-clone CI: "no joint_states yet" for 20 s). Here the test is that
    controller: a publisher on the answers topic, zero commands every 50 ms, no answer.
    """
    b = Bench(tmp_path, 'resend', '-p', 'lockstep:=true')
    answers = b.node.create_publisher(JointState, 'inverse_dynamics_controller/torques', 10)
    try:
        assert b.spin_until(lambda: len(b.states) > 0, 20), b.proc.log()
        end = time.monotonic() + 1.5
        while time.monotonic() < end:       # 1.5 s of commands, none an answer
            b.pub.publish(Float64MultiArray(data=[0.0, 0.0]))
            b.spin_until(lambda: False, 0.05)
        assert 'first effort command' in b.proc.log(), b.proc.log()
        stamps = {(m.header.stamp.sec, m.header.stamp.nanosec) for m in b.states}
        # sent again about every 0.1 s (not every command: it did not step), never stepped
        assert len(b.states) >= 8 and len(stamps) == 1, (len(b.states), stamps)
        # the answer to it steps once: the loop goes on
        n = len(b.states)
        latest = b.states[-1]
        answer = JointState(name=list(latest.name), effort=[0.0] * len(latest.name))
        answer.header.stamp = latest.header.stamp
        answers.publish(answer)
        assert b.spin_until(lambda: any(m.header.stamp != latest.header.stamp
                                        for m in b.states[n:]), 5), b.proc.log()
        stepped = [m for m in b.states[n:] if m.header.stamp != latest.header.stamp]
        assert seconds(stepped[0].header.stamp) == pytest.approx(
            seconds(latest.header.stamp) + 1e-3, abs=1e-9)
    finally:
        b.stop()


def test_paused_in_lockstep_a_step_request_lets_the_loop_take_exactly_n_steps(tmp_path):
    """
    Lockstep, paused: ~/step N grants N steps of the closed loop, each on the answer to a state.

    How a process that streams targets on simulated time keeps pace with the simulation
    (``closed_loop.py``'s paced stream): before, it could only pause, or run free and fall
    behind when starved. Here the test is the controller, answering every state it gets
    (stamped, on the answers topic), re-sent ones too, as feedforward_node does.
    """
    b = Bench(tmp_path, 'granted', '-p', 'lockstep:=true')
    answers = b.node.create_publisher(JointState, 'inverse_dynamics_controller/torques', 100)
    model = RobotModel.from_urdf_file(example_urdf())

    def on_state(m):
        q, qd = np.array(m.position), np.array(m.velocity)
        tau = gravity_torques(model, q) + 50 * (np.array([0.5, -1.0]) - q) - 5 * qd
        answer = JointState(name=list(m.name), effort=tau.tolist())
        answer.header.stamp = m.header.stamp
        answers.publish(answer)
    b.node.create_subscription(JointState, 'joint_states', on_state, 100)

    def now():
        return seconds(b.clock[-1].clock) if b.clock else 0.0
    try:
        assert b.spin_until(lambda: now() > 0.1, 30), b.proc.log()
        assert b.call(SetBool, 'pause', SetBool.Request(data=True)).success
        t0 = b.call(Step, 'step', Step.Request(steps=0)).time
        b.spin_until(lambda: False, 0.3)    # answered, re-sent states answered: no step
        assert now() == pytest.approx(t0, abs=1e-9)
        n = len(b.states)
        for _ in range(2):                  # grants add up
            answer = b.call(Step, 'step', Step.Request(steps=20))
            assert answer.success and 'granted' in answer.message, answer
        assert b.spin_until(lambda: now() >= t0 + 0.04 - 1e-9, 10), (now(), b.proc.log())
        b.spin_until(lambda: False, 0.3)    # and no further
        assert now() == pytest.approx(t0 + 0.04, abs=1e-9)
        stamps = sorted({seconds(m.header.stamp) for m in b.states[n:]})
        np.testing.assert_allclose(stamps, t0 + 1e-3 * np.arange(41), atol=1e-9)
        assert b.call(SetBool, 'pause', SetBool.Request(data=False)).success
        assert b.spin_until(lambda: now() > t0 + 0.1, 10)     # running on again
    finally:
        b.stop()


def test_in_lockstep_each_command_acts_from_the_state_it_answers(tmp_path):
    """
    simulator_node in lockstep with feedforward_node (computed torque) along a trajectory.

    The answer stamped t (~/torques) is what the simulator applies from t to t + dt: the effort
    of the joint state stamped t + dt. Counted at lags of 0 to 6 steps: before, with one step
    per effort command, commands acted 5 steps late (the states published again while the
    controller started, each answered, stayed in flight).
    """
    import os
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    q0 = [0.0, -1.2, 1.0, -1.4, -1.57, 0.0]
    sim = NodeProcess('simulator_node', ['-r', '__ns:=/onetoone', '-p', f'urdf_file:={urdf}',
                                         '-p', 'lockstep:=true',
                                         '-p', f'initial_positions:={ros_list(q0)}'],
                      tmp_path / 'onetoone_sim.log')
    ctrl = NodeProcess('feedforward_node', ['-r', '__ns:=/onetoone', '-p', f'urdf_file:={urdf}',
                                            '-p', 'mode:=computed_torque',
                                            '-p', 'use_sim_time:=true'],
                       tmp_path / 'onetoone_ctrl.log')
    node = rclpy.create_node('onetoone_peer', namespace='/onetoone')
    states, answers = [], []
    node.create_subscription(JointState, 'joint_states', states.append, 1000)
    node.create_subscription(JointState, 'inverse_dynamics_controller/torques', answers.append,
                             1000)
    traj = node.create_publisher(JointTrajectory, 'inverse_dynamics_controller/joint_trajectory',
                                 10)

    def ns(m):
        return m.header.stamp.sec * 10**9 + m.header.stamp.nanosec
    try:
        assert spin_until(node, lambda: len(states) > 20 and len(answers) > 20, 60), \
            sim.log()[-1500:] + ctrl.log()[-1500:]
        assert 'one step per answer to the latest state' in sim.log()
        msg = JointTrajectory(joint_names=['shoulder_pan_joint', 'shoulder_lift_joint',
                                           'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
                                           'wrist_3_joint'])
        msg.points = [JointTrajectoryPoint(positions=[0.5, -1.0, 1.3, -1.2, -1.2, 0.5],
                                           velocities=[0.0] * 6, accelerations=[0.0] * 6)]
        msg.points[0].time_from_start.sec = 2
        assert spin_until(node, lambda: traj.get_subscription_count() > 0, 10)
        # the motion runs from a stamp 1 s of simulated time ahead: the window below is the
        # motion's, however fast the lockstep runs and however late the acceptance is read
        # (read from the log, the window slid past the motion's end in an idle CI: the arm
        # at rest for 28 % of it)
        start = ns(states[-1]) + 10**9
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(start, 10**9)
        traj.publish(msg)
        assert spin_until(node, lambda: 'trajectory accepted' in ctrl.log(), 10), \
            ctrl.log()[-1500:]
        ends = float(re.search(r'ends in ([0-9.]+) s', ctrl.log()).group(1))
        assert ends > 2.0, ctrl.log()[-1500:]        # accepted before its stamp
        wall = time.monotonic()
        assert spin_until(node, lambda: ns(states[-1]) > start + 2 * 10**9, 120), sim.log()[-1500:]
        print(f'to the motion\'s end: {time.monotonic() - wall:.2f} s')
        effort = {ns(m): np.array(m.effort) for m in states}
        window = [m for m in answers if start < ns(m) < start + 2 * 10**9]
        # answers equal to the one before match any lag; the motion's ends, where the arm is
        # nearly at rest, tell nothing about the lag, so those are left out
        moving = [m for prev, m in zip(window, window[1:])
                  if np.abs(np.array(m.effort) - np.array(prev.effort)).max() > 1e-6]
        print(f'{len(moving)} of {len(window)} answers in the motion changed')
        assert len(moving) > 1500, (len(moving), len(window))
        # an answer whose state at a lag this peer did not receive tells nothing at that lag:
        # its subscriber, behind on a busy machine, loses some (fresh-clone CI, Jazzy, beside
        # other ROS processes: 4 % of the answers and states, so that 1.9 % of the answers
        # matched no state at any lag), so each lag's share is of the answers it can judge
        share, judged = [], []
        for lag in range(7):
            later = [(np.array(m.effort), effort[ns(m) + (lag + 1) * 10**6]) for m in moving
                     if ns(m) + (lag + 1) * 10**6 in effort]
            judged.append(len(later))
            share.append(np.mean([np.allclose(a, e, rtol=0, atol=1e-9) for a, e in later]))
        print('share of answers applied from the state they answer, at lags 0-6 steps:',
              np.round(share, 3), 'of', judged, 'answers')
        assert min(judged) > 1500, (judged, len(moving))
        assert share[0] == 1.0 and max(share[1:]) < 0.01, share
        # and the efforts did change from step to step (else any lag would match)
        assert np.abs(np.diff([np.array(m.effort) for m in moving], axis=0)).max() > 1e-3
        assert 'no answer on' not in sim.log(), sim.log()[-2000:]   # answers were never off
    finally:
        node.destroy_node()
        ctrl.stop()
        sim.stop()


@pytest.mark.parametrize('every', [0, 3])
def test_in_lockstep_commands_without_answers_are_said(tmp_path, every):
    """
    feedforward_node with torques_every 0 (no ~/torques) or 3 (every third command answered).

    Its ~/torques publisher is there, so lockstep waits for answers: with 0 it waits for good
    (the state sent again every 0.1 s, answered by a command but never on ~/torques), with 3 it
    steps once per re-send or so. Before, silently; now the simulator says what it waits for
    and what would end it, and the arm stands still.
    """
    import os
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    q0 = [0.0, -1.2, 1.0, -1.4, -1.57, 0.0]
    tag = f'every{every}'
    sim = NodeProcess('simulator_node', ['-r', f'__ns:=/{tag}', '-p', f'urdf_file:={urdf}',
                                         '-p', 'lockstep:=true',
                                         '-p', f'initial_positions:={ros_list(q0)}'],
                      tmp_path / f'{tag}_sim.log')
    ctrl = NodeProcess('feedforward_node', ['-r', f'__ns:=/{tag}', '-p', f'urdf_file:={urdf}',
                                            '-p', 'mode:=computed_torque',
                                            '-p', f'torques_every:={every}',
                                            '-p', 'use_sim_time:=true'],
                       tmp_path / f'{tag}_ctrl.log')
    node = rclpy.create_node(f'{tag}_peer', namespace=f'/{tag}')
    states = []
    node.create_subscription(JointState, 'joint_states', states.append, 1000)
    try:
        said = 'lockstep: effort commands come but no answer on'
        assert spin_until(node, lambda: said in sim.log(), 60), \
            sim.log()[-1500:] + ctrl.log()[-1500:]
        assert 'torques_every 1' in sim.log()
        assert spin_until(node, lambda: states, 10), 'no joint_states'
        # at most a step per re-send (0.1 s of wall time): a few tens of ms of simulated time
        first = seconds(states[-1].header.stamp)
        spin_until(node, lambda: False, 1.0)
        advanced = seconds(states[-1].header.stamp) - first
        assert advanced < (0.001 if every == 0 else 0.03), advanced
        assert np.abs(np.array(states[-1].position) - q0).max() < 0.01, states[-1].position
        assert 'Traceback' not in sim.log() + ctrl.log()
    finally:
        node.destroy_node()
        ctrl.stop()
        sim.stop()


def test_a_halt_is_reported_on_diagnostics_and_the_held_state_keeps_coming(tmp_path):
    with open(example_urdf(), encoding='utf-8') as f:
        xml = f.read()
    urdf = tmp_path / 'slow.urdf'
    # velocity limits of 0.01 rad/s: the halt threshold (100x) is 1 rad/s, which the arm
    # falling from its start pose passes within a second
    urdf.write_text(xml.replace('velocity="', 'velocity="0.01" old_velocity="'))
    b = Bench(tmp_path, 'halting', '-p', 'initial_positions:=[0.5, -0.3]', urdf=str(urdf))
    try:
        # held by its brakes: OK at 1 Hz
        assert b.spin_until(lambda: any(s.level == DiagnosticStatus.OK and 'brakes' in s.message
                                        for s in b.diagnostics), 20), b.proc.log()
        # a zero command releases the brakes: the arm falls and halts
        b.pub.publish(Float64MultiArray(data=[0.0, 0.0]))
        assert b.spin_until(lambda: any(s.level == DiagnosticStatus.ERROR
                                        for s in b.diagnostics), 20), b.proc.log()
        error = [s for s in b.diagnostics if s.level == DiagnosticStatus.ERROR][0]
        assert 'halted: joint joint' in error.message and 'rad/s' in error.message, error.message
        assert 'simulation stopped' in b.proc.log()
        n = len(b.states)
        assert b.spin_until(lambda: len(b.states) > n + 20, 5), 'no joint_states after the halt'
        held = b.states[-1]
        assert all(v == 0.0 for v in held.velocity) and np.all(np.isfinite(held.position))
        n = len(b.diagnostics)
        assert b.call(Trigger, 'reset', Trigger.Request()).success      # brakes on again
        assert b.spin_until(lambda: any(s.level == DiagnosticStatus.OK
                                        for s in b.diagnostics[n:]), 5)
    finally:
        b.stop()
