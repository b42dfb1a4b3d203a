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
What the controller remembers from one command to the next, in one object owned once.

A ``Controller`` is its settings (frozen) and laws; everything that changes while it runs is
its ``ControlMemory``: the merged joint state, the reference, the last command sent (the
torque-rate limit's one memory), the task stiffness's ramp, the force axes' loop and the
force/torque sensor's input. A controller built for new parameters takes the running one's
memory itself, never a copy, and drops what its settings do not go on with
(``Controller.carry_on_from``); one built for another model (a description that changed while
running) takes one remapped by joint name (``Controller.take_over``).
"""


class Sent:
    """
    The last command sent: (efforts of the commanded joints, their state time, monotonic time).

    ``last`` is None before the first. The limits layer ramps the next command from it
    (``limits.max_torque_rate``) and notes each command it shapes; an on_timeout command is
    noted too (``shaping.CommandShaper.timeout``). ``names``: the commanded joints it is of.
    """

    __slots__ = ('last', 'names')

    def __init__(self, names=()):
        self.last, self.names = None, tuple(names)


class ControlMemory:
    """
    A controller's state between commands (see the module).

    ``state``: the merged joint state (``JointStateStore``); ``ref``: the reference
    (``Reference``: trajectory, hold, collision reaction, task target and posture); ``sent``:
    the last command (``Sent``); ``ramp``: the task stiffness ramping, [from, to, since] (None
    before a task mode runs); ``force``: the force axes' loop (``force.ForceLoop``: integral,
    contact, hold); ``sensor``: the force/torque sensor's input (``force.SensorInput``, with
    the bias ``~/zero_ft_sensor`` set) or None; ``force_event``: why the force axes began to
    hold, until the loop has logged it.
    """

    def __init__(self, state, ref, sent, force):
        self.state, self.ref, self.sent, self.force = state, ref, sent, force
        self.ramp = None
        self.sensor = None
        self.force_event = None

    def take_force_event(self):
        """Return why the force axes began to hold since the last call (None: they did not)."""
        why, self.force_event = self.force_event, None
        return why
