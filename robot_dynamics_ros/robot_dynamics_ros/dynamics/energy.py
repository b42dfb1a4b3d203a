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

"""Kinetic and potential energy of a model (numpy; for tests and diagnostics, not a hot path)."""
import math

import numpy as np

from .algorithms import crba


def _joint_E(jtype, axis, q):
    """(E, r) of the joint transform XJ(q): E = R(axis, q)^T for revolute, r = axis q prismatic."""
    if jtype == 0:
        k = axis
        K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
        R = np.eye(3) + math.sin(q) * K + (1 - math.cos(q)) * K @ K
        return R.T, np.zeros(3)
    return np.eye(3), axis * q


def body_poses(model, q):
    """(R, p) of every body frame in the root frame."""
    poses = []
    for i in range(model.n):
        Et, rt = model.Xtree_E[i], model.Xtree_r[i]
        EJ, rJ = _joint_E(model.jtype[i], model.axis[i], q[i])
        # child frame in parent coordinates: rotation (EJ Et)^T, origin rt + Et^T rJ
        R_pc, p_pc = (EJ @ Et).T, rt + Et.T @ rJ
        p = model.parent[i]
        if p < 0:
            poses.append((R_pc, p_pc))
        else:
            R0, p0 = poses[p]
            poses.append((R0 @ R_pc, R0 @ p_pc + p0))
    return poses


def kinetic_energy(model, q, qd):
    return 0.5 * qd @ crba(model, q) @ qd


def potential_energy(model, q):
    """-sum m_i g . c_i (zero at the root's origin)."""
    g = model.gravity
    U = 0.0
    for i, (R, p) in enumerate(body_poses(model, q)):
        m = model.mass[i]
        if m > 0:
            U -= m * g @ (R @ (model.h[i] / m) + p)
    return U


def total_energy(model, q, qd):
    return kinetic_energy(model, q, qd) + potential_energy(model, q)
