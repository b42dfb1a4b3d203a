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
Spatial-algebra helpers for the compiled kernels (Featherstone, "Rigid Body Dynamics Algorithms").

Motion vectors are ``[angular; linear]``, force vectors ``[moment; force]``. A Pluecker transform
X = [E 0; -E rx E] is kept as a 4x3 array ``[E; r]``: its rotation ``E`` and translation ``r``,
which is what makes these helpers cheap (Featherstone sec. 2.8; Pinocchio's SE3 does the same). A
spatial inertia is kept as a 4x4 array ``[Ibar h; h^T m]``: mass ``m``, first moment ``h = m c``
and
rotational inertia ``Ibar`` about the body origin (Featherstone eq. 2.63). Every helper writes into
``out`` and allocates nothing.
"""
import math

from numba import njit

_inline = njit(cache=True, inline='always', error_model='numpy')


@_inline
def dot6(x, y):
    return (x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
            + x[3] * y[3] + x[4] * y[4] + x[5] * y[5])


@_inline
def Xmotion(out, X, m):
    """Compute out = X m:  w' = E w,  v' = E (v - r x w)."""
    E, r = X, X[3]
    w0, w1, w2 = m[0], m[1], m[2]
    u0 = m[3] - (r[1] * w2 - r[2] * w1)
    u1 = m[4] - (r[2] * w0 - r[0] * w2)
    u2 = m[5] - (r[0] * w1 - r[1] * w0)
    for k in range(3):
        out[k] = E[k, 0] * w0 + E[k, 1] * w1 + E[k, 2] * w2
        out[k + 3] = E[k, 0] * u0 + E[k, 1] * u1 + E[k, 2] * u2


@_inline
def _XTf(X, f):
    """X^T f as six numbers:  f' = E^T f,  n' = E^T n + r x f' (every entry of f read first)."""
    E, r = X, X[3]
    n0, n1, n2, g0, g1, g2 = f[0], f[1], f[2], f[3], f[4], f[5]
    F0 = E[0, 0] * g0 + E[1, 0] * g1 + E[2, 0] * g2
    F1 = E[0, 1] * g0 + E[1, 1] * g1 + E[2, 1] * g2
    F2 = E[0, 2] * g0 + E[1, 2] * g1 + E[2, 2] * g2
    return (E[0, 0] * n0 + E[1, 0] * n1 + E[2, 0] * n2 + r[1] * F2 - r[2] * F1,
            E[0, 1] * n0 + E[1, 1] * n1 + E[2, 1] * n2 + r[2] * F0 - r[0] * F2,
            E[0, 2] * n0 + E[1, 2] * n1 + E[2, 2] * n2 + r[0] * F1 - r[1] * F0, F0, F1, F2)


@_inline
def XTforce_add(out, X, f):
    """Add X^T f to out."""
    y0, y1, y2, y3, y4, y5 = _XTf(X, f)
    out[0] += y0
    out[1] += y1
    out[2] += y2
    out[3] += y3
    out[4] += y4
    out[5] += y5


@_inline
def XTforce(out, X, f):
    """Compute out = X^T f (``out`` may be ``f``)."""
    out[0], out[1], out[2], out[3], out[4], out[5] = _XTf(X, f)


@_inline
def Imul(out, I, v):  # noqa: E741
    """Compute out = I v:  [Ibar w + h x u;  m u - h x w]."""
    Ibar, m = I, I[3, 3]
    h0, h1, h2 = I[0, 3], I[1, 3], I[2, 3]
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    out[0] = Ibar[0, 0] * w0 + Ibar[0, 1] * w1 + Ibar[0, 2] * w2 + h1 * u2 - h2 * u1
    out[1] = Ibar[1, 0] * w0 + Ibar[1, 1] * w1 + Ibar[1, 2] * w2 + h2 * u0 - h0 * u2
    out[2] = Ibar[2, 0] * w0 + Ibar[2, 1] * w1 + Ibar[2, 2] * w2 + h0 * u1 - h1 * u0
    out[3] = m * u0 - (h1 * w2 - h2 * w1)
    out[4] = m * u1 - (h2 * w0 - h0 * w2)
    out[5] = m * u2 - (h0 * w1 - h1 * w0)


@_inline
def crm_add(out, v, m, s):
    """Add (v x m) s to out, the spatial motion cross product crm(v) m scaled by s."""
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    out[0] += (w1 * m[2] - w2 * m[1]) * s
    out[1] += (w2 * m[0] - w0 * m[2]) * s
    out[2] += (w0 * m[1] - w1 * m[0]) * s
    out[3] += (w1 * m[5] - w2 * m[4] + u1 * m[2] - u2 * m[1]) * s
    out[4] += (w2 * m[3] - w0 * m[5] + u2 * m[0] - u0 * m[2]) * s
    out[5] += (w0 * m[4] - w1 * m[3] + u0 * m[1] - u1 * m[0]) * s


@_inline
def crf_add(out, v, f):
    """Add v x* f to out, the spatial force cross product crf(v) f."""
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    out[0] += w1 * f[2] - w2 * f[1] + u1 * f[5] - u2 * f[4]
    out[1] += w2 * f[0] - w0 * f[2] + u2 * f[3] - u0 * f[5]
    out[2] += w0 * f[1] - w1 * f[0] + u0 * f[4] - u1 * f[3]
    out[3] += w1 * f[5] - w2 * f[4]
    out[4] += w2 * f[3] - w0 * f[5]
    out[5] += w0 * f[4] - w1 * f[3]


@_inline
def jcalc(Xup, jtype, axis, q, Xtree):
    """
    Xup = XJ(q) Xtree (spatial_v2 ``jcalc``).

    Revolute: XJ = rot(axis, q); prismatic: XJ = xlt(axis q). ``jtype`` as packed: 0 revolute,
    1 prismatic, 2 + k revolute about the coordinate axis k (``axis[k]`` = +-1).
    """
    E, r, Etree, rtree = Xup, Xup[3], Xtree, Xtree[3]
    if jtype >= 2:
        # about axis a = x, y or z: E_J = rot_a(+-q)^T leaves row a of Etree and turns rows b, d
        a = int(jtype) - 2
        b = a + 1 if a < 2 else 0               # (a + 1) % 3 without an integer division
        d = b + 1 if b < 2 else 0
        c, s = math.cos(q), math.sin(q) * axis[a]
        for k in range(3):
            xb, xd = Etree[b, k], Etree[d, k]
            E[a, k] = Etree[a, k]
            E[b, k] = c * xb + s * xd
            E[d, k] = c * xd - s * xb
            r[k] = rtree[k]
    elif jtype == 0:
        # E_J = R(axis, q)^T (Rodrigues); E = E_J Etree, r = rtree
        c, s = math.cos(q), math.sin(q)
        t = 1.0 - c
        kx, ky, kz = axis[0], axis[1], axis[2]
        J00, J01, J02 = c + t * kx * kx, t * kx * ky + s * kz, t * kx * kz - s * ky
        J10, J11, J12 = t * kx * ky - s * kz, c + t * ky * ky, t * ky * kz + s * kx
        J20, J21, J22 = t * kx * kz + s * ky, t * ky * kz - s * kx, c + t * kz * kz
        for k in range(3):
            x0, x1, x2 = Etree[0, k], Etree[1, k], Etree[2, k]
            E[0, k] = J00 * x0 + J01 * x1 + J02 * x2
            E[1, k] = J10 * x0 + J11 * x1 + J12 * x2
            E[2, k] = J20 * x0 + J21 * x1 + J22 * x2
            r[k] = rtree[k]
    else:
        # E = Etree, r = rtree + Etree^T (axis q)
        for k in range(3):
            E[0, k] = Etree[0, k]
            E[1, k] = Etree[1, k]
            E[2, k] = Etree[2, k]
            r[k] = rtree[k] + (Etree[0, k] * axis[0] + Etree[1, k] * axis[1]
                               + Etree[2, k] * axis[2]) * q


@_inline
def plux6(X, Xup):
    """Fill X with the 6x6 matrix [E 0; -E rx E] of Xup = [E; r]."""
    E, r = Xup, Xup[3]
    for i in range(3):
        for j in range(3):
            X[i, j] = E[i, j]
            X[i + 3, j + 3] = E[i, j]
            X[i, j + 3] = 0.0
        # lower left block: -E rx
        X[i + 3, 0] = -(E[i, 1] * r[2] - E[i, 2] * r[1])
        X[i + 3, 1] = -(E[i, 2] * r[0] - E[i, 0] * r[2])
        X[i + 3, 2] = -(E[i, 0] * r[1] - E[i, 1] * r[0])


@_inline
def inertia6(out, I):  # noqa: E741
    """Fill out with the 6x6 spatial inertia [Ibar hx; hx^T m1] of I = [Ibar h; h^T m]."""
    Ibar, m, h = I, I[3, 3], I[:3, 3]
    for i in range(3):
        for j in range(3):
            out[i, j] = Ibar[i, j]
            out[i + 3, j + 3] = m if i == j else 0.0
    out[0, 3], out[0, 4], out[0, 5] = 0.0, -h[2], h[1]
    out[1, 3], out[1, 4], out[1, 5] = h[2], 0.0, -h[0]
    out[2, 3], out[2, 4], out[2, 5] = -h[1], h[0], 0.0
    for i in range(3):
        for j in range(3):
            out[i + 3, j] = out[j, i + 3]


@_inline
def matvec6(out, A, x):
    """Compute out = A x."""
    for i in range(6):
        out[i] = (A[i, 0] * x[0] + A[i, 1] * x[1] + A[i, 2] * x[2]
                  + A[i, 3] * x[3] + A[i, 4] * x[4] + A[i, 5] * x[5])


@_inline
def congruence_add(out, X, A, T):
    """Add X^T A X to out, for 6x6 X, A (T: 6x6 scratch)."""
    for i in range(6):
        for j in range(6):
            s = 0.0
            for k in range(6):
                s += A[i, k] * X[k, j]
            T[i, j] = s
    for i in range(6):
        for j in range(i, 6):
            s = 0.0
            for k in range(6):
                s += X[k, i] * T[k, j]
            out[i, j] += s
            if j != i:
                out[j, i] += s


@_inline
def XTIX_add(out, X, I):  # noqa: E741
    """
    Add X^T I X to out for rigid-body inertias kept as [Ibar h; h^T m] (no 6x6 product).

    The inertia I of a child body, in the child frame, expressed in the parent frame and added.

    With h' = E^T h:  m' = m,  h'' = h' + m r,
    Ibar'' = E^T Ibar E + (m r.r + 2 r.h') 1 - (m r r^T + r h'^T + h' r^T).
    """
    r0, r1, r2 = X[3, 0], X[3, 1], X[3, 2]
    m = I[3, 3]
    # h' = E^T h
    g0 = X[0, 0] * I[0, 3] + X[1, 0] * I[1, 3] + X[2, 0] * I[2, 3]
    g1 = X[0, 1] * I[0, 3] + X[1, 1] * I[1, 3] + X[2, 1] * I[2, 3]
    g2 = X[0, 2] * I[0, 3] + X[1, 2] * I[1, 3] + X[2, 2] * I[2, 3]
    # B = Ibar E, then E^T B (symmetric: upper triangle mirrored)
    B00 = I[0, 0] * X[0, 0] + I[0, 1] * X[1, 0] + I[0, 2] * X[2, 0]
    B01 = I[0, 0] * X[0, 1] + I[0, 1] * X[1, 1] + I[0, 2] * X[2, 1]
    B02 = I[0, 0] * X[0, 2] + I[0, 1] * X[1, 2] + I[0, 2] * X[2, 2]
    B10 = I[1, 0] * X[0, 0] + I[1, 1] * X[1, 0] + I[1, 2] * X[2, 0]
    B11 = I[1, 0] * X[0, 1] + I[1, 1] * X[1, 1] + I[1, 2] * X[2, 1]
    B12 = I[1, 0] * X[0, 2] + I[1, 1] * X[1, 2] + I[1, 2] * X[2, 2]
    B20 = I[2, 0] * X[0, 0] + I[2, 1] * X[1, 0] + I[2, 2] * X[2, 0]
    B21 = I[2, 0] * X[0, 1] + I[2, 1] * X[1, 1] + I[2, 2] * X[2, 1]
    B22 = I[2, 0] * X[0, 2] + I[2, 1] * X[1, 2] + I[2, 2] * X[2, 2]
    C00 = X[0, 0] * B00 + X[1, 0] * B10 + X[2, 0] * B20
    C01 = X[0, 0] * B01 + X[1, 0] * B11 + X[2, 0] * B21
    C02 = X[0, 0] * B02 + X[1, 0] * B12 + X[2, 0] * B22
    C11 = X[0, 1] * B01 + X[1, 1] * B11 + X[2, 1] * B21
    C12 = X[0, 1] * B02 + X[1, 1] * B12 + X[2, 1] * B22
    C22 = X[0, 2] * B02 + X[1, 2] * B12 + X[2, 2] * B22
    s = m * (r0 * r0 + r1 * r1 + r2 * r2) + 2.0 * (r0 * g0 + r1 * g1 + r2 * g2)
    out[0, 0] += C00 + s - (m * r0 * r0 + 2.0 * r0 * g0)
    out[1, 1] += C11 + s - (m * r1 * r1 + 2.0 * r1 * g1)
    out[2, 2] += C22 + s - (m * r2 * r2 + 2.0 * r2 * g2)
    o01 = C01 - (m * r0 * r1 + r0 * g1 + g0 * r1)
    o02 = C02 - (m * r0 * r2 + r0 * g2 + g0 * r2)
    o12 = C12 - (m * r1 * r2 + r1 * g2 + g1 * r2)
    out[0, 1] += o01
    out[1, 0] += o01
    out[0, 2] += o02
    out[2, 0] += o02
    out[1, 2] += o12
    out[2, 1] += o12
    h0, h1, h2 = g0 + m * r0, g1 + m * r1, g2 + m * r2
    out[0, 3] += h0
    out[1, 3] += h1
    out[2, 3] += h2
    out[3, 0] += h0
    out[3, 1] += h1
    out[3, 2] += h2
    out[3, 3] += m
