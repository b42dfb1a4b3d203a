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
Identification end to end over DDS, as a user runs it on a real arm.

simulator_node runs a "true" arm (identification_data.true_arm: inertias, friction, armature and
a payload that the URDF does not have) in lockstep; feedforward_node runs the nominal URDF by
computed torque and follows the trajectory of ``robot-dynamics excite``; a recorder node of this
test writes what it receives on joint_states and the controller's ~/torques into a ROS 2 bag (the
serialized messages as received, as ``ros2 bag record`` does); ``robot-dynamics identify`` reads
it and writes the corrected description and params file; the controller restarted with them must
follow a quintic motion with an RMS error at least 2x smaller than with the URDF.

And ``identify --payload`` agrees with the controller's ``~/estimate_payload`` on the same arm
(within 3 % in mass and 5 mm in position, each within that of the truth).
"""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from robot_dynamics_ros.control.identification import base_parameters  # noqa: E402
from robot_dynamics_ros.control.trajectory import quintic  # noqa: E402
from robot_dynamics_ros.dynamics import RobotModel  # noqa: E402
from robot_dynamics_ros.tools.identify import WAYPOINT_RATE, corrected_description  # noqa: E402

from conftest import ROBOTS, driver_rate, erd_root  # noqa: E402
from identification_data import excitation, true_arm  # noqa: E402
from ros_harness import (DrainingExecutor, LEAN_PAUSE, NodeProcess, answered,  # noqa: E402
                         ros_list, seconds)

DURATION = 10.0         # s: one period of the excitation at 0.1 Hz
# s (simulated): the simulator starts paused (paused:=true) and each rig's first motion is
# stamped to start then: in lockstep the loop is then the same run from t = 0 whatever the load.
# Stamped instead to start a second after the newest state this node had seen, a motion started
# wherever a busy core had left this node behind the loop (the arm still settling into the
# controller's hold; seen 4.9 s in): beside one, the recording changed run to run (the identified
# model's condition number 3.5e4 to 1.2e5) and so did the nominal demo (a joint's RMS error 0.22
# or 0.31 rad); the ratio below came out 1.69 once (fresh-clone CI beside a busy core)
START = 1.0
RECORD_LEAD = 1.0       # s (simulated): a recording made again starts this long after that state
CONTROLLER = 'inverse_dynamics_controller'


pytestmark = pytest.mark.usefixtures('ros')      # conftest.ros: rclpy for the module


def trajectory_msg(names, t, q, qd=None, qdd=None):
    msg = JointTrajectory(joint_names=list(names))
    for k, s in enumerate(t):
        p = JointTrajectoryPoint(positions=q[k].tolist())
        if qd is not None:
            p.velocities, p.accelerations = qd[k].tolist(), qdd[k].tolist()
        p.time_from_start.sec = int(s)
        p.time_from_start.nanosec = int(round((s - int(s)) * 1e9))
        msg.points.append(p)
    return msg


class Rig:
    """The true arm in simulation, a controller on a description, and the test's recorder."""

    def __init__(self, tmp_path, tag, ns, true_urdf, armature, q0, controller_urdf,
                 params_file=None, step=0.001):
        self.ns = ns
        self.step = step        # s: the loop's period, one lockstep step per answer
        self.sim = NodeProcess('simulator_node', [
            '-r', f'__ns:=/{ns}', '-p', f'urdf_file:={true_urdf}', '-p', 'lockstep:=true',
            '-p', f'timestep:={step}',
            '-p', f'armature:={ros_list(armature)}', '-p', f'initial_positions:={ros_list(q0)}',
            '-p', 'paused:=true'], tmp_path / f'{tag}_sim.log')
        self.paused = True
        extra = ['--params-file', str(params_file)] if params_file else []
        self.ctrl = NodeProcess('feedforward_node', [
            '-r', f'__ns:=/{ns}', '-p', f'urdf_file:={controller_urdf}',
            '-p', 'mode:=computed_torque', '-p', 'use_sim_time:=true', *extra],
            tmp_path / f'{tag}_ctrl.log')
        self.node = rclpy.create_node(f'recorder_{tag}', namespace=f'/{ns}')
        self.executor = DrainingExecutor()
        self.executor.add_node(self.node)
        # serialized, as ros2 bag record takes them: one callback per message and no
        # deserialization while the loop runs, so that this node keeps up on a loaded machine
        self.raw = []           # (topic, receive ns, serialized message)
        self.count = {}         # topic -> messages received
        self.topics = {name: f'/{ns}/{name}' for name in ('joint_states', f'{CONTROLLER}/torques')}
        qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        for topic, full in self.topics.items():
            self.count[full] = 0
            self.node.create_subscription(
                JointState, topic, lambda m, full=full: self._keep(full, m), qos, raw=True)
        self.traj_pub = self.node.create_publisher(JointTrajectory,
                                                   f'{CONTROLLER}/joint_trajectory', 10)
        self.pause = self.node.create_client(SetBool, 'dynamics_simulator/pause')

    def _keep(self, topic, data):
        self.raw.append((topic, time.time_ns(), data))
        self.count[topic] += 1

    def messages(self, name):
        """Every message of topic ``name`` (joint_states or ~/torques) received so far."""
        from rclpy.serialization import deserialize_message
        full = self.topics[name]
        return [deserialize_message(data, JointState) for topic, _, data in list(self.raw)
                if topic == full]

    def last_stamp(self):
        """Return the stamp (s) of the newest joint state received, or -inf."""
        from rclpy.serialization import deserialize_message
        full = self.topics['joint_states']
        for topic, _, data in reversed(self.raw):
            if topic == full:
                return seconds(deserialize_message(data, JointState).header.stamp)
        return -np.inf

    def spin_until(self, predicate, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end and not predicate():
            self.executor.spin_once(timeout_sec=0.01)
            time.sleep(LEAN_PAUSE)
        return predicate()

    def run(self, msg, after=0.5, timeout=240.0):
        """
        Send a trajectory once the loop runs; return its start time (simulated).

        The first: stamped to start at START, the simulation resumed once the controller took
        it. Another: stamped to start RECORD_LEAD after the newest state this node has seen.
        """
        # both streams reach this node (DDS may match one of its subscriptions before the other;
        # paused in lockstep, the state goes out every 0.1 s and the controller answers it)
        assert self.spin_until(lambda: min(self.count.values()) > 2, 60), \
            self.sim.log()[-2000:] + self.ctrl.log()[-2000:]
        assert self.spin_until(lambda: self.traj_pub.get_subscription_count() > 0, 10)
        start = START if self.paused else self.last_stamp() + RECORD_LEAD
        msg.header.stamp.sec = int(start)
        msg.header.stamp.nanosec = int(round((start - int(start)) * 1e9))
        self.traj_pub.publish(msg)
        if self.paused:                 # (the rig's first motion: its controller's first)
            assert self.spin_until(lambda: 'trajectory accepted' in self.ctrl.log(), 20), \
                self.ctrl.log()[-2000:]
            assert self.spin_until(self.pause.service_is_ready, 20)
            future = self.pause.call_async(SetBool.Request(data=False))
            assert self.spin_until(future.done, 20) and future.result().success
            self.paused = False
        end = start + seconds(msg.points[-1].time_from_start) + after
        assert self.spin_until(lambda: self.last_stamp() > end, timeout), \
            f'the loop did not reach {end:.1f} s: ' + self.ctrl.log()[-2000:]
        return start

    def record(self, msg, after=0.5):
        """
        Run ``msg`` as ``run`` does, until the recording has every state and command of it.

        The publishers keep a second of messages (nodes.executors.STREAM_DEPTH): a recorder that
        stalls longer under load loses some even with a reliable subscription (with 10: gaps of
        0.06-1.35 s beside a busy core; identify rightly refuses such a bag), as ``ros2 bag
        record`` would.
        Such a recording is made again (said in the output), at most twice; the excitation
        ends where it starts, at rest.
        """
        for attempt in (1, 2, 3):
            # stamped: the recorded window is the excitation's, however late the controller
            # takes it (unstamped, it started when taken: in lockstep up to tenths of a
            # simulated second after the state this node had seen, which the window then missed
            # at its end and held still at its start)
            start = self.run(msg, after=after)
            end = start + seconds(msg.points[-1].time_from_start) + after
            gaps = {}
            for name in self.topics:
                stamps = np.array([seconds(m.header.stamp) for m in self.messages(name)])
                stamps = np.sort(stamps[(stamps >= start) & (stamps <= end)])
                gaps[name] = float(np.diff(stamps).max()) if len(stamps) > 1 else np.inf
            gap = max(gaps.values())
            if gap < 0.01:                      # 1 or 2 ms steps in lockstep
                return start
            print(f'recording {attempt}: this node missed '
                  + ', '.join(f'{g:.3f} s of {name}' for name, g in gaps.items()) + '; again')
        raise AssertionError(f'three recordings lost messages (last gap {gap:.3f} s)')

    def stop(self):
        """
        Stop both nodes and this one; what was received stays (``messages``, ``write_bag``).

        Before a bag is written or an error computed: in lockstep the nodes run flat out,
        two busy processes beside this one's deserializing while they live.
        """
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        self.ctrl.stop()
        self.sim.stop()

    def write_bag(self, path, start, end):
        """Write what arrived with stamps in [start, end] (simulated s) as an MCAP bag."""
        from rclpy.serialization import deserialize_message
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import Stores, get_typestore
        ts = get_typestore(Stores.ROS2_JAZZY)
        with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
            conns = {}
            for topic, received, data in self.raw:
                t = seconds(deserialize_message(data, JointState).header.stamp)
                if not start <= t <= end:
                    continue
                if topic not in conns:
                    conns[topic] = writer.add_connection(topic, 'sensor_msgs/msg/JointState',
                                                         typestore=ts)
                writer.write(conns[topic], received, data)

    def tracking_error(self, start, duration):
        """RMS from ``start`` over ``duration`` of actual - desired position per joint."""
        desired = {seconds(m.header.stamp): np.array(m.position) for m in self.messages(
            f'{CONTROLLER}/torques') if len(m.position)}    # (empty: no desired state, holding)
        assert desired, 'no desired state on ~/torques'
        end = start + duration
        err = [np.array(s.position) - desired[seconds(s.header.stamp)]
               for s in self.messages('joint_states')
               if start <= seconds(s.header.stamp) <= end and
               seconds(s.header.stamp) in desired]
        assert len(err) > 0.5 * duration / self.step, (
            f'{len(err)} joint states in [{start}, {end}] with a desired state; '
            f'{len(desired)} desired states')
        return np.sqrt(np.mean(np.square(err), axis=0))


@pytest.mark.parametrize('arm', ['ur5', 'kinova'])
def test_identify_from_a_recorded_bag_then_track_better(tmp_path, arm):
    nominal_urdf = os.path.join(erd_root(), ROBOTS[arm])
    nominal = RobotModel.from_urdf_file(nominal_urdf)
    true = true_arm(nominal)
    true_urdf = tmp_path / 'true.urdf'
    true_urdf.write_text(corrected_description(open(nominal_urdf).read(), nominal, true))
    trajectory = excitation(nominal, base_parameters(nominal), base_frequency=1 / DURATION)
    t, q, qd, qdd = trajectory.waypoints(DURATION, WAYPOINT_RATE)
    ns = f'ident_{arm}'

    step = 1.0 / driver_rate(arm)       # the loop's period as the arm's driver runs it
    rig = Rig(tmp_path, 'record', ns, true_urdf, true.armature, q[0], nominal_urdf, step=step)
    try:
        start = rig.record(trajectory_msg(nominal.joint_names, t, q, qd, qdd))
    finally:
        rig.stop()
    bag = str(tmp_path / 'excite_bag')
    rig.write_bag(bag, start, start + DURATION)
    corrected, params = tmp_path / 'corrected.urdf', tmp_path / 'params.yaml'
    r = subprocess.run([sys.executable, '-m', 'robot_dynamics_ros.tools.cli', 'identify',
                        '--urdf', nominal_urdf, bag, '--topic', f'/{ns}/joint_states',
                        '--effort-topic', f'/{ns}/{CONTROLLER}/torques', '-o', str(corrected),
                        '--params-out', str(params), '--report', str(tmp_path / 'r.yaml')],
                       capture_output=True, text=True, timeout=300)
    print(r.stdout)
    assert r.returncode == 0, r.stderr

    # the demo motion: a quintic away from the start and back, with each controller
    goal = q[0] + np.where(np.arange(nominal.n) % 2, -0.5, 0.5)
    lo, hi = nominal.position_limits.T
    goal = np.clip(goal, lo + 0.1, hi - 0.1)
    tt = np.linspace(0, 2.0, 21)
    qm, qdm, qddm = quintic(q[0], goal, 2.0, tt)
    errors = {}
    for tag, urdf, pfile in (('nominal', nominal_urdf, None), ('corrected', corrected, params)):
        rig = Rig(tmp_path, tag, f'{ns}_{tag}', true_urdf, true.armature, q[0], urdf, pfile,
                  step=step)
        try:
            start = rig.run(trajectory_msg(nominal.joint_names, tt, qm, qdm, qddm))
        finally:
            rig.stop()
        errors[tag] = rig.tracking_error(start, 2.0)
    print(arm, 'tracking RMS (rad):', errors)
    # 2x better at least: kinova's nominal run is far off its trajectory, clamped at times (RMS
    # 0.24 rad, a joint 0.31 rad). Every run from t = 0 (START): 2.19 each time, idle or beside
    # a busy core, the errors the same to 1e-8 (ur5's ratio is far larger)
    assert np.sqrt(np.mean(errors['corrected'] ** 2)) * 2 <= \
        np.sqrt(np.mean(errors['nominal'] ** 2)), errors


def test_the_offline_payload_agrees_with_the_service(tmp_path):
    """
    ``identify --payload`` on a recorded excitation and ``~/estimate_payload``, on one arm.

    The simulator carries 1.5 kg at (3, -2, 6) cm on tool0 that the controller's ur5 lacks; the
    bag's efforts are the simulator's own (joint_states effort: what it applied, as a real arm
    reports its measured efforts).
    """
    import yaml
    from types import SimpleNamespace
    from robot_dynamics_msgs.srv import EstimatePayload
    from robot_dynamics_ros.tools.identify import with_payload_link
    nominal_urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    nominal = RobotModel.from_urdf_file(nominal_urdf)
    payload = SimpleNamespace(link='tool0', mass=1.5, com=np.array([0.03, -0.02, 0.06]),
                              inertia=np.array([0.004, 0.0, 0.0, 0.005, 0.0, 0.003]))
    true_urdf = tmp_path / 'true.urdf'
    true_urdf.write_text(with_payload_link(open(nominal_urdf).read(), payload))
    trajectory = excitation(nominal, base_parameters(nominal), base_frequency=1 / DURATION)
    t, q, qd, qdd = trajectory.waypoints(DURATION, WAYPOINT_RATE)
    ns = 'payload_agree'
    rig = Rig(tmp_path, 'agree', ns, true_urdf, np.zeros(nominal.n), q[0], nominal_urdf,
              step=1.0 / driver_rate('ur5'))
    estimate = rig.node.create_client(EstimatePayload, f'{CONTROLLER}/estimate_payload')
    try:
        start = rig.record(trajectory_msg(nominal.joint_names, t, q, qd, qdd), after=1.0)
        bag = str(tmp_path / 'bag')
        assert estimate.wait_for_service(timeout_sec=10)
        # an answer first to a request refused at once, sent again until answered: the estimate
        # itself is not repeatable (test_payload_service.Rig.ready says why)
        answered(lambda: estimate.call_async(EstimatePayload.Request(amplitude=-1.0)),
                 rig.spin_until, 60, what='estimate_payload (a request it refuses)')
        future = estimate.call_async(EstimatePayload.Request(link='tool0'))
        # 15.5 s idle; in lockstep the loop runs as fast as the machine lets it, over 60 s
        # in a fresh-clone CI beside a busy core (four test sessions on two cores): a hang guard
        assert rig.spin_until(future.done, 240), rig.ctrl.log()[-2000:]
        online = future.result()
        assert online.success, online.message
    finally:
        rig.stop()
    rig.write_bag(bag, start, start + DURATION)
    r = subprocess.run([sys.executable, '-m', 'robot_dynamics_ros.tools.cli', 'identify',
                        '--urdf', nominal_urdf, bag, '--topic', f'/{ns}/joint_states',
                        '--payload', 'tool0', '--report', str(tmp_path / 'r.yaml')],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    offline = yaml.safe_load((tmp_path / 'r.yaml').read_text())['payload']
    on_com, off_com = np.array([online.com.x, online.com.y, online.com.z]), offline['com']
    print(f'service {online.mass:.4f} kg at {np.round(100 * on_com, 2)} cm, identify '
          f'{offline["mass"]:.4f} kg at {np.round(100 * np.array(off_com), 2)} cm')
    assert abs(online.mass - offline['mass']) < 0.03 * payload.mass
    assert np.abs(on_com - off_com).max() < 5e-3
    for mass, com in ((online.mass, on_com), (offline['mass'], off_com)):
        assert abs(mass - payload.mass) < 0.03 * payload.mass
        assert np.abs(com - payload.com).max() < 5e-3
