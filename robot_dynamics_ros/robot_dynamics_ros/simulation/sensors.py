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
What a real arm's joint_states report of its state: offsets, gains, noise and resolution.

The simulator's state and applied torques are exact; a real driver's are not. ``Sensors``
turns them into what one reports, so the whole loop (excite, record, identify, run with the
result) can be tested on data that looks like a real arm's:

- effort = (applied + ``effort_offset``) / ``effort_gain`` + noise, rounded to
  ``effort_resolution``: a joint torque sensor's bias (N m), a driver that reports motor current
  (``effort_gain``: N m per reported unit, gear included), its noise and counts;
- position + noise rounded to ``position_resolution`` (an encoder's counts), velocity + noise.

All per joint (one value for all, or one per model joint); zero (gain one) changes nothing.
The noise is white, Gaussian, from a generator seeded with ``seed`` (reproducible runs).
"""
import numpy as np

from ..dynamics.values import per_joint

FIELDS = ('effort_offset', 'effort_gain', 'effort_noise', 'effort_resolution',
          'position_noise', 'position_resolution', 'velocity_noise')


def _values(x, n, name, default):
    """Return the field ``name`` (``default`` when empty): the offset any sign, the gain > 0."""
    if x is None or len(np.atleast_1d(x)) == 0:
        x = default
    return per_joint(x, n, name, low=None if name == 'effort_offset' else 0.0,
                     strict=name == 'effort_gain')


class Sensors:
    """What joint_states report of (q, qd, applied torques): see the module's docstring."""

    def __init__(self, n, *, effort_offset=None, effort_gain=None, effort_noise=None,
                 effort_resolution=None, position_noise=None, position_resolution=None,
                 velocity_noise=None, seed=0):
        given = dict(effort_offset=effort_offset, effort_gain=effort_gain,
                     effort_noise=effort_noise, effort_resolution=effort_resolution,
                     position_noise=position_noise, position_resolution=position_resolution,
                     velocity_noise=velocity_noise)
        for name in FIELDS:
            setattr(self, name, _values(given[name], n, name, 1.0 if name == 'effort_gain'
                                        else 0.0))
        self.ideal = not (np.any(self.effort_offset) or np.any(self.effort_gain != 1.0) or any(
            np.any(getattr(self, k)) for k in FIELDS[2:]))
        self.rng = np.random.default_rng(seed)

    def read(self, q, qd, applied):
        """Return (position, velocity, effort) as reported for the true state and torques."""
        if self.ideal:
            return q, qd, applied
        n = len(q)
        effort = (applied + self.effort_offset) / self.effort_gain
        effort = effort + self.effort_noise * self.rng.standard_normal(n)
        position = q + self.position_noise * self.rng.standard_normal(n)
        velocity = qd + self.velocity_noise * self.rng.standard_normal(n)
        return (_quantised(position, self.position_resolution), velocity,
                _quantised(effort, self.effort_resolution))


def _quantised(x, step):
    return np.where(step > 0, np.round(x / np.where(step > 0, step, 1.0)) * step, x)
