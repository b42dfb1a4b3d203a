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

"""The messages feedforward_node publishes: built once per controller, refilled each turn."""
from geometry_msgs.msg import PoseStamped, WrenchStamped
from robot_dynamics_msgs.msg import CollisionEvent
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..dynamics.frames import quaternion
from .messages import field_view


class Outputs:
    """One controller's output messages; each method fills one and returns it."""

    def __init__(self, ctrl):
        k, n = len(ctrl.joints), ctrl.base_model.n
        self.ctrl = ctrl
        self.command_msg = Float64MultiArray()
        self.command = field_view(self.command_msg, 'data', k)
        # ~/torques: efforts only, or with the desired state when there is a trajectory
        self.torques_msg = JointState(name=list(ctrl.joints))
        self.effort = field_view(self.torques_msg, 'effort', k)
        self.desired_msg = JointState(name=list(ctrl.joints))
        self.desired = [field_view(self.desired_msg, f, k)
                        for f in ('position', 'velocity', 'effort')]
        self.external_msg = JointState(name=list(ctrl.base_model.joint_names))
        self.external = [field_view(self.external_msg, f, n)
                         for f in ('position', 'velocity', 'effort')]
        self.pose_msg = PoseStamped()
        self.pose_msg.header.frame_id = ctrl.base_model.root_link
        self.wrench_msg = WrenchStamped()
        self.wrench_msg.header.frame_id = ctrl.base_model.root_link

    def command_of(self, tau):
        """effort_controller/commands: ``tau`` in the ``joints`` order."""
        self.command[:] = tau
        return self.command_msg

    def torques_of(self, tau, desired, stamp):
        """~/torques: the efforts, with the desired position and velocity when there are."""
        if desired is None:
            msg = self.torques_msg
            self.effort[:] = tau
        else:
            msg, cmd = self.desired_msg, self.ctrl.cmd
            self.desired[0][:] = desired[0][cmd]
            self.desired[1][:] = desired[1][cmd]
            self.desired[2][:] = tau
        msg.header.stamp = stamp
        return msg

    def external_of(self, q, qd, estimate, stamp):
        """~/external_torques: the state and the observer's estimate, every joint."""
        self.external[0][:], self.external[1][:], self.external[2][:] = q, qd, estimate
        self.external_msg.header.stamp = stamp
        return self.external_msg

    def collision_of(self, over, r, thresholds, reaction, stamp):
        """~/collision: the joints over their thresholds, all external torques, the reaction."""
        event = CollisionEvent(name=[self.ctrl.base_model.joint_names[i] for i in over],
                               external_torque=r.tolist(), threshold=thresholds.tolist(),
                               reaction=reaction)
        event.header.stamp = stamp
        return event

    def pose_of(self, T, stamp):
        """~/current_pose: the task frame's pose (4x4) at the state the command answers."""
        msg = self.pose_msg
        msg.header.stamp = stamp
        p, o = msg.pose.position, msg.pose.orientation
        p.x, p.y, p.z = float(T[0, 3]), float(T[1, 3]), float(T[2, 3])
        o.x, o.y, o.z, o.w = map(float, quaternion(T))
        return msg

    def wrench_of(self, F, stamp):
        """~/external_wrench: the wrench [f; t] at the task frame, root axes."""
        msg = self.wrench_msg
        msg.header.stamp = stamp
        w = msg.wrench
        w.force.x, w.force.y, w.force.z = float(F[0]), float(F[1]), float(F[2])
        w.torque.x, w.torque.y, w.torque.z = float(F[3]), float(F[4]), float(F[5])
        return msg
