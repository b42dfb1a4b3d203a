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
``~/estimate_payload`` over DDS.

The simulator runs the arm with a payload its controller's URDF lacks (an extra fixed link); the
controller holds it by computed torque and is asked.

On ur5 (started near wrist_2's limit) and panda, in lockstep (what the service finds, not
the loop's timing; ur5 in 2 ms steps, its driver's period, as in real time): a 1.5 kg payload
3-8 cm off the flange found within 3 % in mass and 5 mm in position, the whole call under 60 s
of the arm's time, and after ``apply`` the hold error at least 5x smaller. xarm7 with its
URDF's friction and the node's default gains in real time. The refusals and
corrections that run a whole sequence run in lockstep too; stale joint_states and a collision
reaction in real time.
Refusals: an unknown link, a link no commanded joint moves, a trajectory running, a second call
while one runs, the arm pushed during the sequence, the observer disabled, computed torque off,
stale joint_states, a collision reaction active, a payload that would weigh less than nothing. A
configured payload heavier than the real one is corrected (an estimate below zero on top).
"""
import os
import re
import signal
import threading
import time
from types import SimpleNamespace
import xml.etree.ElementTree as ET

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')
from geometry_msgs.msg import Wrench  # noqa: E402
from robot_dynamics_msgs.srv import ApplyWrench, EstimatePayload  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from robot_dynamics_ros.dynamics import RobotModel  # noqa: E402
from robot_dynamics_ros.control.payload_estimation import AT_REST  # noqa: E402
from robot_dynamics_ros.tools.identify import with_payload_link  # noqa: E402

from conftest import ROBOTS, driver_rate, erd_root  # noqa: E402
from ros_harness import (DrainingExecutor, NodeProcess, answered, record, Recorded,  # noqa: E402
                         ros_list, latest_stamp, spin_lean, wait_in_arm_time)

PAYLOAD = SimpleNamespace(mass=1.5, com=np.array([0.03, -0.02, 0.06]),
                          inertia=np.array([0.004, 0.0, 0.0, 0.005, 0.0, 0.003]))
ARMS = {'ur5': ('tool0', [0.0, -1.2, 1.0, -1.4, -1.57, 0.0]),
        'panda': ('panda_hand', [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02])}
FRICTION_ARM = ('link7', [0.0, -0.3, 0.0, 0.6, 0.0, 0.9, 0.0])         # xarm7
# panda's joints' torque per reported effort unit (the fingers' too), and the identified ones'
# share of them
CURRENT_GAINS = np.array([10.0, 40.0, 20.0, 12.0, 25.0, 8.0, 15.0, 30.0, 30.0])
IDENTIFIED = 1.0 + 0.005 * np.array([1, -1, 1, -1, 1, -1, 1, 0, 0])
# state_timeout of the controller and command_timeout of the simulator: a loaded machine stalls a
# process for 0.1-0.15 s now and then (seen beside a busy core: the estimate refused as stale, as
# it should be at 0.1 s); these tests are of the estimate, the stale-state reactions have theirs
# (test_feedforward_node, test_real_stacks; the refusal below with the simulator frozen for 1 s)
TIMEOUT = 0.5


pytestmark = pytest.mark.usefixtures('ros')      # conftest.ros: rclpy for the module


class Rig:
    """The arm with its payload simulated, a controller without it, the test's node."""

    def __init__(self, tmp_path, arm, tag, *controller_args, q0=None, kp='[400.0]',
                 kd='[40.0]', sim_args=(), lockstep=False, read_torques=False):
        link, ready = ARMS[arm] if arm in ARMS else FRICTION_ARM
        if lockstep:        # simulated time: one step per answer of the controller, each
            # of the driver's period (ur5: 2 ms, as UR's at 500 Hz; issue 50: half the steps)
            sim_args = ('-p', 'lockstep:=true',
                        '-p', f'timestep:={1.0 / driver_rate(arm)}', *sim_args)
            controller_args = ('-p', 'use_sim_time:=true', *controller_args)
        self.nominal_urdf = os.path.join(erd_root(), ROBOTS[arm])
        self.model = RobotModel.from_urdf_file(self.nominal_urdf)
        self.link = link
        self.q0 = np.array(ready if q0 is None else q0)
        true = tmp_path / f'{tag}_true.urdf'
        true.write_text(with_payload_link(open(self.nominal_urdf).read(),
                                          SimpleNamespace(link=link, **vars(PAYLOAD))))
        ns = f'payload_{tag}'
        self.sim = NodeProcess('simulator_node', [
            '-r', f'__ns:=/{ns}', '-p', f'urdf_file:={true}',
            '-p', f'publish_rate:={driver_rate(arm)}',
            '-p', f'initial_positions:={ros_list(self.q0)}', '-p', f'command_timeout:={TIMEOUT}',
            *sim_args],
            tmp_path / f'{tag}_sim.log')
        self.ctrl = NodeProcess('feedforward_node', [
            '-r', f'__ns:=/{ns}', '-p', f'urdf_file:={self.nominal_urdf}',
            '-p', 'mode:=computed_torque', '-p', f'kp:={kp}', '-p', f'kd:={kd}',
            '-p', f'state_timeout:={TIMEOUT}',
            *controller_args], tmp_path / f'{tag}_ctrl.log')
        self.node = rclpy.create_node(f'payload_peer_{tag}', namespace=f'/{ns}')
        self.executor = DrainingExecutor()
        self.executor.add_node(self.node)
        # 1 kHz streams, kept serialized (ros_harness.record)
        self.states = record(self.node, JointState, 'joint_states')
        # (hold_error's desired pose: a 1 kHz stream read only for it)
        self.torques = record(self.node, JointState, 'inverse_dynamics_controller/torques') \
            if read_torques else Recorded(JointState)       # (none: not subscribed)
        self.estimate = self.node.create_client(
            EstimatePayload, 'inverse_dynamics_controller/estimate_payload')
        self.push = self.node.create_client(ApplyWrench, 'dynamics_simulator/apply_wrench')
        self.traj = self.node.create_publisher(
            JointTrajectory, 'inverse_dynamics_controller/joint_trajectory', 10)
        self.spinning = True
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self):
        spin_lean(self.executor, lambda: self.spinning)

    def wait(self, predicate, timeout):
        """Wait for ``predicate``: ``timeout`` s, of the arm's time too (a slow lockstep)."""
        return wait_in_arm_time(predicate, timeout, self.stamp)

    def ready(self):
        assert self.ctrl.wait_log('ready in', 60), self.ctrl.log()[-2000:]
        assert self.sim.wait_log('releasing the brakes', 60), self.sim.log()[-2000:]
        assert self.estimate.wait_for_service(timeout_sec=20)
        # one answer first, to a request refused at once and sent again until answered: a
        # response sent before the server has matched this client's response reader is dropped
        # (rmw_fastrtps, ros_harness.answered), and the test's own requests are not repeatable
        # (a second one while the first runs is refused). Seen once, fresh-clone CI of 2b66727
        # beside a busy core: test_refusals' first request, no answer in 300 s
        answered(lambda: self.estimate.call_async(EstimatePayload.Request(amplitude=-1.0)),
                 self.wait, 60, what='estimate_payload (a request it refuses)')
        assert self.wait(lambda: self.states, 20), 'no joint_states'
        self.settle(1.5)        # the arm sags onto the controller and the observer settles
        # and at rest, which the service requires: after the brakes let go a loop that a busy
        # core stalls takes longer (seen: ur5 still at 11 rad/s 3 s after, beside two loads)
        assert self.wait(self.at_rest, 20), \
            f'not at rest: |qd| up to {self.speed():.3f} rad/s' + self.ctrl.log()[-2000:]

    def stamp(self):
        """Return the time (s) the latest joint state received is stamped with, or -inf."""
        return latest_stamp(self.states)

    def settle(self, duration):
        """Wait ``duration`` s of the arm's time (joint states' stamps: simulated in lockstep)."""
        end = self.stamp() + duration
        assert self.wait(lambda: self.stamp() >= end, 30 + 10 * duration), \
            f'joint_states did not reach {end:.2f} s (at {self.stamp():.2f} s)'

    def speed(self, states=200):
        """Return the fastest joint's speed, in rad/s, over the latest ``states`` joint states."""
        recent = self.states[-states:]
        return max((float(np.abs(s.velocity).max()) for s in recent), default=np.inf)

    def at_rest(self, states=200):
        """Whether the latest ``states`` (0.2 s) joint states are under half of AT_REST."""
        return len(self.states) >= states and self.speed(states) < AT_REST / 2

    def call(self, link='', amplitude=0.0, apply=False, timeout=300.0, watch=False):
        """
        Call ``~/estimate_payload``; return its answer.

        ``timeout`` (s) catches a hung call, not a slow one: a whole sequence in lockstep took
        over 120 s beside a busy core on a machine about 2.5 times slower than CI's (the arm's
        time is what ``test_the_payload_is_found_and_applied`` bounds).

        Unless ``watch``, this node takes no joint states while the sequence runs (up to 30 s of
        the arm's 0.5-1 kHz streams, which it would not read): the recording resumes once the
        answer came, and a state stamped after it has been received when this returns.
        """
        streams = () if watch else (self.states, self.torques)
        for s in streams:
            s.pause()
        try:
            future = self.estimate.call_async(EstimatePayload.Request(
                link=link, amplitude=amplitude, apply=apply))
            assert self.wait(future.done, timeout), \
                'estimate_payload did not answer\n' + self.ctrl.log()[-3000:]
        finally:
            for s in streams:
                s.resume()
        if streams:
            mark = len(self.states)
            assert self.wait(lambda: len(self.states) > mark, 20), 'no joint_states after the call'
        return future.result()

    def hold_error(self, reference=None, seconds=1.0, count=200, timeout=15.0):
        """
        RMS of actual - desired position over ``seconds`` and at least ``count`` states.

        Desired: ``reference``, else the pose the controller holds (the desired position on
        ~/torques, which must not change meanwhile). Counted in states received, not in time: a
        loaded machine delays the test's executor, it must not shorten the sample.
        """
        mark, tmark = len(self.states), len(self.torques)
        time.sleep(seconds)
        assert self.wait(lambda: (len(self.states) - mark >= count
                                  and len(self.torques) - tmark >= 1), timeout), \
            (len(self.states) - mark, len(self.torques) - tmark)
        if reference is None:
            desired = np.array([m.position for m in self.torques[tmark:] if len(m.position)])
            assert len(desired), 'no desired position on ~/torques'
            assert np.ptp(desired, axis=0).max() < 1e-9, 'the controller is not holding a pose'
            reference = desired[0]
        err = np.array([s.position for s in self.states[mark:]]) - reference
        return float(np.sqrt(np.mean(np.square(err))))

    def close(self):
        self.spinning = False
        self.thread.join(timeout=5)
        self.node.destroy_node()
        self.ctrl.stop()
        self.sim.stop()


