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
The joint-space control laws and the collision reactions, as functions.

Each law is ``law(model, q, qd, des, kp, kd) -> tau``: the torque of every model joint,
gravity included, from the measured state (q, qd), the desired state ``des`` = (q_d, qd_d,
qdd_d) at this instant (None: none, the gravity law's case and feedforward's without a
trajectory) and the gains (per model joint). Nothing else is read and nothing is kept: what to
desire (a trajectory, a hold), friction compensation, the effort limits and every other shaping
are the controller's (``Controller``, ``shaping.CommandShaper``). The task-space laws are
``task_space.TaskSpaceLaw``.

A new joint mode is one function here and one entry in ``JOINT_LAWS``.
"""
from ..dynamics import gravity_torques, rnea


def gravity(model, q, qd, des, kp, kd):
    """g(q): holds the arm's weight; the arm moves freely under a push (hand guiding)."""
    return gravity_torques(model, q)


def feedforward(model, q, qd, des, kp, kd):
    """ID(q_d, qd_d, qdd_d): the torques the desired motion takes, open loop (g(q) without)."""
    return gravity_torques(model, q) if des is None else rnea(model, *des)


def computed_torque(model, q, qd, des, kp, kd):
    """
    ID(q, qd, qdd_d + kp (q_d - q) + kd (qd_d - qd)): feedback linearization.

    With an exact model the closed loop is e'' + kd e' + kp e = 0 per joint (e = q_d - q).
    ``des`` is required (the controller holds a pose when it has no trajectory).
    """
    q_d, qd_d, qdd_d = des
    return rnea(model, q, qd, qdd_d + kp * (q_d - q) + kd * (qd_d - qd))


JOINT_LAWS = {'gravity': gravity, 'feedforward': feedforward,
              'computed_torque': computed_torque}


def hold_reaction(model, q, qd, q_r, kp, kd):
    """Hold at ``q_r`` (where the collision was), reaction ``hold``: computed torque to rest."""
    return rnea(model, q, qd, kp * (q_r - q) - kd * qd)


def float_reaction(model, q, qd, q_r, kp, kd):
    """Float, the reaction ``float``: g(q) alone, so that the arm gives way to what it hit."""
    return gravity_torques(model, q)


REACTION_LAWS = {'hold': hold_reaction, 'float': float_reaction}
