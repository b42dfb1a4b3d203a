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
What ros2_control does to an effort command in its real-time loop with ``enforce_command_limits``.

ros2_control_node (Jazzy) has the parameter ``enforce_command_limits`` (false by default). With
it, the resource manager clamps each joint's effort command every cycle, from that cycle's
state, before the hardware gets it; the controller's command (a ForwardCommandController's
last message) is left as it was, so the clamp follows the arm through a stall of the
controller that sent it. Per joint, as joint_limits' ``compute_effort_limits`` and
``JointSoftLimiter`` read (jazzy branch, ``joint_limits/src``):

- always (``JointSaturationLimiter``, a joint without ``<safety_controller>``): the effort
  within +-the URDF's effort limit; no effort further in the direction of motion once the joint
  is at or past a position limit, or faster than its velocity limit (the bound on that side is
  0: the joint coasts, gravity and friction act on it, nothing brakes it);
- with ``<safety_controller>`` (``JointSoftLimiter``): a velocity band from the soft position
  limits, ``v_lo = clamp(-k_position (q - soft_lower), +-v_max)`` and ``v_hi`` likewise (1 deg/s
  towards the soft range outside it, 0 past a hard limit), and the effort within
  ``[-k_velocity (qd - v_lo), -k_velocity (qd - v_hi)]`` (clamped to +-the effort limit), inside
  the bounds above. This bound has no gravity term: where k_velocity x v_max is below a joint's
  holding torque, the limiter itself lets the arm sag.

This module reproduces those rules for the simulator (``simulator_node``'s
``enforce_command_limits``, the benches' ``--driver-limits``); it was written from the source,
not run against ros2_control. It acts on the held command every simulator step, as the
controller manager's loop does at the step's rate.
"""
import numpy as np

# joint_limits' tolerances (joint_limits_helpers.hpp, joint_soft_limiter.hpp)
POSITION_BOUNDS_TOLERANCE = 0.002   # rad or m past a hard limit before the soft band closes
VALUE_CONSIDERED_ZERO = 1e-10
SOFT_LIMIT_REACH_VELOCITY = np.pi / 180.0     # rad/s back into the soft range from outside it


class CommandLimiter:
    """ros2_control's effort limits for the commanded joints ``idx`` of ``model`` (see module)."""

    def __init__(self, model, idx):
        idx = np.asarray(idx, dtype=np.int64)
        lim = np.asarray(model.position_limits)[idx]
        self.lower, self.upper = lim[:, 0].copy(), lim[:, 1].copy()
        self.has_position = np.isfinite(self.lower) & np.isfinite(self.upper)
        vmax = np.asarray(model.velocity_limits, dtype=float)[idx]
        self.has_velocity = np.isfinite(vmax) & (vmax > 0)
        self.vmax = np.where(self.has_velocity, vmax, np.inf)
        emax = np.asarray(model.effort_limits, dtype=float)[idx]
        self.has_effort = np.isfinite(emax) & (emax > 0)
        self.emax = np.where(self.has_effort, emax, np.inf)
        soft = np.asarray(model.soft_limits, dtype=float)[idx]
        # the soft range within the hard one, as ros2_control's parser takes it
        self.soft_lower = np.maximum(soft[:, 0], self.lower)
        self.soft_upper = np.minimum(soft[:, 1], self.upper)
        self.k_position, self.k_velocity = soft[:, 2], soft[:, 3]
        positional = (np.isfinite(self.soft_lower) & np.isfinite(self.soft_upper)
                      & (self.soft_upper - self.soft_lower > VALUE_CONSIDERED_ZERO))
        self.soft = (positional & np.isfinite(self.k_position)
                     & (np.abs(self.k_position) > VALUE_CONSIDERED_ZERO))
        # which joints have a JointSoftLimiter: a <safety_controller> in the URDF
        self.soft_limiter = np.isfinite(soft[:, 0]) | np.isfinite(soft[:, 1])
        self.velocity_band = (self.soft_limiter & self.has_effort & self.has_velocity
                              & np.isfinite(self.k_velocity))

    def limits(self, q, qd):
        """Return (lowest, highest) effort per commanded joint at positions q, velocities qd."""
        lo, hi = -self.emax.copy(), self.emax.copy()
        at_lower = self.has_position & (q <= self.lower) & (qd <= 0.0)
        at_upper = self.has_position & (q >= self.upper) & (qd >= 0.0) & ~at_lower
        lo[at_lower], hi[at_upper] = 0.0, 0.0
        too_low = self.has_velocity & (qd < -self.vmax)
        too_high = self.has_velocity & (qd > self.vmax) & ~too_low
        lo[too_low], hi[too_high] = 0.0, 0.0
        lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
        if not self.velocity_band.any():
            return lo, hi
        s, vmax, kp = self.soft, self.vmax, self.k_position
        v_lo = np.where(s, np.clip(-kp * (q - self.soft_lower), -vmax, vmax), -vmax)
        v_hi = np.where(s, np.clip(-kp * (q - self.soft_upper), -vmax, vmax), vmax)
        past_hard = s & ((q < self.lower - POSITION_BOUNDS_TOLERANCE)
                         | (q > self.upper + POSITION_BOUNDS_TOLERANCE))
        outside = s & ~past_hard & ((q < self.soft_lower) | (q > self.soft_upper))
        v_lo = np.where(past_hard, 0.0, np.where(
            outside, np.copysign(SOFT_LIMIT_REACH_VELOCITY, v_lo), v_lo))
        v_hi = np.where(past_hard, 0.0, np.where(
            outside, np.copysign(SOFT_LIMIT_REACH_VELOCITY, v_hi), v_hi))
        b = self.velocity_band
        band_lo = np.clip(-self.k_velocity * (qd - v_lo), -self.emax, self.emax)
        band_hi = np.clip(-self.k_velocity * (qd - v_hi), -self.emax, self.emax)
        return (np.where(b, np.maximum(band_lo, lo), lo),
                np.where(b, np.minimum(band_hi, hi), hi))

    def __call__(self, q, qd, effort):
        """Return ``effort`` (per commanded joint) as ros2_control passes it on at q, qd."""
        lo, hi = self.limits(q, qd)
        # as libstdc++'s std::clamp, also where the soft band crosses the other bounds (lo > hi)
        return np.where(effort < lo, lo, np.where(hi < effort, hi, effort))