@pytest.mark.parametrize('arm', sorted(ARMS))
def test_the_payload_is_found_and_applied(tmp_path, arm):
    q0, hi, sim_args, ctrl_args = None, None, (), ()
    if arm == 'ur5':
        # started near a limit: wrist_2 0.3 rad from it, where +0.5 rad would cross it
        q0 = np.array(ARMS['ur5'][1])
        model = RobotModel.from_urdf_file(os.path.join(erd_root(), ROBOTS['ur5']))
        hi = model.position_limits[4, 1]
        q0[4] = hi - 0.3
    else:
        # an arm reporting motor currents, 5x apart between joints, and the controller with
        # gains as identify finds them with a known load (within 0.5 %: test_identify_cli)
        sim_args = ('-p', f'effort_gain:={ros_list(CURRENT_GAINS)}')
        ctrl_args = ('-p', f'effort_gain:={ros_list(CURRENT_GAINS * IDENTIFIED)}')
    # in lockstep, both arms: a measurement of the payload, not of the loop's timing (ur5 in
    # 2 ms steps, its driver's period). In real time beside a busy core the service's stiff
    # wrist gains (kp 2500) met the delays of a starved controller, whose last command the
    # simulator holds meanwhile: panda's joint5 overshot the sequence's speeds (2.13 rad/s,
    # refused: fresh-clone CI, Jazzy); ur5's wrist_3 ran away at 38.4 rad/s (fresh-clone CI of
    # b088060, Jazzy) and was refused 3 times in 6 beside one busy core here. ur5's states are
    # watched during the call: the sequence must keep inside wrist_2's limit
    rig = Rig(tmp_path, arm, arm, *ctrl_args, q0=q0, sim_args=sim_args, lockstep=True,
              read_torques=True)
    try:
        rig.ready()
        before = rig.hold_error(rig.q0)      # held where the simulation started
        mark = len(rig.states)
        t0 = rig.stamp()
        res = rig.call(rig.link, apply=True, watch=arm == 'ur5')
        took = rig.stamp() - t0         # the arm's time (simulated in lockstep)
        assert res.success, res.message + rig.ctrl.log()[-2000:]
        if hi is not None:              # the sequence kept inside (the margin, and a sag)
            q = np.array([s.position for s in rig.states[mark:]])
            assert q[:, 4].max() < hi - 0.05 + 0.01, q[:, 4].max()
        com = np.array([res.com.x, res.com.y, res.com.z])
        print(f'{arm}: {res.message}; hold error {before:.2e} rad before')
        assert abs(res.mass - PAYLOAD.mass) < 0.03 * PAYLOAD.mass, res.message
        assert np.abs(com - PAYLOAD.com).max() < 5e-3, res.message
        assert took < 60.0, took        # 28.6 s of moves, at rest and swept
        rig.settle(1.0)         # the fade into the new model (0.2 s) and the PD settling
        # back where it was called (the pose the model without the payload sagged to)
        assert np.abs(np.array(rig.states[-1].position) - rig.q0).max() < 0.05
        after = rig.hold_error()
        print(f'{arm}: hold error {before:.2e} -> {after:.2e} rad')
        assert after * 5 <= before, (before, after)
        log = rig.ctrl.log()
        assert 'parameters set: payload.link' in log and 'Traceback' not in log
    finally:
        rig.close()


