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
Compliant contact between the arm's contact spheres (``geometry``) and a world's shapes.

Each sphere p that penetrates a shape s by delta (along the shape's outward normal n, at the
sphere's deepest point x) is pushed by

- a normal force  f_n = max(0, k delta - d v_n)  (a spring and a damper, never pulling);
- a tangential force from a spring anchored where the contact began, f_t = -k s_t - d v_t
  (s_t: the tangential displacement from the anchor, v_t the sliding velocity): while
  |f_t| <= mu f_n the point sticks (the spring holds any tangential load up to the cone); beyond
  it slips with |f_t| = mu f_n, and the anchor follows so the spring holds exactly that force
  (Coulomb friction, stick and slip, as a "bristle" or elasto-plastic model). Contact ends when
  the normal force would pull, and the anchor is forgotten.

k is the world's ``stiffness`` per point; d = 2 zeta sqrt(k m_r) per direction r, zeta the
``damping_ratio`` and m_r = 1 / (J_r M^-1 J_r^T) the point's effective mass in that direction
(critical damping for zeta = 1 where the point alone touches).

Integration: linearly implicit. A stiff spring on a light wrist (k = 2e5 N/m on 0.05 kg: a
period of 3 ms) is unstable explicitly at dt = 1 ms, and explicit sub-steps would need 256 of
them once a face lies flat (each of its points adds k). So the forces are those at the end of
the step, linearized: with the rows r of the contacts' Jacobians J (normal and two tangents per
contact), a_r = dt k + d_r and b_r the spring's force at the start (k delta, or -k s_t),

    f_r = b_r - a_r J_r qd+,    (M + dt B) qd+ = (M + dt B) qd + dt (tau - c - B qd + J^T f)

