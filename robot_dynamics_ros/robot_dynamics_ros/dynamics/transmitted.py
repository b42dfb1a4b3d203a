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
one body). The sum is RNEA's (compiled): the arm with only the child side's inertias (every other
link massless, and the part of a merged body above the link) gives, after the backward pass, the
force the link's body takes from its parent: the child side's. 3-6 us a call, where Newton-Euler
written out in numpy took 0.12-0.19 ms (on the sensor's and the controller's 1 kHz paths both;
``bench/bench_dynamics.py``).
"""
import threading
import xml.etree.ElementTree as ET

import numpy as np

from . import kernels as K
from .model import mcI, plux, xml_origin


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
        # the arm with the child side's inertias only (the fixed base's: see wrench), packed
        # as RobotModel packs its own, with a workspace of its own (see the module doc)
        n = model.n
        I = np.zeros((n, 6, 6))  # noqa: E741 (Featherstone's I)
        for b, Ib in self._inertias.items():
            if b >= 0:
                I[b] = Ib
        self._data = K.data_buffer(K.pack_model(
            model.parent, model.jtype, model.S, model.Xtree_E, model.Xtree_r, model.axis,
            I[:, 5, 5], np.stack([I[:, 2, 4], I[:, 0, 5], I[:, 1, 3]], axis=1), I[:, :3, :3],
            model.armature, model.a_grav))
        packed, ws, _ = K.data_views(self._data)
        self._g = slice(packed.size - 6, packed.size)      # a_grav, as the model's setter
        self._Xup, self._f = K.rnea_views(ws, n)
        self._tau, self._f_ext, self._no_f_ext = np.empty(n), np.zeros((n, 6)), np.zeros((n, 6))
        self._root_children = [i for i in range(n) if model.parent[i] < 0]
        self._lock = threading.Lock()

    def wrench(self, q, qd, qdd, link_wrenches=None):
        """
        Return the wrench [f; t] the child side exerts on the rest, in ``frame``'s frame.

        ``link_wrenches``: {link: [fx, fy, fz, tx, ty, tz]} on links (their frames, about their
        origins: ``Simulator.contact_wrenches``, pushes), those of the child side counted.
        """
        model = self.model
        with self._lock:            # one workspace: the loop's and a service's thread may call
            f_ext, on_base = self._no_f_ext, np.zeros(6)
            if link_wrenches:
                f_ext = self._f_ext
                f_ext[:] = 0.0
                for link, w in link_wrenches.items():
                    if link not in self.links:
                        continue
                    b, Xl = model.link_frame(link)
                    w = np.asarray(w, dtype=float)
                    (f_ext[b] if b >= 0 else on_base)[:] += Xl.T @ np.concatenate([w[3:], w[:3]])
            # the model's gravity as it is now (its setter writes the packed model's last 6)
            self._data[self._g] = model.a_grav
            K.rnea_one(self._data, np.asarray(q, dtype=float), np.asarray(qd, dtype=float),
                       np.asarray(qdd, dtype=float), f_ext, self._tau)
            if self.body >= 0:
                total = self._f[self.body]
            else:
                # the root link: the fixed base's links of the side (at a = -a_grav, as RNEA's
                # base), and what its child bodies take from it
                total = self._inertias.get(-1, np.zeros((6, 6))) @ -model.a_grav - on_base
                for i in self._root_children:
                    E, r = self._Xup[i, :3], self._Xup[i, 3]
                    total += plux(E, r).T @ self._f[i]
            w = -(self._Xf @ total)             # exerted by the child side on the parent side
        return np.concatenate([w[3:], w[:3]])
