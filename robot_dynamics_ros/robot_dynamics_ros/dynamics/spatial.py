"""Spatial-vector helpers for the compiled kernels (Featherstone, "Rigid Body Dynamics Algorithms").

Every helper writes into ``out`` (no allocation) and is inlined into the kernels. Motion vectors are
``[angular; linear]``, force vectors ``[moment; force]``; X is a 6x6 Pluecker motion transform, so
``X @ m`` moves a motion vector and ``X.T @ f`` moves a force vector the other way.
"""
import math

from numba import njit

_jit = njit(cache=True, inline='always', fastmath=False, error_model='numpy')


@_jit
def set6(out, x):
    for k in range(6):
        out[k] = x[k]


@_jit
def scale6(out, x, s):
    """out = x * s"""
    for k in range(6):
        out[k] = x[k] * s


@_jit
def dot6(x, y):
    return (x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
            + x[3] * y[3] + x[4] * y[4] + x[5] * y[5])


@_jit
def matvec6(out, A, x):
    """out = A @ x"""
    for r in range(6):
        out[r] = (A[r, 0] * x[0] + A[r, 1] * x[1] + A[r, 2] * x[2]
                  + A[r, 3] * x[3] + A[r, 4] * x[4] + A[r, 5] * x[5])


@_jit
def matvec6_add(out, A, x):
    """out += A @ x"""
    for r in range(6):
        out[r] += (A[r, 0] * x[0] + A[r, 1] * x[1] + A[r, 2] * x[2]
                   + A[r, 3] * x[3] + A[r, 4] * x[4] + A[r, 5] * x[5])


@_jit
def matTvec6_add(out, A, x):
    """out += A.T @ x"""
    for c in range(6):
        out[c] += (A[0, c] * x[0] + A[1, c] * x[1] + A[2, c] * x[2]
                   + A[3, c] * x[3] + A[4, c] * x[4] + A[5, c] * x[5])


@_jit
def congruence_add(out, X, A, tmp):
    """out += X.T @ A @ X (tmp: a 6x6 scratch)."""
    for r in range(6):
        for c in range(6):
            s = 0.0
            for k in range(6):
                s += A[r, k] * X[k, c]
            tmp[r, c] = s
    for r in range(6):
        for c in range(6):
            s = 0.0
            for k in range(6):
                s += X[k, r] * tmp[k, c]
            out[r, c] += s


@_jit
def crm_add(out, v, m, s):
    """out += crm(v) @ m * s  (the spatial motion cross product v x m)."""
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    out[0] += (w1 * m[2] - w2 * m[1]) * s
    out[1] += (w2 * m[0] - w0 * m[2]) * s
    out[2] += (w0 * m[1] - w1 * m[0]) * s
    out[3] += (w1 * m[5] - w2 * m[4] + u1 * m[2] - u2 * m[1]) * s
    out[4] += (w2 * m[3] - w0 * m[5] + u2 * m[0] - u0 * m[2]) * s
    out[5] += (w0 * m[4] - w1 * m[3] + u0 * m[1] - u1 * m[0]) * s


@_jit
def crf_add(out, v, f):
    """out += crf(v) @ f  (the spatial force cross product v x* f)."""
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    out[0] += w1 * f[2] - w2 * f[1] + u1 * f[5] - u2 * f[4]
    out[1] += w2 * f[0] - w0 * f[2] + u2 * f[3] - u0 * f[5]
    out[2] += w0 * f[1] - w1 * f[0] + u0 * f[4] - u1 * f[3]
    out[3] += w1 * f[5] - w2 * f[4]
    out[4] += w2 * f[3] - w0 * f[5]
    out[5] += w0 * f[4] - w1 * f[3]


@_jit
def jcalc_Xup(Xup, jtype, axis, q, Xtree):
    """Xup = XJ(q) @ Xtree: the transform from the parent body to this body (spatial_v2 jcalc).

    Revolute: XJ = rot(axis, q). Prismatic: XJ = xlt(axis * q)."""
    if jtype == 0:
        # E = R(axis, q)^T (Rodrigues), the coordinate rotation of the joint.
        c, s = math.cos(q), math.sin(q)
        t = 1.0 - c
        kx, ky, kz = axis[0], axis[1], axis[2]
        E00, E01, E02 = c + t * kx * kx, t * kx * ky + s * kz, t * kx * kz - s * ky
        E10, E11, E12 = t * kx * ky - s * kz, c + t * ky * ky, t * ky * kz + s * kx
        E20, E21, E22 = t * kx * kz + s * ky, t * ky * kz - s * kx, c + t * kz * kz
        # Xup = [E 0; 0 E] @ Xtree
        for cc in range(6):
            for blk in range(0, 6, 3):
                x0, x1, x2 = Xtree[blk, cc], Xtree[blk + 1, cc], Xtree[blk + 2, cc]
                Xup[blk, cc] = E00 * x0 + E01 * x1 + E02 * x2
                Xup[blk + 1, cc] = E10 * x0 + E11 * x1 + E12 * x2
                Xup[blk + 2, cc] = E20 * x0 + E21 * x1 + E22 * x2
    else:
        # Xup = [1 0; -rx 1] @ Xtree with r = axis * q
        r0, r1, r2 = axis[0] * q, axis[1] * q, axis[2] * q
        for cc in range(6):
            x0, x1, x2 = Xtree[0, cc], Xtree[1, cc], Xtree[2, cc]
            Xup[0, cc] = x0
            Xup[1, cc] = x1
            Xup[2, cc] = x2
            Xup[3, cc] = Xtree[3, cc] + r2 * x1 - r1 * x2
            Xup[4, cc] = Xtree[4, cc] + r0 * x2 - r2 * x0
            Xup[5, cc] = Xtree[5, cc] + r1 * x0 - r0 * x1
