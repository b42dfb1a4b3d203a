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
The one place a command is shaped, whatever the mode: ``CommandShaper``.

A law gives every model joint's torque (``Controller.full_torque``: the mode's law or the
collision reaction's, less g(q) where the hardware compensates gravity). The shaper makes the
commanded joints' efforts of it, in this order:

1. the effort limits: each effort clamped to its limit (``clamp``; which joints, for the log);
2. after a change of model or reference that would step the output (a new description, a
   payload applied, a hold taken over from a goal): the fade from the last command before it,
   linear over ``BUMPLESS`` s, within the effort limits (``fade_from``): s of the states' time
   or of monotonic time, whichever passes first (a simulation in lockstep runs faster or slower
   than the wall clock; a fade in wall time alone took a second of a fast lockstep's time, and
   a cancelled goal's hold was still coasting 1 mm a second later: fresh-clone CI, Kilted;
   stamps that do not advance still end it);
3. the limits layer (``limits.LimitLayer.apply``): the torque rate (``limits.max_torque_rate``,
   against the last command sent, the one memory of it), the joint position and velocity
   bounds, the workspace box and the tool speed; what acted is in the layer's ``active``.

The on_timeout command (stale joint states) is clamped to the effort limits and goes out as it
is (a drop to zero, or g(q), is not ramped); it is noted as sent, so that the next command ramps
from it (``timeout``).
"""
import numpy as np

from . import task_space        # task_space.limit_command: an entry point, rebound once compiled

BUMPLESS = 0.2          # s over which the efforts move to a new model's (a description change)


def clamp(full, cmd, limits):
    """
    Return (the commanded joints' efforts of ``full`` within +-``limits``, mask of the clamped).

    ``full``: every model joint's torque; ``cmd``: the commanded joints' model indices.
    """
    tau, clamped, _ = _clamp(full, cmd, limits)
    return tau, clamped


def _clamp(full, cmd, limits):
    """``clamp``, and whether any joint was clamped."""
    k = len(cmd)
    tau, clamped = np.empty(k), np.empty(k, dtype=bool)
    if full.dtype != np.float64 or not full.flags.c_contiguous:
        full = np.ascontiguousarray(full, dtype=np.float64)
    return tau, clamped, task_space.limit_command(full, cmd, limits, tau, clamped)


class CommandShaper:
    """Shape a controller's commands (see the module): the fade's state is the shaper's own."""

    def __init__(self):
        # [offset, start (state time), start (monotonic)] while a change fades in (fade_from)
        self.fade = None

    def fade_from(self, command):
        """Start the next command at ``command`` (commanded-joint order) and fade over BUMPLESS."""
        self.fade = [np.array(command, dtype=float), None, None]

    def shape(self, ctrl, full, at, now, external=None, braking=None, estimate_time=0.0):
        """
        Return (the efforts to send, mask of the joints the effort limits clamped; None: none).

        ``ctrl``: the Controller (its commanded joints, effort limits, limits layer and state);
        ``full``: its law's torque for every model joint; ``at``: the state's time (the rate
        limit's clock); ``now``: monotonic seconds (the rate limit's when ``at`` did not
        advance; the fade runs on both: see the module); ``external``: estimated external
        torques (model order) or None;
        ``braking``, ``estimate_time``: what of them the bounds may count where they brake, and
        the estimate's time constant (LimitLayer.apply).
        """
        tau, clamped, any_clamped = _clamp(full, ctrl.cmd, ctrl.limits)
        if self.fade is not None:
            tau = self._fade(tau, ctrl.limits, at, now)
        tau = ctrl.limit_layer.apply(tau, ctrl.q, ctrl.qd, at, external, ctrl.compensated, now,
                                     braking, estimate_time)
        return tau, (clamped if any_clamped else None)

    def timeout(self, ctrl, tau, now):
        """Return the on_timeout efforts ``tau`` within the effort limits, noted as sent."""
        tau = np.clip(tau, -ctrl.limits, ctrl.limits)
        ctrl.limit_layer.sent(tau, None, now)       # the next command ramps from it
        return tau

    def _fade(self, tau, limits, at, now):
        """
        After a change: the last command before it, fading into the new one's.

        The first command after the change repeats the last one before it; the difference
        between the two decays linearly to zero over BUMPLESS seconds (bumpless transfer).
        """
        if self.fade[1] is None:
            self.fade = [self.fade[0] - tau, at, now]   # the step the change would make
        # (a state time that went back counts as not passing)
        s = max(at - self.fade[1], now - self.fade[2]) / BUMPLESS
        if s >= 1.0:
            self.fade = None
            return tau
        return np.clip(tau + self.fade[0] * (1.0 - s), -limits, limits)