(B the joint damping, taken implicitly as the integrator does), i.e. one n x n system
(M + dt B + dt sum_r a_r J_r^T J_r) qd+ = ..., solved per step by Cholesky: implicit Euler on
the contacts' springs and dampers, which dissipates energy for any k and d. The forces found
are then applied as external wrenches to the simulator's ordinary step (``_step``: friction in
the joints, stops), so the contact law's only approximation is the linearization over one step.
An active set settles the inequalities: a contact whose normal force would pull is dropped; one
whose tangential force leaves the cone slides at mu f_n in that direction (both then fixed, the
rest solved again). Spheres within reach of a shape (``NEAR`` plus twice their travel in a
step) take part before they touch, so a fast approach is not missed: the solve gives them a
force only if they would penetrate by the end of the step. At most ``MAX_CONTACTS`` (the
deepest) per step. The spring's force stops growing at a depth of ``MAX_DEPTH`` (5 mm, five
times the deepest an arm rests under its own weight at the default stiffness).
"""
import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..dynamics.kernels import HandC, _model
from ..dynamics.linalg import cholesky, cholesky_solve
from ..dynamics.spatial import jcalc

BOX, PLANE = 0, 1
MAX_CONTACTS = 64
NEAR = 1e-3             # m: a sphere this close (plus twice its travel in a step) takes part
ITERATIONS = 20         # of the active set
SLIDING = 1e-3          # m/s: a contact point this fast slides (friction against its velocity)
# m: the spring pushes back at most this deep. An arm that starts inside a shape (or a shape
# moved into it) is pushed out at k MAX_DEPTH per point, not launched by the energy of a
# spring compressed 5 cm (64 points of a kinova's fingers 5 cm deep: 137 kN, 84 rad/s)
MAX_DEPTH = 0.005
# rows of the contact statistics
CONTACTS, CANDIDATES, UNSETTLED = 0, 1, 2


@njit(cache=True)
def body_kinematics(model, q, qd, Xup, E0, p0, w0, v0):
    """
    Compute every body's world placement and velocity.

    E0 (world -> body rotation), origin p0, angular velocity w0 and origin velocity v0, in
    world coordinates.
    """
    n = q.shape[0]
    parent, jtype, S, Xtree, axis, _, _, _ = _model(model, n)
    for i in range(n):
        jcalc(Xup[i], jtype[i], axis[i], q[i], Xtree[i])
        E, r = Xup[i], Xup[i, 3]
        p = int(parent[i])
        for a in range(3):
            for b in range(3):
                if p < 0:
                    E0[i, a, b] = E[a, b]
                else:
                    E0[i, a, b] = E[a, 0] * E0[p, 0, b] + E[a, 1] * E0[p, 1, b] \
                        + E[a, 2] * E0[p, 2, b]
        for a in range(3):
            if p < 0:
                p0[i, a] = r[a]
                w0[i, a] = v0[i, a] = 0.0
            else:
                p0[i, a] = p0[p, a] + E0[p, 0, a] * r[0] + E0[p, 1, a] * r[1] \
                    + E0[p, 2, a] * r[2]
                w0[i, a], v0[i, a] = w0[p, a], v0[p, a]
        if p >= 0:
            dx, dy, dz = p0[i, 0] - p0[p, 0], p0[i, 1] - p0[p, 1], p0[i, 2] - p0[p, 2]
            v0[i, 0] += w0[p, 1] * dz - w0[p, 2] * dy
            v0[i, 1] += w0[p, 2] * dx - w0[p, 0] * dz
            v0[i, 2] += w0[p, 0] * dy - w0[p, 1] * dx
        for a in range(3):
            w0[i, a] += (E0[i, 0, a] * S[i, 0] + E0[i, 1, a] * S[i, 1]
                         + E0[i, 2, a] * S[i, 2]) * qd[i]
            v0[i, a] += (E0[i, 0, a] * S[i, 3] + E0[i, 1, a] * S[i, 4]
                         + E0[i, 2, a] * S[i, 5]) * qd[i]


@njit(cache=True, inline='always')
def _point(E0, p0, b, local, x):
    """Set x to the world position of ``local`` (body b coordinates)."""
    for a in range(3):
        x[a] = p0[b, a] + E0[b, 0, a] * local[0] + E0[b, 1, a] * local[1] \
            + E0[b, 2, a] * local[2]


@njit(cache=True)
def signed_distance(kind, R, c, half, x, normal):
    """Signed distance of world point x to a shape (negative inside); its outward normal."""
    y0 = (x[0] - c[0]) * R[0, 0] + (x[1] - c[1]) * R[1, 0] + (x[2] - c[2]) * R[2, 0]
    y1 = (x[0] - c[0]) * R[0, 1] + (x[1] - c[1]) * R[1, 1] + (x[2] - c[2]) * R[2, 1]
    y2 = (x[0] - c[0]) * R[0, 2] + (x[1] - c[1]) * R[1, 2] + (x[2] - c[2]) * R[2, 2]
    if kind == PLANE:
        for a in range(3):
            normal[a] = R[a, 2]
        return y2
    y = (y0, y1, y2)
    n0 = n1 = n2 = 0.0
    d0, d1, d2 = abs(y0) - half[0], abs(y1) - half[1], abs(y2) - half[2]
    if d0 <= 0 and d1 <= 0 and d2 <= 0:
        # inside: out through the nearest face
        k = 0 if d0 >= d1 and d0 >= d2 else (1 if d1 >= d2 else 2)
        dist = (d0, d1, d2)[k]
        s = 1.0 if y[k] >= 0 else -1.0
        n0, n1, n2 = (s if k == 0 else 0.0), (s if k == 1 else 0.0), (s if k == 2 else 0.0)
    else:
        e0, e1, e2 = max(d0, 0.0), max(d1, 0.0), max(d2, 0.0)
        dist = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
        n0 = math.copysign(e0, y0) / dist
        n1 = math.copysign(e1, y1) / dist
        n2 = math.copysign(e2, y2) / dist
    for a in range(3):
        normal[a] = R[a, 0] * n0 + R[a, 1] * n1 + R[a, 2] * n2
    return dist


@njit(cache=True)
def _velocity(E0, p0, w0, v0, b, x, out):
    """Set out to the world velocity of the world point x fixed to body b."""
    rx, ry, rz = x[0] - p0[b, 0], x[1] - p0[b, 1], x[2] - p0[b, 2]
    out[0] = v0[b, 0] + w0[b, 1] * rz - w0[b, 2] * ry
    out[1] = v0[b, 1] + w0[b, 2] * rx - w0[b, 0] * rz
    out[2] = v0[b, 2] + w0[b, 0] * ry - w0[b, 1] * rx


@njit(cache=True)
def _jacobian_row(model, E0, p0, b, x, e, row):
    """Set row to e^T J_x, the Jacobian of the world point x of body b along e."""
    n = row.shape[0]
    parent, jtype, S, _, _, _, _, _ = _model(model, n)
    for j in range(n):
        row[j] = 0.0
    j = b
    while j >= 0:
        if jtype[j] == 1:       # prismatic: along its axis
            t = 0.0
            for a in range(3):
                t += e[a] * (E0[j, 0, a] * S[j, 3] + E0[j, 1, a] * S[j, 4] + E0[j, 2, a] * S[j, 5])
        else:                   # revolute: axis x (x - the joint's origin)
            ax = E0[j, 0, 0] * S[j, 0] + E0[j, 1, 0] * S[j, 1] + E0[j, 2, 0] * S[j, 2]
            ay = E0[j, 0, 1] * S[j, 0] + E0[j, 1, 1] * S[j, 1] + E0[j, 2, 1] * S[j, 2]
            az = E0[j, 0, 2] * S[j, 0] + E0[j, 1, 2] * S[j, 1] + E0[j, 2, 2] * S[j, 2]
            dx, dy, dz = x[0] - p0[j, 0], x[1] - p0[j, 1], x[2] - p0[j, 2]
            t = (e[0] * (ay * dz - az * dy) + e[1] * (az * dx - ax * dz)
                 + e[2] * (ax * dy - ay * dx))
        row[j] = t
        j = int(parent[j])


@njit(cache=True)
def contact_forces(fd, fd_ws, q, qd, applied, damping, lower, upper, dt, f_user, kin, geo_body,
                   geo_pts, geo_r, sh_kind, sh_R, sh_p, sh_half, sh_mu, k, zeta, anchor,
                   touching, force, where, f_out, cs, ci, stats):
    """
    Compute the contact forces of a step from (q, qd) with the torques ``applied``.

    ``fd``: the integrator's model (with the implicit joint damping in its armature); ``f_out``
    = f_user + the contacts as body wrenches; ``force``/``where`` (P, S, 3): each contact's
    force on the arm (world) and its point; ``anchor``/``touching``: the sticking springs'
    state. Joints on a position limit are held in the prediction (their stop holds them in
    the step; a finger on its stop is no free 15 g to push). ``cs``, ``ci``: float and int
    scratch (``contact_scratch``). Returns -1 when the mass matrix is not positive definite,
    else the number of contacts pushing.
    """
    Xup, E0, p0, w0, v0 = kin
    n, P, S = q.shape[0], geo_body.shape[0], sh_kind.shape[0]
    x, nrm, vel = cs.x[0], cs.x[1], cs.x[2]
    body_kinematics(fd, q, qd, Xup, E0, p0, w0, v0)
    for i in range(n):
        for a in range(6):
            f_out[i, a] = f_user[i, a]
    # the candidates: spheres within reach of a shape, the deepest MAX_CONTACTS
    m = 0
    for p in range(P):
        b = geo_body[p]
        _point(E0, p0, b, geo_pts[p], x)
        _velocity(E0, p0, w0, v0, b, x, vel)
        reach = NEAR + 2.0 * dt * math.sqrt(vel[0] ** 2 + vel[1] ** 2 + vel[2] ** 2)
        for s in range(S):
            gap = signed_distance(sh_kind[s], sh_R[s], sh_p[s], sh_half[s], x, nrm) - geo_r[p]
            force[p, s, 0] = force[p, s, 1] = force[p, s, 2] = 0.0
            if gap >= reach:
                touching[p, s] = 0
                continue
            cs.gap[m] = gap
            ci.pair[m, 0], ci.pair[m, 1] = p, s
            m += 1
    stats[CANDIDATES] = m
    if m == 0:
        stats[CONTACTS] = 0
        return 0
    order = np.argsort(cs.gap[:m])
    kept = min(m, MAX_CONTACTS)
    for c in range(kept):
        ci.chosen[c, 0], ci.chosen[c, 1] = ci.pair[order[c], 0], ci.pair[order[c], 1]
    for c in range(kept, m):
        touching[ci.pair[order[c], 0], ci.pair[order[c], 1]] = 0
    m = kept
    # (M + dt B) and the right-hand side (M + dt B) qd + dt (tau - c - B qd)
    M, L, rhs, qdp, row = cs.M, cs.L, cs.rhs, cs.qdp, cs.row
    M[:, :] = 0.0
    HandC(fd, fd_ws, q, qd, f_user, M, cs.C)
    for i in range(n):
        s_ = cs.C[i]
        rhs[i] = dt * (applied[i] - s_ - damping[i] * qd[i])
        for j in range(n):
            rhs[i] += M[i, j] * qd[j]
    # each contact's frame (normal, two tangents), rows, springs
    for c in range(m):
        p, s = ci.chosen[c, 0], ci.chosen[c, 1]
        b = geo_body[p]
        _point(E0, p0, b, geo_pts[p], x)
        depth = geo_r[p] - signed_distance(sh_kind[s], sh_R[s], sh_p[s], sh_half[s], x, nrm)
        for a in range(3):
            x[a] -= geo_r[p] * nrm[a]                   # the sphere's deepest point
            cs.point[c, a] = x[a]
            cs.frame[c, 0, a] = nrm[a]
        # tangents: the world axis least along the normal, made orthogonal; and n x t1
        ax = 0 if abs(nrm[0]) <= abs(nrm[1]) and abs(nrm[0]) <= abs(nrm[2]) else (
            1 if abs(nrm[1]) <= abs(nrm[2]) else 2)
        dot = nrm[ax]
        for a in range(3):
            cs.frame[c, 1, a] = (1.0 if a == ax else 0.0) - dot * nrm[a]
        norm = math.sqrt(cs.frame[c, 1, 0] ** 2 + cs.frame[c, 1, 1] ** 2 + cs.frame[c, 1, 2] ** 2)
        for a in range(3):
            cs.frame[c, 1, a] /= norm
        t1 = cs.frame[c, 1]
        cs.frame[c, 2, 0] = nrm[1] * t1[2] - nrm[2] * t1[1]
        cs.frame[c, 2, 1] = nrm[2] * t1[0] - nrm[0] * t1[2]
        cs.frame[c, 2, 2] = nrm[0] * t1[1] - nrm[1] * t1[0]
        if not touching[p, s] or depth <= 0.0:
            anchor[p, s, 0], anchor[p, s, 1], anchor[p, s, 2] = x[0], x[1], x[2]
        _velocity(E0, p0, w0, v0, b, x, vel)
        for r in range(2):
            cs.vt[c, r] = (vel[0] * cs.frame[c, r + 1, 0] + vel[1] * cs.frame[c, r + 1, 1]
                           + vel[2] * cs.frame[c, r + 1, 2])
        for r in range(3):
            _jacobian_row(fd, E0, p0, b, cs.point[c], cs.frame[c, r], cs.J[3 * c + r])
            if r == 0:
                cs.b[3 * c] = k * min(depth, MAX_DEPTH)
            else:               # the anchor's spring: -k s along this tangent
                sd = 0.0
                for a in range(3):
                    sd += (cs.point[c, a] - anchor[p, s, a]) * cs.frame[c, r, a]
                cs.b[3 * c + r] = -k * sd
            ci.fixed[3 * c + r] = 0
            cs.g[3 * c + r] = 0.0
    # joints on a stop: held (qd+ = 0 there: their rows and columns of M become the identity's)
    for i in range(n):
        ci.locked[i] = q[i] <= lower[i] or q[i] >= upper[i]
        if ci.locked[i]:
            for j in range(n):
                M[i, j] = M[j, i] = 0.0
            M[i, i] = 1.0
            rhs[i] = 0.0
    for r in range(3 * m):
        for i in range(n):
            if ci.locked[i]:
                cs.J[r, i] = 0.0
    # each row's damper from its effective mass: 1 / (J_r M^-1 J_r^T), M factored once
    for i in range(n):
        for j in range(i + 1):
            L[i, j] = M[i, j]
    if not cholesky(L, n):
        return -1
    for r in range(3 * m):
        for j in range(n):
            row[j] = cs.J[r, j]
        cholesky_solve(L, row, n)
        w = 0.0
        for j in range(n):
            w += cs.J[r, j] * row[j]
        cs.a[r] = dt * k + 2.0 * zeta * math.sqrt(k / max(w, 1e-12))
    # the active set: solve, drop pulling contacts, slide those outside the cone, again
    settled = False
    for _ in range(ITERATIONS):
        for i in range(n):
            qdp[i] = rhs[i]
            for j in range(i + 1):
                L[i, j] = M[i, j]
        for r in range(3 * m):
            Jr = cs.J[r]
            if ci.fixed[r]:
                for i in range(n):
                    qdp[i] += dt * Jr[i] * cs.g[r]
            else:
                ar = cs.a[r]
                for i in range(n):
                    qdp[i] += dt * Jr[i] * cs.b[r]
                    for j in range(i + 1):
                        L[i, j] += dt * ar * Jr[i] * Jr[j]
        if not cholesky(L, n):
            return -1
        cholesky_solve(L, qdp, n)
        for r in range(3 * m):
            if ci.fixed[r]:
                cs.f[r] = cs.g[r]
            else:
                v = 0.0
                for j in range(n):
                    v += cs.J[r, j] * qdp[j]
                cs.f[r] = cs.b[r] - cs.a[r] * v
        changed = False
        for c in range(m):
            r = 3 * c
            if ci.fixed[r]:
                continue                            # released
            fn = cs.f[r]
            if fn <= 0.0:
                for j in range(3):
                    ci.fixed[r + j] = 1
                    cs.g[r + j] = 0.0
                changed = True
                continue
            mu = sh_mu[ci.chosen[c, 1]]
            ft = math.sqrt(cs.f[r + 1] ** 2 + cs.f[r + 2] ** 2)
            if not ci.fixed[r + 1] and ft > mu * fn * (1.0 + 1e-9):
                # slides: the tangential force on the cone, against the sliding velocity (at
                # the start of the step) once there is one, else in the direction the stick
                # solve found (a contact starting to slip)
                ci.fixed[r + 1] = ci.fixed[r + 2] = 1
                d1, d2 = cs.f[r + 1], cs.f[r + 2]
                vt = math.sqrt(cs.vt[c, 0] ** 2 + cs.vt[c, 1] ** 2)
                if vt > SLIDING:
                    d1, d2 = -cs.vt[c, 0] * ft / vt, -cs.vt[c, 1] * ft / vt
                cs.g[r + 1] = d1 * mu * fn / ft
                cs.g[r + 2] = d2 * mu * fn / ft
                cs.fn[c] = fn
                changed = True
            elif ci.fixed[r + 1]:
                # a sliding contact's friction follows its normal force, up to 4x the normal
                # force it slid with: with a light link, friction can raise the normal force it
                # is made of (the update would run away, a Painleve-like loop)
                target = mu * min(fn, 4.0 * cs.fn[c])
                ftg = math.sqrt(cs.g[r + 1] ** 2 + cs.g[r + 2] ** 2)
                if ftg > 0 and abs(ftg - target) > 1e-9 * (1.0 + target):
                    cs.g[r + 1] *= target / ftg
                    cs.g[r + 2] *= target / ftg
                    changed = True
        if not changed:
            settled = True
            break
    if not settled:
        stats[UNSETTLED] += 1
    # the forces: on the arm (world), as body wrenches, and the anchors of sliding contacts
    count = 0
    for c in range(m):
        p, s = ci.chosen[c, 0], ci.chosen[c, 1]
        r = 3 * c
        if cs.f[r] <= 0.0:
            touching[p, s] = 0
            continue
        touching[p, s] = 1
        count += 1
        b = geo_body[p]
        F = cs.x[3]
        for a in range(3):
            F[a] = (cs.f[r] * cs.frame[c, 0, a] + cs.f[r + 1] * cs.frame[c, 1, a]
                    + cs.f[r + 2] * cs.frame[c, 2, a])
            force[p, s, a] = F[a]
            where[p, s, a] = cs.point[c, a]
        if ci.fixed[r + 1]:
            # the anchor where its spring holds the sliding force
            for a in range(3):
                anchor[p, s, a] = cs.point[c, a] + (cs.g[r + 1] * cs.frame[c, 1, a]
                                                    + cs.g[r + 2] * cs.frame[c, 2, a]) / k
        rx, ry, rz = (cs.point[c, 0] - p0[b, 0], cs.point[c, 1] - p0[b, 1],
                      cs.point[c, 2] - p0[b, 2])
        fl0 = E0[b, 0, 0] * F[0] + E0[b, 0, 1] * F[1] + E0[b, 0, 2] * F[2]
        fl1 = E0[b, 1, 0] * F[0] + E0[b, 1, 1] * F[1] + E0[b, 1, 2] * F[2]
        fl2 = E0[b, 2, 0] * F[0] + E0[b, 2, 1] * F[1] + E0[b, 2, 2] * F[2]
        rl0 = E0[b, 0, 0] * rx + E0[b, 0, 1] * ry + E0[b, 0, 2] * rz
        rl1 = E0[b, 1, 0] * rx + E0[b, 1, 1] * ry + E0[b, 1, 2] * rz
        rl2 = E0[b, 2, 0] * rx + E0[b, 2, 1] * ry + E0[b, 2, 2] * rz
        f_out[b, 0] += rl1 * fl2 - rl2 * fl1
        f_out[b, 1] += rl2 * fl0 - rl0 * fl2
        f_out[b, 2] += rl0 * fl1 - rl1 * fl0
        f_out[b, 3] += fl0
        f_out[b, 4] += fl1
        f_out[b, 5] += fl2
    stats[CONTACTS] = count
    return count


def kinematics_scratch(n):
    """(Xup, E0, p0, w0, v0) for ``body_kinematics``."""
    return (np.zeros((n, 4, 3)), np.zeros((n, 3, 3)), np.zeros((n, 3)), np.zeros((n, 3)),
            np.zeros((n, 3)))


Floats = namedtuple('Floats', 'x gap M L C rhs qdp row point frame J a b g f fn vt')
Ints = namedtuple('Ints', 'pair chosen fixed locked')


def contact_scratch(n, pairs):
    """(float, int) scratch of ``contact_forces`` for n joints and ``pairs`` sphere-shape pairs."""
    m = MAX_CONTACTS
    floats = Floats(np.zeros((4, 3)), np.zeros(pairs), np.zeros((n, n)), np.zeros((n, n)),
                    np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros((m, 3)),
                    np.zeros((m, 3, 3)), np.zeros((3 * m, n)), np.zeros(3 * m),
                    np.zeros(3 * m), np.zeros(3 * m), np.zeros(3 * m), np.zeros(m),
                    np.zeros((m, 2)))
    return floats, Ints(np.zeros((pairs, 2), dtype=np.int64), np.zeros((m, 2), dtype=np.int64),
                        np.zeros(3 * m, dtype=np.int64), np.zeros(n, dtype=np.int64))
