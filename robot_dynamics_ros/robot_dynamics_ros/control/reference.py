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
What the controller follows: a trajectory, a held position, a collision's reaction, a task target.

One ``Reference`` per running controller. A controller built for new parameters takes the
running one's reference itself, never a copy, and drops what does not carry over (``keep``);
one built for another model (a description that changed while running) takes a reference
remapped by joint name (``remapped``), as the joint state's store is, and the task target
(``take_task``). "Hold here" is written once: ``hold_at`` (a position, or None: where the arm
is at the next command, ``held``).
"""
from typing import NamedTuple

import numpy as np

from .joint_state import shared_joints


class Followed(NamedTuple):
    """A trajectory being followed."""

    path: object                # the JointTrajectory
    joints: np.ndarray          # the model indices of the joints it moves
    arrival: np.ndarray         # q (model order) when it came: where the other joints stay


class Reference:
    """
    The reference: ``trajectory`` (a Followed), ``hold``, ``reaction``; ``task_target``.

    The joint modes follow the trajectory, else hold; a reaction overrides every mode. The task
    modes' ``task_target`` (a controller.TaskTarget) and ``posture`` are None until a task mode
    first runs, which then takes the frame's pose and the joints' positions (``start_task``
    sets them so again: a task mode starts where the frame is).
    """

    def __init__(self):
        self.trajectory = None      # Followed, or None
        self.hold = None            # q_d (model order) of computed torque without a trajectory
        self.reaction = None        # after a collision: 'hold' or 'float' (Controller.react)
        self.reaction_q = None      # where the collision was detected (model order)
        self.task_target = None     # the task modes' TaskTarget (root axes)
        self.posture = None         # the nullspace posture in use (commanded joints)

    def follow(self, followed):
        """Follow ``followed`` (a Followed) from now on; no position is held."""
        self.trajectory, self.hold = followed, None

    def hold_at(self, q):
        """Drop the trajectory and hold ``q`` (model order; None: where the arm is next)."""
        self.trajectory = None
        self.hold = None if q is None else np.array(q, dtype=float)

    def held(self, q):
        """Return the position held, taking ``q`` (the arm's now) when none is held yet."""
        if self.hold is None:
            self.hold = q.copy()
        return self.hold

    def react(self, kind, q):
        """React to a collision at ``q``: the trajectory and the held position are dropped."""
        self.trajectory = self.hold = None
        self.reaction, self.reaction_q = kind, np.array(q, dtype=float)

    def clear_reaction(self):
        """
        End the reaction: hold where the arm is at the next command, a task mode where it is.

        The target before the collision is dropped, as the trajectory is: going back to it
        would mean driving into what was hit.
        """
        self.reaction = self.reaction_q = None
        self.hold = None
        self.start_task()

    def start_task(self):
        """Start the task modes afresh: the target and posture where the arm is when they run."""
        self.task_target = self.posture = None

    def keep(self, trajectory=True, hold=True, task=True, posture=True):
        """Drop the trajectory, the held position, the task target, the posture unless kept."""
        if not trajectory:
            self.trajectory = None
        if not hold:
            self.hold = None
        if not task:
            self.task_target = None
        if not (task and posture):
            self.posture = None

    def take_task(self, other, posture=True):
        """Take ``other``'s task target (and posture when ``posture``): another model's."""
        self.task_target = other.task_target
        self.posture = other.posture if posture else None

    def remapped(self, old, new, default_q, hold):
        """
        Return (this reference for model ``new``, None or why its trajectory was dropped).

        ``old``: the model it is of; joints matched by name, the others of ``new`` at
        ``default_q``. The held position is taken when ``hold`` (the mode stays), the
        trajectory when ``new`` has every joint it moves; a collision reaction is not.
        """
        ref = Reference()
        mine, theirs = shared_joints(new, old)
        if hold and self.hold is not None:
            ref.hold = default_q.copy()
            ref.hold[mine] = self.hold[theirs]
        if self.trajectory is None:
            return ref, None
        path, idx, arrival = self.trajectory
        names = [old.joint_names[i] for i in idx]
        missing = [j for j in names if j not in new.joint_names]
        if missing:
            return ref, f'it moves joints {missing}, which the new model does not have'
        q = default_q.copy()
        q[mine] = arrival[theirs]
        ref.trajectory = Followed(path, np.array([new.index(j) for j in names], dtype=np.int64),
                                  q)
        return ref, None
