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
Trajectory feasibility in feedforward_node, over DDS: ~/check_trajectory, reject and scale.

The node (its own process, panda, simulated time) answers the service with what the library
check gives for its own model and limits (effort_limits overrides, payload); trajectory_scaling
reject refuses an infeasible trajectory and scale stretches it by k*, which the desired state
on ~/torques then follows.
"""
import os
import re

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

from robot_dynamics_msgs.srv import CheckTrajectory  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from robot_dynamics_ros.control import Controller  # noqa: E402
from robot_dynamics_ros.control import JointTrajectory as Sampler  # noqa: E402
from robot_dynamics_ros.dynamics import RobotModel  # noqa: E402

from conftest import robot_urdf  # noqa: E402
from ros_harness import CONFIG, NodeProcess, Peer  # noqa: E402

NODE = 'inverse_dynamics_controller'
T0 = 500.0
ARM = [f'panda_joint{i}' for i in range(1, 8)]
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
GOAL = READY + np.array([0.6, 0.5, -0.4, 0.6, 0.5, -0.5, 0.7])


@pytest.fixture(scope='module')
def node(ros, tmp_path_factory):
    xml = robot_urdf('panda')
    proc = NodeProcess('feedforward_node', [
        '--params-file', os.path.join(CONFIG, 'feedforward.yaml'),
        '-p', 'use_sim_time:=true', '-p', f'joints:={ARM}'.replace("'", '"'),
        '-p', 'default_positions.panda_finger_joint1:=0.02',
        '-p', 'default_positions.panda_finger_joint2:=0.02'],
        tmp_path_factory.mktemp('check') / 'node.log')
    peer = Peer('check_peer', target=NODE)
    peer.sim_time = T0
    peer.publish_description(xml)
    assert proc.wait_log('model "', 30), proc.log()
    client = peer.node.create_client(CheckTrajectory, f'/{NODE}/check_trajectory')
    yield RobotModel.from_urdf(xml), proc, peer, client
    peer.destroy()
    proc.stop()


def trajectory(duration, names=ARM, goal=GOAL, stamp=0.0):
    msg = JointTrajectory(joint_names=list(names))
    msg.header.stamp.sec = int(stamp)
    p = JointTrajectoryPoint(positions=[float(x) for x in goal], velocities=[0.0] * len(names),
                             accelerations=[0.0] * len(names))
    p.time_from_start.sec = int(duration)
    p.time_from_start.nanosec = int(round(duration % 1 * 1e9))
    msg.points = [p]
    return msg


def library_check(model, duration, payload=None, limits=None, q_start=READY):
    """Return what the node should answer: the controller's check, same model and limits."""
    ctrl = Controller(model, joints=ARM, payload=payload, effort_limits=limits,
                      default_positions={'panda_finger_joint1': 0.02,
                                         'panda_finger_joint2': 0.02})
    q = ctrl.default_q.copy()
    q[:7] = q_start
    return ctrl.check_trajectory(ARM, [duration], [GOAL], [np.zeros(7)], [np.zeros(7)], q=q)


def call(peer, client, request):
    answer = peer.call(client, request)
    assert answer is not None, 'no answer'
    return answer


def start_state(q):
    return JointState(name=ARM, position=[float(x) for x in q])


def test_the_service_answers_what_the_library_computes(node):
    model, proc, peer, client = node
    for duration in (2.0, 0.4):
        answer = call(peer, client, CheckTrajectory.Request(
            trajectory=trajectory(duration), start_state=start_state(READY)))
        expected = library_check(model, duration)
        assert answer.success, answer.message
        assert list(answer.name) == ARM
        assert answer.feasible == expected.feasible == (duration == 2.0)
        assert answer.min_time_scale == pytest.approx(expected.min_time_scale, rel=1e-12)
        for field in ('peak_effort', 'peak_effort_time', 'effort_limit', 'peak_velocity',
                      'velocity_limit'):
            assert np.allclose(getattr(answer, field), getattr(expected, field), rtol=1e-12,
                               atol=1e-12), field
        assert answer.message == expected.message()
    # an effort limit overridden by parameter, and a payload, are the node's limits and model
    assert all(r.successful for r in peer.set_params(**{'effort_limits.panda_joint2': 40.0}))
    answer = call(peer, client, CheckTrajectory.Request(trajectory=trajectory(2.0),
                                                        start_state=start_state(READY)))
    expected = library_check(model, 2.0, limits={'panda_joint2': 40.0})
    assert answer.effort_limit[1] == 40.0
    assert answer.min_time_scale == pytest.approx(expected.min_time_scale, rel=1e-12)
    assert all(r.successful for r in peer.set_params(**{'effort_limits.panda_joint2': 87.0}))
    assert all(r.successful for r in peer.set_params(payload__link='panda_hand',
                                                     payload__mass=25.0))
    try:
        answer = call(peer, client, CheckTrajectory.Request(trajectory=trajectory(2.0),
                                                            start_state=start_state(READY)))
        assert answer.success and not answer.feasible
        assert answer.min_time_scale == np.inf and 'gravity alone' in answer.message
    finally:
        assert all(r.successful for r in peer.set_params(payload__mass=0.0))


