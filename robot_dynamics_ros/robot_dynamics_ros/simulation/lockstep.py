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
Lockstep on answers: whether a controller's effort commands come without their answers.

In lockstep on stamped answers the simulator steps on the answer to its latest state, not on
an effort command. A controller that commands but does not answer with every command
(feedforward_node's ``torques_every`` 0 or above 1) leaves it waiting: the state goes out
again every 0.1 s and is commanded again, and nothing steps. ``LockstepAnswers`` counts those
re-sends in a row and says when to tell the user.
"""

# re-sends of the state in a row, each after an effort command without an answer, before that
# is said: 10 re-sends, 0.1 s apart, are a second of them
UNANSWERED = 10


class LockstepAnswers:
    """What lockstep on answers waits for; the node calls one method per event."""

    def __init__(self):
        self.reset()

    def reset(self):
        """Start afresh (the simulation reset): nothing waits, nothing counted."""
        self.awaiting = False       # an effort command came since the last step or re-send
        self.resent = False         # the state went out again since the last step
        self.unanswered = 0         # re-sends in a row with a command waiting

    def commanded(self):
        """Note an effort command: the answer to the latest state is what steps."""
        self.awaiting = True

    def stepped(self):
        """Note a step taken (and its state published)."""
        self.awaiting = self.resent = False

    def answered(self):
        """Note an answer to the latest state (it steps next); in time, it ends a resend run."""
        if not self.resent:
            self.unanswered = 0

    def resent_state(self):
        """
        Note the state sent again (nothing stepped for 0.1 s); return whether to say so.

        Counts only a re-send with a command waiting since the last: a controller that is
        merely late (stalled: once, then no command comes) or has no state yet is not counted.
        """
        if not self.awaiting:
            return False
        self.awaiting, self.resent = False, True
        self.unanswered += 1
        return self.unanswered >= UNANSWERED
