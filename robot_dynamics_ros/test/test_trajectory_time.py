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
The controller samples a trajectory at the stamp of the joint state it answers.

With simulated time the node's clock comes on /clock through another callback than joint_states
and can lag them by a varying amount (measured in lockstep: up to 80 ms, then a jump, command
steps of 150 N m on the 2R arm). Here the test is the simulator: its /clock lags its stamped
joint states by 50 ms when the trajectory arrives and by 200 ms 0.4 s later; the desired position
on ~/torques must be the trajectory's 0.4 s in (by the clock it would be 0.25 s). A stamp of
another time base (100 s off the clock) is not trusted: the clock, and a warning.
"""
import time

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

from rclpy.node import NodeNameNonExistentError  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from robot_dynamics_ros.control.trajectory import quintic  # noqa: E402
from robot_dynamics_ros.dynamics import example_urdf  # noqa: E402

from ros_harness import NodeProcess, Peer, seconds  # noqa: E402

T0 = 500.0
START, GOAL = np.array([0.3, -0.6]), np.array([0.8, -0.1])


class StampedPeer(Peer):
    """The peer's joint states carry a stamp ``state_stamp`` (s) of their own."""

    state_stamp = None

    def publish_state(self, names, q, qd=()):
        msg = JointState(name=list(names), position=[float(x) for x in q],
                         velocity=[float(x) for x in qd])
        t = self.state_stamp
        if t is not None:
            msg.header.stamp.sec = int(t)
            msg.header.stamp.nanosec = int(round((t - int(t)) * 1e9))
        self.js_pub.publish(msg)


@pytest.mark.parametrize('lags, sampled_at', [((0.05, 0.2), 'stamp'), ((100.0, 100.0), 'clock')])
def test_the_trajectory_is_sampled_at_the_states_stamp(ros, tmp_path, lags, sampled_at):
    proc = NodeProcess('feedforward_node', [
        '-p', 'use_sim_time:=true', '-p', f'urdf_file:={example_urdf("planar_2r")}',
        '-p', 'mode:=computed_torque'], tmp_path / 'ctrl.log')
    peer = StampedPeer(f'stamped_peer_{int(lags[0])}')
    try:
        clock = T0
        peer.sim_time = clock
        peer.state = (['joint1', 'joint2'], START, [0.0, 0.0])
        # unstamped states first: the node stamps its answers with its clock, so an answer at T0
        # shows it has /clock (a CI run sent the trajectory before: timed at 0, desired = START)
        assert peer.spin_until(lambda: any(abs(seconds(m.header.stamp) - clock) < 1e-6
                                           for m in peer.torques), 20), proc.log()
        peer.state_stamp = clock + lags[0]
        peer.torques.clear()
        # answers to the stamped states: the node has taken them (answers to unstamped states
        # still in flight do not show it; a CI run beside a busy core sent the trajectory while
        # the node's latest state was unstamped: timed by the clock, 0.45 s in, not 0.4)
        assert peer.spin_until(lambda: sum(abs(seconds(m.header.stamp) - peer.state_stamp) < 1e-6
                                           for m in peer.torques) > 5, 20), proc.log()
        msg = JointTrajectory(joint_names=['joint1', 'joint2'])
        msg.points = [JointTrajectoryPoint(positions=GOAL.tolist(), velocities=[0.0, 0.0],
                                           accelerations=[0.0, 0.0])]
        msg.points[0].time_from_start.sec = 2
        peer.publish_trajectory(msg)        # unstamped: starts when the node takes it
        assert peer.spin_until(lambda: 'trajectory accepted' in proc.log(), 10), proc.log()
        # 0.4 s later by the states; the clock has fallen further behind (or is 100 s off still)
        peer.state_stamp = clock + lags[0] + 0.4
        peer.sim_time = peer.state_stamp - lags[1]
        peer.torques.clear()

        into = 0.4 if sampled_at == 'stamp' else peer.sim_time - clock
        expected = quintic(START, GOAL, 2.0, np.array([into]))[0][0]

        def at_state():
            return [m for m in peer.torques
                    if abs(seconds(m.header.stamp) - peer.state_stamp) < 1e-6]
        if sampled_at == 'stamp':
            # the first answer to the new state: its stamp alone times it, whatever the clock
            assert peer.spin_until(lambda: at_state(), 10), proc.log()[-1500:]
            desired = np.array(at_state()[0].position)
        else:
            # by the clock, which comes through another callback than the states: the answers
            # follow it once it has arrived (before: the old clock, the trajectory's start)
            peer.spin_until(lambda: any(np.allclose(m.position, expected, rtol=0, atol=1e-9)
                                        for m in at_state()), 10)
            assert at_state(), proc.log()[-1500:]
            desired = np.array(at_state()[-1].position)
        np.testing.assert_allclose(desired, expected, atol=1e-9)
        warned = 'timing the trajectory by the clock' in proc.log()
        assert warned == (sampled_at == 'clock'), proc.log()[-1500:]
    finally:
        peer.destroy()
        proc.stop()


LOOP_NODE = 'inverse_dynamics_controller_loop'


def clock_subscribers(peer):
    """Return which of the controller's nodes subscribe to /clock (None: not discovered yet)."""
    found = set()
    for name in ('inverse_dynamics_controller', LOOP_NODE):
        try:
            topics = peer.node.get_subscriber_names_and_types_by_node(name, '/')
        except NodeNameNonExistentError:
            return None
        if any(topic == '/clock' for topic, _ in topics):
            found.add(name)
    return found


def test_use_sim_time_switches_the_clock_while_running(ros, tmp_path):
    """
    use_sim_time set on a running node switches its clock both ways.

    /clock is taken by the node's control-loop thread (``<node>_loop``), not rclpy's TimeSource
    on the node's executor (nodes/executors.LoopThread.take_clock); the TimeSource's parameter
    callback still switches the clocks.
    """
    proc = NodeProcess('feedforward_node', [
        '-p', f'urdf_file:={example_urdf("planar_2r")}'], tmp_path / 'ctrl.log')
    peer = Peer('sim_time_switch')
    try:
        peer.sim_time = T0
        peer.state = (['joint1', 'joint2'], START, [0.0, 0.0])

        def answered_at(when, tolerance):
            peer.torques.clear()
            return peer.spin_until(lambda: any(abs(seconds(m.header.stamp) - when()) < tolerance
                                               for m in peer.torques), 20)

        def wall():
            return answered_at(time.time, 2.0)      # the system time (far from T0)
        assert wall(), proc.log()
        assert all(r.successful for r in peer.set_params(use_sim_time=True))
        assert answered_at(lambda: T0, 1e-6), proc.log()
        assert peer.spin_until(lambda: clock_subscribers(peer) == {LOOP_NODE}, 10), \
            clock_subscribers(peer)
        assert all(r.successful for r in peer.set_params(use_sim_time=False))
        assert wall(), proc.log()
    finally:
        peer.destroy()
        proc.stop()