def test_on_an_arm_with_friction_the_default_gains_do(tmp_path):
    """
    xarm7 with its URDF's friction in the simulator and in the controller's model (the issue's).

    1 N m of Coulomb friction (and stiction) and 2-10 N m s/rad on each joint, the controller
    with feedforward_node's default gains (kp 100, kd 20) and no friction compensation: the
    service moves the arm with its own gains, makes a first fit at rest and computes with it,
    sweeps each pose forwards and backwards (again with the model's friction compensated where a
    joint did not follow): within 3 % and 5 mm, the node's gains given back.

    In real time (issue 53: it ran in lockstep while real time beside a busy core was refused
    2 times in 3, joint7's windows at rest never steady: they now count as steady within a
    percent of the estimates, see payload_service.STEADY_SHARE).
    """
    rig = Rig(tmp_path, 'xarm7', 'friction', kp='[100.0]', kd='[20.0]')
    try:
        rig.ready()
        res = rig.call(rig.link, apply=True)        # 40-45 s
        assert res.success, res.message + rig.ctrl.log()[-2000:]
        print(f'xarm7: {res.message}')
        assert 'swept' in res.message, res.message
        com = np.array([res.com.x, res.com.y, res.com.z])
        assert abs(res.mass - PAYLOAD.mass) < 0.03 * PAYLOAD.mass, res.message
        assert np.abs(com - PAYLOAD.com).max() < 5e-3, res.message
        log = rig.ctrl.log()
        assert 'parameters set: payload.link' in log and 'Traceback' not in log
        # the gains for the loop's period in the states' stamps (the simulator's 1 ms steps),
        # not by receipt (bursts on a loaded machine)
        assert 'for a loop period of 1.00 ms' in log, log[-3000:]
    finally:
        rig.close()


