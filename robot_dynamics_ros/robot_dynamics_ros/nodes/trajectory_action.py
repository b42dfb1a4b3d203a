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
``~/follow_joint_trajectory`` of feedforward_node: the control_msgs FollowJointTrajectory action.

MoveIt (and most tools that execute motion) send trajectories to a controller this way. The
rules (validation, tolerances, how goals end) are ``control.trajectory_goal`` and
``ControlLoop.follow``; this module turns the goal message into a ``Request``, runs the goal and
answers its result.

Every goal is accepted and then answered with its result: a goal that cannot run ends at once,
aborted, with the result code and the reason (joint_trajectory_controller rejects it instead,
and a rejection carries no reason in ROS 2). Each goal's execute callback waits in a thread of
a side node's executor (``<name>_actions``, THREADS threads) until the control loop ends the
goal, publishing feedback at ``action_monitor_rate``: rclpy's executors poll an awaiting
coroutine without sleeping, so a waiting coroutine would keep a core busy.
"""
import threading
import time

from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup

from ..control.trajectory_goal import CANCELED, SUCCEEDED, Refused, Request
from .executors import seconds, side_node

# the execute callback of the running goal, of a goal replacing it, and the action's services
THREADS = 4
CANCEL_WAIT = 1.0       # s: rclpy marks a goal canceling right after the cancel callback returns


def request_of(goal):
    """Return a FollowJointTrajectory goal message as a trajectory_goal.Request."""
    traj = goal.trajectory
    multi = goal.multi_dof_trajectory
    multi_dof = ', '.join(what for what, given in (
        ('multi_dof_trajectory', multi.joint_names or multi.points),
        ('component_path_tolerance', goal.component_path_tolerance),
        ('component_goal_tolerance', goal.component_goal_tolerance)) if len(given))
    return Request(
        traj.joint_names,
        [(seconds(p.time_from_start), p.positions, p.velocities, p.accelerations, p.effort)
         for p in traj.points],
        stamp=seconds(traj.header.stamp),
        path_tolerance=[(t.name, t.position, t.velocity, t.acceleration)
                        for t in goal.path_tolerance],
        goal_tolerance=[(t.name, t.position, t.velocity, t.acceleration)
                        for t in goal.goal_tolerance],
        goal_time=seconds(goal.goal_time_tolerance), multi_dof=multi_dof)


def _duration(msg, t):
    msg.sec = int(t // 1)
    msg.nanosec = int(round((t - msg.sec) * 1e9)) % 1000000000


def feedback_of(goal):
    """Return the feedback for a running Goal's latest sample (None before its first)."""
    sample = goal.sample
    if sample is None:
        return None
    t, index, (q_d, qd_d, qdd_d), (q, qd) = sample
    fb = FollowJointTrajectory.Feedback()
    _duration(fb.header.stamp, t)
    fb.joint_names = list(goal.joints)
    fb.desired.positions, fb.desired.velocities = q_d.tolist(), qd_d.tolist()
    fb.desired.accelerations = qdd_d.tolist()
    fb.actual.positions, fb.actual.velocities = q.tolist(), qd.tolist()
    fb.error.positions, fb.error.velocities = (q_d - q).tolist(), (qd_d - qd).tolist()
    for point in (fb.desired, fb.actual, fb.error):
        _duration(point.time_from_start, max(t - goal.start, 0.0))
    if hasattr(fb, 'index'):            # control_msgs 6 (Kilted): the point approached
        fb.index = index
    return fb


class TrajectoryAction:
    """The FollowJointTrajectory server of a FeedforwardNode ``node`` (its loop and lock)."""

    def __init__(self, node):
        self.node = node
        self.side = side_node(node, 'actions')
        self.name = node.resolve_topic_name('~/follow_joint_trajectory')
        self.server = ActionServer(
            self.side, FollowJointTrajectory, self.name, execute_callback=self._execute,
            goal_callback=lambda goal: GoalResponse.ACCEPT, cancel_callback=self._cancel,
            callback_group=ReentrantCallbackGroup())
        self._goals = {}                # goal id (bytes) -> Goal, while they run

    def destroy(self):
        """End a running goal (the controller stops) and the server."""
        with self.node.lock:
            self.node.loop.end_goal('the controller is shutting down')
        self.server.destroy()
        self.side.destroy_node()

    def _execute(self, handle):
        node = self.node
        ended = threading.Event()
        key = bytes(handle.goal_id.uuid)
        try:
            with node.lock:
                goal = node.loop.follow(request_of(handle.request), time.monotonic(),
                                        node.clock, ended.set)
                self._goals[key] = goal         # before a cancel can look for it
        except Refused as e:
            handle.abort()
            return FollowJointTrajectory.Result(error_code=e.code, error_string=str(e))
        try:
            while not ended.wait(1.0 / node.values['action_monitor_rate']):
                if not node.context.ok():
                    with node.lock:
                        node.loop.end_goal('the controller is shutting down')
                    break
                feedback = feedback_of(goal)
                if feedback is not None:
                    handle.publish_feedback(feedback)
        finally:
            del self._goals[key]
        status, code, message = goal.outcome
        if status == SUCCEEDED:
            handle.succeed()
        elif status == CANCELED and self._canceling(handle):
            handle.canceled()
        else:
            handle.abort()
        return FollowJointTrajectory.Result(error_code=code, error_string=message)

    @staticmethod
    def _canceling(handle):
        """Wait until rclpy has marked the goal canceling (it does once _cancel returned)."""
        deadline = time.monotonic() + CANCEL_WAIT
        while not handle.is_cancel_requested and time.monotonic() < deadline:
            time.sleep(0.001)
        return handle.is_cancel_requested

    def _cancel(self, handle):
        goal = self._goals.get(bytes(handle.goal_id.uuid))
        with self.node.lock:
            ok = goal is not None and self.node.loop.cancel(goal)
        return CancelResponse.ACCEPT if ok else CancelResponse.REJECT
