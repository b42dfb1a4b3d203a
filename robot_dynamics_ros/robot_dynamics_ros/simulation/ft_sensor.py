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
A simulated six-axis force/torque sensor at a fixed joint of the description.

It reads what a wrist sensor between the arm and its tool reads: the wrench the child side of
the joint (the tool, and all that hangs from it: fingers) exerts on the parent side, in the
frame of the joint's child link, about its origin, as [fx, fy, fz, tx, ty, tz] (N, N m) —
the tool's weight and inertia and every contact on the tool; pressing the tool down on a table
with 10 N reads +10 N up (the table's push) beside the weight. So, once the tool's weight is
taken out, it reads the external wrench on the tool: what the momentum observer estimates.
The wrench is ``dynamics.transmitted.ChildSide``'s; a bias and white noise may be added.
"""
import xml.etree.ElementTree as ET

import numpy as np

from ..dynamics.transmitted import ChildSide


class FTSensor:
    """The force/torque sensor at the fixed joint ``joint`` of ``model`` (URDF ``xml``)."""

    def __init__(self, model, xml, joint, bias=None, noise=None, seed=0):
        root = ET.fromstring(xml.encode('utf-8'))
        joints = {j.get('name'): j for j in root.findall('joint')}
        if joint not in joints:
            fixed = sorted(n for n, j in joints.items() if j.get('type') == 'fixed')
            raise ValueError(f'ft_sensor.joint "{joint}" is not a joint of {model.name} (its '
                             f'fixed joints: {fixed})')
        element = joints[joint]
        if element.get('type') != 'fixed':
            raise ValueError(f'ft_sensor.joint "{joint}" is {element.get("type")}: a force/'
                             f'torque sensor sits at a fixed joint (between a link and its tool)')
        self.joint = joint
        self.side = ChildSide(model, xml, element.find('child').get('link'))
        self.frame, self.links, self.mass = self.side.frame, self.side.links, self.side.mass
        self.bias = np.zeros(6) if bias is None or len(bias) == 0 else _six(bias, 'bias')
        self.noise = np.zeros(6) if noise is None or len(noise) == 0 else _six(noise, 'noise')
        if np.any(self.noise < 0):
            raise ValueError(f'ft_sensor.noise must be >= 0, got {self.noise.tolist()}')
        self.rng = np.random.default_rng(seed)

    def true_wrench(self, q, qd, qdd, link_wrenches=None):
        """Return the wrench the tool side exerts, in the sensor frame (``ChildSide.wrench``)."""
        return self.side.wrench(q, qd, qdd, link_wrenches)

    def read(self, q, qd, qdd, link_wrenches=None):
        """Return what the sensor reports: the true wrench plus its bias and noise."""
        w = self.true_wrench(q, qd, qdd, link_wrenches) + self.bias
        if np.any(self.noise):
            w = w + self.noise * self.rng.standard_normal(6)
        return w


def _six(values, what):
    v = np.asarray(values, dtype=float).ravel()
    if v.shape != (6,) or not np.all(np.isfinite(v)):
        raise ValueError(f'ft_sensor.{what} needs 6 finite values [fx, fy, fz, tx, ty, tz], got '
                         f'{np.asarray(values).tolist()}')
    return v