def test_refusals(tmp_path):
    # in lockstep, as the refusals below that run a whole sequence: what they check is what the
    # service answers, not the loop's timing (in real time beside a busy core the service's stiff
    # wrist gains met a few ms of delay and the sequence was refused for that instead: wrist_3
    # at 2.05-2.31 rad/s, fresh-clone CI beside one busy core, both distributions; issue #53).
    # A stall told from unstable gains, and estimates through a loop that stalls (50-150 ms,
    # the drive holding the last command): test_payload_estimation.py, without DDS
    rig = Rig(tmp_path, 'ur5', 'refusals', lockstep=True)
    try:
        rig.ready()
        res = rig.call('no_such_link')
        assert not res.success and 'is not in' in res.message, res.message
        res = rig.call('base_link')
        assert not res.success and 'no commanded joint moves' in res.message, res.message
        # a trajectory running
        msg = JointTrajectory(joint_names=list(rig.model.joint_names))
        msg.points = [JointTrajectoryPoint(positions=(rig.q0 + 0.2).tolist(),
                                           velocities=[0.0] * 6, accelerations=[0.0] * 6)]
        msg.points[0].time_from_start.sec = 3
        rig.traj.publish(msg)
        assert rig.ctrl.wait_log('trajectory accepted', 10)
        res = rig.call(rig.link)
        assert not res.success and 'trajectory is running' in res.message, res.message
        rig.settle(3.5)         # the trajectory over (the arm's time)
        # two calls at once: the second is refused while the first runs; the first is pushed
        # off its poses (a 30 N shove on the flange throughout the sequence: one over only its
        # first poses at rest no longer spoils the estimate, which is made from the sweeps after)
        # and says so
        first = rig.estimate.call_async(EstimatePayload.Request(link=rig.link))
        time.sleep(0.3)
        second = rig.call(rig.link)
        assert not second.success and 'already running' in second.message, second.message
        wrench = Wrench()
        wrench.force.x = 30.0
        assert rig.push.wait_for_service(timeout_sec=10)
        rig.push.call_async(ApplyWrench.Request(link=rig.link, wrench=wrench, duration=60.0))
        assert rig.wait(first.done, 300)     # a hung call (Rig.call)
        res = first.result()
        assert not res.success, res.message
        assert any(w in res.message for w in ('touched', 'disturbed', 'collision', 'rest')), \
            res.message
    finally:
        rig.close()


