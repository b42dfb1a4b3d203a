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
The wrench a link and everything hanging from it exert on the rest of the arm.

``ChildSide(model, xml, link)``: the "child side" of ``link`` is the link and its descendants
in the URDF tree (the tool below a wrist flange, with its fingers). ``wrench`` gives, by
Newton-Euler on that side, the wrench it exerts on its parent, in ``link``'s frame about its
origin, as [fx, fy, fz, tx, ty, tz] (N, N m): the child links' weight and inertia and the
external wrenches on them, W = sum (f_ext + m g - d/dt momentum). What a six-axis force/torque
sensor between the link and its parent reads (``simulation.ft_sensor``), and what a controller
takes out of such a reading as the tool's weight (``control.force``).

The child links' own inertias come from the URDF (the model merges a fixed joint's two sides into
one body); the velocities and accelerations from a forward pass as RNEA's.
"""
import xml.etree.ElementTree as ET

import numpy as np

from .energy import _joint_E
from .model import mcI, plux, xml_origin


def _crm(v):
    w, u = v[:3], v[3:]
    W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    U = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    out = np.zeros((6, 6))
    out[:3, :3] = W
    out[3:, :3] = U
    out[3:, 3:] = W
    return out


class ChildSide:
    """``link`` of ``model`` and every link below it in the URDF ``xml``: see the module doc."""

    def __init__(self, model, xml, link):
        root = ET.fromstring(xml.encode('utf-8'))
        if link not in model.link_names:
            raise ValueError(f'"{link}" is not a link of {model.name}')
        children = {}
        for j in root.findall('joint'):
            children.setdefault(j.find('parent').get('link'), []).append(
                j.find('child').get('link'))
        side, todo = [], [link]
        while todo:
            name = todo.pop()
            side.append(name)
            todo += children.get(name, [])
        self.model, self.frame = model, link
        self.links = tuple(side)
        self.body, X = model.link_frame(link)
        self._Xf = np.linalg.inv(X).T           # body -> the link's frame (force)
        self._bodies = sorted({model.link_frame(name)[0] for name in self.links
                               if name in model.link_names})
        links = {e.get('name'): e for e in root.findall('link')}
        self._inertias, self.mass = {}, 0.0
        for name in self.links:
            inertial = links[name].find('inertial') if name in links else None
            if inertial is None or name not in model.link_names:
                continue
            b, Xl = model.link_frame(name)
            m = float(inertial.find('mass').get('value'))
            xyz, R = xml_origin(inertial)
            i = inertial.find('inertia')
            Ic = np.array([[float(i.get(a, 0)) for a in row] for row in
                           (('ixx', 'ixy', 'ixz'), ('ixy', 'iyy', 'iyz'), ('ixz', 'iyz', 'izz'))])
            I_link = mcI(m, xyz, R @ Ic @ R.T)              # in the link frame
            self._inertias[b] = self._inertias.get(b, np.zeros((6, 6))) + Xl.T @ I_link @ Xl
            self.mass += m

    def wrench(self, q, qd, qdd, link_wrenches=None):
        """
        Return the wrench [f; t] the child side exerts on the rest, in ``frame``'s frame.

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
        f_ext = np.zeros((n, 6))
        for link, w in (link_wrenches or {}).items():
            if link not in self.links:
                continue
            b, Xl = model.link_frame(link)
            w = np.asarray(w, dtype=float)
            f_ext[b] += Xl.T @ np.concatenate([w[3:], w[:3]])
        # the child side's net force from the parent, summed into the link's body
        total = np.zeros(6)
        for i in self._bodies:
            I = self._inertias.get(i, np.zeros((6, 6)))  # noqa: E741 (Featherstone's I)
            f = I @ a[i] - _crm(v[i]).T @ (I @ v[i]) - f_ext[i]     # v x* I v = -crm(v)^T I v
            total += self._to_body(i, Xup) @ f
        w = -(self._Xf @ total)                 # exerted by the child side on the parent side
        return np.concatenate([w[3:], w[:3]])

    def _to_body(self, i, Xup):
        """Return the force transform from body i's coordinates to the link's body's."""
        T = np.eye(6)
        j = i
        while j != self.body:
            T = T @ Xup[j]
            j = self.model.parent[j]
        return T.T
