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

By Newton-Euler on the child side: W = sum over its links of (f_ext + m g - d/dt(momentum)),
with the links' spatial velocities and accelerations from the joint state and accelerations
(a forward pass as RNEA's) and the links' own inertias from the URDF (the model merges a
fixed joint's two sides into one body). A bias and white noise may be added.
"""
import xml.etree.ElementTree as ET

import numpy as np

from ..dynamics.energy import _joint_E
from ..dynamics.model import mcI, plux


def _crm(v):
    w, u = v[:3], v[3:]
    W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    U = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    out = np.zeros((6, 6))
    out[:3, :3] = W
    out[3:, :3] = U
    out[3:, 3:] = W
    return out


def _rpy(rpy):
    from .world import rpy_matrix
    return rpy_matrix(rpy)


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
        self.joint, self.model = joint, model
        self.frame = element.find('child').get('link')
        children = {}
        for j in joints.values():
            children.setdefault(j.find('parent').get('link'), []).append(
                j.find('child').get('link'))
        side, todo = [], [self.frame]
        while todo:
            link = todo.pop()
            side.append(link)
            todo += children.get(link, [])
        self.links = tuple(side)                # the child side's links
        body, X = model.link_frame(self.frame)
        self.body = body                        # the sensor's body (its frame is on it)
        self._X = X                             # body -> sensor frame (motion)
        self._Xf = np.linalg.inv(X).T           # body -> sensor frame (force)
        # each child-side link's spatial inertia in its body's coordinates
        links = {link.get('name'): link for link in root.findall('link')}
        self._inertias = {}
        for name in self.links:
            inertial = links[name].find('inertial') if name in links else None
            if inertial is None or name not in model.link_names:
                continue
            b, Xl = model.link_frame(name)
            m = float(inertial.find('mass').get('value'))
            origin = inertial.find('origin')
            xyz = np.array([float(v) for v in ((origin.get('xyz') if origin is not None
                                                else None) or '0 0 0').split()])
            rpy = [float(v) for v in ((origin.get('rpy') if origin is not None else None)
                                      or '0 0 0').split()]
            i = inertial.find('inertia')
            Ic = np.array([[float(i.get(a, 0)) for a in row] for row in
                           (('ixx', 'ixy', 'ixz'), ('ixy', 'iyy', 'iyz'), ('ixz', 'iyz', 'izz'))])
            R = _rpy(rpy)
            I_link = mcI(m, xyz, R @ Ic @ R.T)          # in the link frame
            I_body = Xl.T @ I_link @ Xl                 # in its body's coordinates
            self._inertias[b] = self._inertias.get(b, np.zeros((6, 6))) + I_body
        self._bodies = sorted({model.link_frame(name)[0] for name in self.links
                               if name in model.link_names})
        self.mass = sum(float(links[n].find('inertial').find('mass').get('value'))
                        for n in self.links if n in links and links[n].find('inertial')
                        is not None)
        self.bias = np.zeros(6) if bias is None or len(bias) == 0 else _six(bias, 'bias')
        self.noise = np.zeros(6) if noise is None or len(noise) == 0 else _six(noise, 'noise')
        if np.any(self.noise < 0):
            raise ValueError(f'ft_sensor.noise must be >= 0, got {self.noise.tolist()}')
        self.rng = np.random.default_rng(seed)

    def true_wrench(self, q, qd, qdd, link_wrenches=None):
        """
        Return the wrench [f; t] the child side exerts on the parent side, in the sensor frame.

        ``link_wrenches``: {link: [fx, fy, fz, tx, ty, tz]} on links (their frames, about their
        origins: ``Simulator.contact_wrenches``, pushes), those of the child side counted.
        """
        model = self.model
        n = model.n
        v, a, Xup = np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((n, 6, 6))
        for i in range(n):
            E, r = _joint_E(model.jtype[i], model.axis[i], q[i])
            Xup[i] = plux(E, r) @ model.Xtree[i]
            p = model.parent[i]
            vp = v[p] if p >= 0 else np.zeros(6)
            ap = a[p] if p >= 0 else -model.a_grav
            v[i] = Xup[i] @ vp + model.S[i] * qd[i]
            a[i] = Xup[i] @ ap + model.S[i] * qdd[i] + _crm(v[i]) @ model.S[i] * qd[i]
        # the external wrenches on the child side's links, per body, [n; f] in body coordinates
        f_ext = np.zeros((n, 6))
        for link, w in (link_wrenches or {}).items():
            if link not in self.links:
                continue
            b, Xl = model.link_frame(link)
            w = np.asarray(w, dtype=float)
            f_ext[b] += Xl.T @ np.concatenate([w[3:], w[:3]])
        # the child side's net force from the parent, summed into the sensor's body: its own
        # part of that body, and every body hanging from the child side
        total = np.zeros(6)
        for i in self._bodies:
            I = self._inertias.get(i, np.zeros((6, 6)))  # noqa: E741 (Featherstone's I)
            f = I @ a[i] - _crm(v[i]).T @ (I @ v[i]) - f_ext[i]     # v x* I v = -crm(v)^T I v
            total += self._to_sensor_body(i, Xup) @ f
        w = -(self._Xf @ total)                 # exerted by the child side on the parent side
        return np.concatenate([w[3:], w[:3]])

    def _to_sensor_body(self, i, Xup):
        """Return the force transform from body i's coordinates to the sensor body's."""
        T = np.eye(6)
        j = i
        while j != self.body:
            if j < 0:
                raise ValueError(f'body {i} does not hang from the sensor\'s body')
            T = T @ Xup[j]
            j = self.model.parent[j]
        return T.T

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