@pytest.mark.parametrize('args, why', [(('observer.enabled:=false',), 'observer is disabled'),
                                       (('mode:=gravity',), 'mode is gravity')])
def test_no_observer_or_no_computed_torque_no_estimate(tmp_path, args, why):
    extra = [a for arg in args for a in ('-p', arg)]
    rig = Rig(tmp_path, 'ur5', 'noobs' if 'observer' in args[0] else 'gravity', *extra)
    try:
        assert rig.ctrl.wait_log('ready in', 60), rig.ctrl.log()
        assert rig.estimate.wait_for_service(timeout_sec=20)
        res = rig.call()
        assert not res.success and why in res.message, res.message
    finally:
        rig.close()


def test_stale_states_and_an_active_collision_reaction_are_refused(tmp_path):
    # thresholds above what the unmodelled payload itself shows on the observer at rest
    rig = Rig(tmp_path, 'ur5', 'stalecoll', '-p', 'collision.thresholds:=[25.0]')
    try:
        rig.ready()
        rig.sim.proc.send_signal(signal.SIGSTOP)        # the simulator frozen: no joint_states
        try:
            assert rig.ctrl.wait_log('commanding gravity torque', 10), rig.ctrl.log()[-2000:]
            # and past Fast DDS's shared-memory health check: a process stopped while it writes
            # to a peer's port blocks that port, and what was queued there arrives when the port
            # is regenerated (beside a busy core: an old joint state and this test's request came
            # 2.9 s late, together; the state made the simulator look alive, the estimate began)
            time.sleep(4.0)
            res = rig.call(rig.link, watch=True)        # (no joint_states come after it)
        finally:
            rig.sim.proc.send_signal(signal.SIGCONT)
        assert not res.success and 'stale' in res.message, res.message
        time.sleep(1.5)
        wrench = Wrench()
        wrench.force.x = 200.0          # a hard shove on the flange: a collision, the arm held
        assert rig.push.wait_for_service(timeout_sec=10)
        rig.push.call_async(ApplyWrench.Request(link=rig.link, wrench=wrench, duration=0.3))
        assert rig.ctrl.wait_log('collision: external torques', 10), rig.ctrl.log()[-2000:]
        time.sleep(0.5)
        res = rig.call(rig.link)
        assert not res.success and 'collision reaction (hold) is active' in res.message, \
            res.message
    finally:
        rig.close()