def test_the_start_defaults_to_the_first_point_and_bad_requests_say_why(node):
    model, proc, peer, client = node
    # empty start_state: from the first point (the goal) it does not move, and the period is 1 ms
    answer = call(peer, client, CheckTrajectory.Request(trajectory=trajectory(1.0)))
    assert answer.success and answer.feasible and answer.min_time_scale == 0.0
    assert np.allclose(answer.peak_velocity, 0.0)
    cases = [
        (trajectory(1.0, names=ARM[:6] + ['elbow']), 'unknown joints'),
        (JointTrajectory(joint_names=ARM), 'no point'),
        (trajectory(-1.0), 'time_from_start'),
    ]
    bad = trajectory(1.0)
    bad.points.append(JointTrajectoryPoint(positions=list(GOAL)))
    bad.points[-1].time_from_start.sec = 2
    cases.append((bad, 'velocities must be given for every point or for none'))
    for traj, reason in cases:
        answer = call(peer, client, CheckTrajectory.Request(trajectory=traj))
        assert not answer.success and reason in answer.message, answer.message
    answer = call(peer, client, CheckTrajectory.Request(
        trajectory=trajectory(1.0), start_state=JointState(name=['nope'], position=[0.0])))
    assert not answer.success and 'unknown joint nope' in answer.message
    answer = call(peer, client, CheckTrajectory.Request(trajectory=trajectory(1.0),
                                                        sample_period=-1.0))
    assert not answer.success and 'sample_period' in answer.message


def test_reject_refuses_and_scale_stretches(node):
    model, proc, peer, client = node
    peer.state = (ARM, READY, np.zeros(7))
    peer.spin(0.5)
    fast = 0.4
    expected = library_check(model, fast)
    k = expected.min_time_scale
    assert k > 1
    # off (the default): taken as it is
    before = proc.log().count('trajectory accepted')
    peer.publish_trajectory(trajectory(fast, stamp=0.0))
    assert peer.spin_until(lambda: proc.log().count('trajectory accepted') > before), \
        proc.log()[-1500:]
    assert all(r.successful for r in peer.set_params(trajectory_scaling='reject'))
    before = proc.log().count('rejected trajectory')
    peer.publish_trajectory(trajectory(fast))
    assert peer.spin_until(lambda: proc.log().count('rejected trajectory') > before)
    assert 'infeasible; it needs' in proc.log().split('rejected trajectory')[-1]
    assert not peer.set_params(trajectory_scaling='stretch')[0].successful
    # scale: stretched by k*, stamped to start at T0 + 1, which stays
    peer.state = (ARM, READY, np.zeros(7))
    assert all(r.successful for r in peer.set_params(trajectory_scaling='scale'))
    before = proc.log().count('trajectory accepted')
    peer.publish_trajectory(trajectory(fast, stamp=T0 + 1.0))
    assert peer.spin_until(lambda: proc.log().count('trajectory accepted') > before), \
        proc.log()[-1500:]
    logged = re.findall(r'stretched by k\* = ([0-9.]+)', proc.log())[-1]
    assert float(logged) == pytest.approx(k, rel=1e-3)
    # the desired state on ~/torques is the stretched trajectory's, from the stamped start
    scaled = Sampler(ARM, [fast * k], [GOAL], [np.zeros(7)], [np.zeros(7)],
                     start_time=T0 + 1.0, q0=READY, qd0=np.zeros(7))
    for t in (T0 + 1.0 + 0.3 * fast * k, T0 + 1.0 + 0.7 * fast * k):
        peer.sim_time = t
        peer.torques.clear()

        def answers():
            # the answers to the state at t: an answer to an earlier state may still arrive
            # after the clear (and after them), so the last message is not necessarily one
            return [m for m in peer.torques if len(m.position) and abs(
                m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec - t) < 1e-6]
        assert peer.spin_until(lambda: answers(), 5.0)
        m = answers()[-1]
        q_d, qd_d, _ = scaled.sample(t)
        assert np.allclose(m.position, q_d, atol=1e-9), (t, m.position, q_d)
        assert np.allclose(m.velocity, qd_d, atol=1e-9)
    peer.sim_time = T0
    assert all(r.successful for r in peer.set_params(trajectory_scaling='off'))