def heavier_wrist(tmp_path, kg):
    """Write the ur5 description with ``kg`` more on wrist_3_link (at its CoM); its path."""
    xml = open(os.path.join(erd_root(), ROBOTS['ur5'])).read()
    root = ET.fromstring(xml)
    mass = root.find("link[@name='wrist_3_link']/inertial/mass")
    mass.set('value', repr(float(mass.get('value')) + kg))
    path = tmp_path / 'heavier.urdf'
    path.write_text(ET.tostring(root, encoding='unicode'))
    return path


def test_a_description_heavier_than_the_arm_is_refused(tmp_path):
    # the controller's wrist 3 kg heavier than the simulated arm's, which carries 1.5 kg: the
    # payload on tool0 comes out near -1.5 kg, which no payload weighs
    rig = Rig(tmp_path, 'ur5', 'heavier', '-p', f'urdf_file:={heavier_wrist(tmp_path, 3.0)}',
              lockstep=True)        # (see test_refusals)
    try:
        rig.ready()
        res = rig.call(rig.link, apply=True)
        assert not res.success and 'heavier than the arm' in res.message, res.message
        assert 'applied' not in rig.ctrl.log()
    finally:
        rig.close()


def test_a_configured_payload_too_heavy_is_corrected(tmp_path):
    # 2.5 kg configured where the arm carries 1.5 kg: the estimate is -1 kg on top, applied
    rig = Rig(tmp_path, 'ur5', 'tooheavy', '-p', 'payload.link:=tool0', '-p',
              'payload.mass:=2.5', '-p', f'payload.com:={ros_list(PAYLOAD.com)}',
              lockstep=True)        # (see test_refusals)
    try:
        rig.ready()
        res = rig.call(rig.link, apply=True)
        assert res.success, res.message
        assert abs(res.mass - (PAYLOAD.mass - 2.5)) < 0.03 * PAYLOAD.mass, res.message
        # the corrected payload (configured plus estimate) is the one the arm carries
        h = 2.5 * PAYLOAD.com + res.mass * np.array([res.com.x, res.com.y, res.com.z])
        assert np.abs(h / (2.5 + res.mass) - PAYLOAD.com).max() < 5e-3, res.message
        print(res.message)
        applied = float(re.search(r'applied: payload.mass (\S+) kg', res.message).group(1))
        assert abs(applied - PAYLOAD.mass) < 0.03 * PAYLOAD.mass, res.message
    finally:
        rig.close()


def test_an_estimate_still_converging_is_not_steady():
    from robot_dynamics_ros.nodes.payload_service import _drift
    rng = np.random.default_rng(0)
    t = np.linspace(0.0, 0.25, 250)[:, None]
    noise = rng.normal(scale=0.05, size=(250, 3))
    # converged: noise alone (drift within three standard errors), or held constant
    drift, allowed, _, _ = _drift(np.array([9.7, 7.4, 1.7]) + noise)
    assert drift <= allowed, (drift, allowed)
    drift, allowed, _, _ = _drift(np.tile([9.7, 7.4, 1.7], (250, 1)))
    assert drift == 0.0 and allowed > 0.0
    # drifting by a percent of the estimates' RMS (the preliminary fit's), beyond the noise:
    # steady; by two: not, on any joint (a joint that carries little drifting as much as one
    # that carries much)
    rms = np.sqrt(np.mean(np.array([9.7, 7.4, 1.7]) ** 2))
    for j in range(3):
        for share, steady in ((0.009, True), (0.02, False)):
            ramp = np.tile([9.7, 7.4, 1.7], (250, 1))
            ramp[:, j] += share * rms * (t[:, 0] / 0.125 - 1.0)
            drift, allowed, k, mean = _drift(ramp)
            assert (drift <= allowed) == steady, (j, share, drift, allowed, k)
        assert k == j and mean == pytest.approx([9.7, 7.4, 1.7][j])   # the joint it names
    # still converging: a step of 6 N m decaying with 80 ms, slower than 1/K_O (5 ms), as over
    # DDS on a starved machine where the observer holds over late joint_states
    drift, allowed, k, _ = _drift(np.array([9.7, 7.4, 1.7]) - 6.0 * np.exp(-(t + 0.05) / 0.08))
    assert drift > allowed, (drift, allowed)
