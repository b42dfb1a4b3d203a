"""Compiled rigid-body algorithms: RNEA (spatial_v2 ``ID``), CRBA (``HandC``), ABA (``FDab``).

Each algorithm is one function whose loops are the textbook recursion with the textbook names.
A kernel gets two arrays besides the state, so that calling it from Python costs little:

- ``model``: one flat, read-only float64 buffer holding ``parent`` (-1 for the fixed base) and
  ``jtype`` (as floats), ``S``, ``Xtree``, ``axis``, the inertias ``I`` and ``a_grav``; ``_model``
  unpacks it into contiguous views.
- ``ws``: one flat float64 workspace; ``_workspace`` unpacks it (``E``/``r`` are Xup, ``v``, ``a``,
  ``f``, ``IA``, ``pA``, ``U``, ``c``, ``d``, ``u``, scratch). The kernels allocate nothing.

``ID`` is compiled twice: with ``qd``, ``qdd`` and ``f_ext`` arrays, and with all three ``None``,
its branches pruned, as the gravity kernel. (Bias torques pass qdd = 0; no f_ext passes zeros.) ``f_ext`` is the (n, 6) spatial
force [moment; force] per body, in body coordinates, that the environment applies to the body.
Batches loop over a leading axis in compiled code.
"""
import numpy as np
from numba import njit, types

from .spatial import (XTforce_add, Xmotion, congruence_add, crf_add, crm_add, dot6, Imul,
                      inertia6, jcalc, matvec6, plux6)

# ---- the packed layouts -------------------------------------------------------------------------
# model buffer: parent, jtype (2,n) | S (n,6) | Xtree (n,4,3) = [E; r] | axis (n,3)
#               | I (n,4,4) = [Ibar h; h^T m] | a_grav (6)
# workspace:    Xup (n,4,3) | v, a, f (n,6) | t (2,6) | IA (n,6,6) | pA, U, c (n,6) | du (n,2)
#               | X (n,6,6) | T (6,6)
_MODEL_PER_BODY = 6 + 12 + 3 + 16
_WS_PER_BODY = 12 + 18 + 36 + 18 + 2 + 36


def pack_model(parent, jtype, S, Etree, rtree, axis, mass, h, Ibar, a_grav):
    """The flat model buffer the kernels read (see ``_model``)."""
    n = len(S)
    Xtree = np.zeros((n, 4, 3))
    Xtree[:, :3] = Etree
    Xtree[:, 3] = rtree
    I = np.zeros((n, 4, 4))
    I[:, :3, :3] = Ibar
    I[:, :3, 3] = h
    I[:, 3, :3] = h
    I[:, 3, 3] = mass
    parts = [np.ascontiguousarray(x, dtype=np.float64).ravel()
             for x in (parent, jtype, S, Xtree, axis, I, a_grav)]
    return np.concatenate(parts)


def workspace(n):
    return np.zeros(n * _WS_PER_BODY + 12 + 36)


@njit(cache=True, inline='always')
def _model(model, n):
    """parent, jtype, S, Xtree, axis, I, a_grav: views into the packed model."""
    pj = model[:2 * n].reshape((2, n))
    o = 2 * n
    S = model[o:o + 6 * n].reshape((n, 6))
    o += 6 * n
    Xtree = model[o:o + 12 * n].reshape((n, 4, 3))
    o += 12 * n
    axis = model[o:o + 3 * n].reshape((n, 3))
    o += 3 * n
    I = model[o:o + 16 * n].reshape((n, 4, 4))
    o += 16 * n
    return pj[0], pj[1], S, Xtree, axis, I, model[o:o + 6]


@njit(cache=True, inline='always')
def _nbodies(model):
    return (model.shape[0] - 6) // (2 + 6 + 12 + 3 + 16)


@njit(cache=True, inline='always')
def _ws_rnea(ws, n):
    """Xup, v, a, f (per body), t (2x6 scratch): views into the workspace."""
    Xup = ws[:12 * n].reshape((n, 4, 3))
    vaf = ws[12 * n:30 * n].reshape((3, n, 6))
    t = ws[30 * n:30 * n + 12].reshape((2, 6))
    return Xup, vaf[0], vaf[1], vaf[2], t


@njit(cache=True, inline='always')
def _ws_aba(ws, n):
    """IA, pA, U, c, du (d = du[:, 0], u = du[:, 1]), X (Xup as 6x6), T (6x6 scratch)."""
    o = 30 * n + 12
    IA = ws[o:o + 36 * n].reshape((n, 6, 6))
    o += 36 * n
    pUc = ws[o:o + 18 * n].reshape((3, n, 6))
    o += 18 * n
    du = ws[o:o + 2 * n].reshape((n, 2))
    o += 2 * n
    X = ws[o:o + 36 * n].reshape((n, 6, 6))
    o += 36 * n
    return IA, pUc[0], pUc[1], pUc[2], du, X, ws[o:o + 36].reshape((6, 6))


# ---- the algorithms, in spatial_v2's terms ------------------------------------------------------

@njit(cache=True)
def ID(parent, jtype, S, Xtree, axis, I, a_grav, Xup, v, a, f, t, q, qd, qdd, f_ext, tau):
    """tau = ID(model, q, qd, qdd, f_ext), the recursive Newton-Euler algorithm (``ID.m``)."""
    n = parent.shape[0]
    for k in range(6):
        t[0, k] = -a_grav[k]
    for i in range(n):
        jcalc(Xup[i], jtype[i], axis[i], q[i], Xtree[i])              # Xup[i] = XJ Xtree[i]
        p = int(parent[i])
        # v[i] = Xup[i] v[p] + S[i] qd[i]
        if qd is not None:
            if p < 0:
                for k in range(6):
                    v[i, k] = S[i, k] * qd[i]
            else:
                Xmotion(v[i], Xup[i], v[p])
                for k in range(6):
                    v[i, k] += S[i, k] * qd[i]
        # a[i] = Xup[i] a[p] + S[i] qdd[i] + v[i] x S[i] qd[i]     (a[base] = -a_grav)
        Xmotion(a[i], Xup[i], t[0] if p < 0 else a[p])
        if qdd is not None:
            for k in range(6):
                a[i, k] += S[i, k] * qdd[i]
        if qd is not None:
            crm_add(a[i], v[i], S[i], qd[i])
        # f[i] = I[i] a[i] + v[i] x* I[i] v[i] - f_ext[i]
        Imul(f[i], I[i], a[i])
        if qd is not None:
            Imul(t[1], I[i], v[i])
            crf_add(f[i], v[i], t[1])
        if f_ext is not None:
            for k in range(6):
                f[i, k] -= f_ext[i, k]
    for i in range(n - 1, -1, -1):
        tau[i] = dot6(S[i], f[i])
        p = int(parent[i])
        if p >= 0:
            XTforce_add(f[p], Xup[i], f[i])                             # f[p] += Xup[i]^T f[i]


@njit(cache=True)
def HandC_H(parent, jtype, S, Xtree, axis, I, Xup, X, IC, fh, t, T, q, H):
    """H(q), the joint-space mass matrix, by the composite-rigid-body algorithm (``HandC.m``)."""
    n = parent.shape[0]
    for i in range(n):
        jcalc(Xup[i], jtype[i], axis[i], q[i], Xtree[i])
        plux6(X[i], Xup[i])
        inertia6(IC[i], I[i])                                           # IC[i] = I[i]
    for i in range(n - 1, -1, -1):
        p = int(parent[i])
        if p >= 0:
            congruence_add(IC[p], X[i], IC[i], T)                       # IC[p] += Xup^T IC Xup
    for i in range(n):
        matvec6(fh[i], IC[i], S[i])                                     # fh = IC[i] S[i]
        H[i, i] = dot6(S[i], fh[i])
        j = i
        while parent[j] >= 0:
            for k in range(6):
                t[0, k] = 0.0
            XTforce_add(t[0], Xup[j], fh[i])                            # fh = Xup[j]^T fh
            for k in range(6):
                fh[i, k] = t[0, k]
            j = int(parent[j])
            H[i, j] = dot6(S[j], fh[i])
            H[j, i] = H[i, j]


@njit(cache=True)
def FDab(parent, jtype, S, Xtree, axis, I, a_grav, Xup, v, a, t, IA, pA, U, c, du, X, T,
         q, qd, tau, f_ext, qdd):
    """qdd = FD(model, q, qd, tau, f_ext), the articulated-body algorithm (``FDab.m``)."""
    n = parent.shape[0]
    for i in range(n):
        jcalc(Xup[i], jtype[i], axis[i], q[i], Xtree[i])              # Xup[i] = XJ Xtree[i]
        p = int(parent[i])
        # v[i] = Xup[i] v[p] + S[i] qd[i];   c[i] = v[i] x S[i] qd[i]
        if p < 0:
            for k in range(6):
                v[i, k] = S[i, k] * qd[i]
        else:
            Xmotion(v[i], Xup[i], v[p])
            for k in range(6):
                v[i, k] += S[i, k] * qd[i]
        for k in range(6):
            c[i, k] = 0.0
        crm_add(c[i], v[i], S[i], qd[i])
        # IA[i] = I[i];   pA[i] = v[i] x* I[i] v[i] - f_ext[i]
        inertia6(IA[i], I[i])
        Imul(t[0], I[i], v[i])
        for k in range(6):
            pA[i, k] = 0.0
        crf_add(pA[i], v[i], t[0])
        if f_ext is not None:
            for k in range(6):
                pA[i, k] -= f_ext[i, k]
    for i in range(n - 1, -1, -1):
        matvec6(U[i], IA[i], S[i])                                      # U = IA S
        d = du[i, 0] = dot6(S[i], U[i])
        u = du[i, 1] = tau[i] - dot6(S[i], pA[i])
        p = int(parent[i])
        if p >= 0:
            # Ia = IA - U U^T / d;   pa = pA + Ia c + U u / d
            Ia = IA[i]
            for j in range(6):
                for k in range(6):
                    Ia[j, k] -= U[i, j] * U[i, k] / d
            pa = t[0]
            matvec6(pa, Ia, c[i])
            for k in range(6):
                pa[k] += pA[i, k] + U[i, k] * u / d
            plux6(X[i], Xup[i])
            congruence_add(IA[p], X[i], Ia, T)                          # IA[p] += Xup^T Ia Xup
            XTforce_add(pA[p], Xup[i], pa)                              # pA[p] += Xup^T pa
    for k in range(6):
        t[1, k] = -a_grav[k]
    for i in range(n):
        p = int(parent[i])
        # a[i] = Xup[i] a[p] + c[i]   (a[base] = -a_grav);   qdd = (u - U.a) / d
        Xmotion(a[i], Xup[i], t[1] if p < 0 else a[p])
        for k in range(6):
            a[i, k] += c[i, k]
        qdd[i] = (du[i, 1] - dot6(U[i], a[i])) / du[i, 0]
        for k in range(6):
            a[i, k] += S[i, k] * qdd[i]


# ---- entry points: unpack the model and workspace once, check shapes, run -----------------------
# Explicit signatures: compiled (or loaded from numba's cache) at import, and a call with other
# types (a list, int64, a strided view, ...) raises TypeError at once instead of compiling; the
# wrappers in algorithms.py then convert and call again.

_RO1 = types.Array(types.float64, 1, 'C', readonly=True)
_V = {d: types.Array(types.float64, d, 'C') for d in (1, 2, 3)}
_NONE = types.none


def _sig(*dims):
    return types.void(_RO1, _V[1], *[_NONE if d is None else _V[d] for d in dims])


@njit(cache=True, inline='always')
def _check(n, x):
    if x.shape[-1] != n:
        raise ValueError('state arrays must have the length of the model (its joint count)')


@njit(cache=True, inline='always')
def _check_batch(x, y):
    if x.shape[0] != y.shape[0]:
        raise ValueError('batch arrays must have the same length')


@njit([_sig(1, 1, 1, 2, 1)], cache=True)
def rnea_one(model, ws, q, qd, qdd, f_ext, tau):
    n = _nbodies(model)
    parent, jtype, S, Xtree, axis, I, a_grav = _model(model, n)
    _check(n, q), _check(n, qd), _check(n, qdd), _check(n, tau), _check(6, f_ext), _check(n, f_ext.T)
    Xup, v, a, f, t = _ws_rnea(ws, n)
    ID(parent, jtype, S, Xtree, axis, I, a_grav, Xup, v, a, f, t, q, qd, qdd, f_ext, tau)


@njit([_sig(1, 1)], cache=True)
def gravity_one(model, ws, q, tau):
    n = _nbodies(model)
    parent, jtype, S, Xtree, axis, I, a_grav = _model(model, n)
    _check(n, q), _check(n, tau)
    Xup, v, a, f, t = _ws_rnea(ws, n)
    ID(parent, jtype, S, Xtree, axis, I, a_grav, Xup, v, a, f, t, q, None, None, None, tau)


@njit([_sig(1, 2)], cache=True)
def crba_one(model, ws, q, H):
    n = _nbodies(model)
    parent, jtype, S, Xtree, axis, I, _ = _model(model, n)
    _check(n, q), _check(n, H), _check(n, H.T)
    Xup, _, _, fh, t = _ws_rnea(ws, n)
    IC, _, _, _, _, X, T = _ws_aba(ws, n)
    HandC_H(parent, jtype, S, Xtree, axis, I, Xup, X, IC, fh, t, T, q, H)


@njit([_sig(1, 1, 1, 2, 1)], cache=True)
def aba_one(model, ws, q, qd, tau, f_ext, qdd):
    n = _nbodies(model)
    parent, jtype, S, Xtree, axis, I, a_grav = _model(model, n)
    _check(n, q), _check(n, qd), _check(n, tau), _check(n, qdd), _check(6, f_ext), _check(n, f_ext.T)
    Xup, v, a, _, t = _ws_rnea(ws, n)
    IA, pA, U, c, du, X, T = _ws_aba(ws, n)
    FDab(parent, jtype, S, Xtree, axis, I, a_grav, Xup, v, a, t, IA, pA, U, c, du, X, T,
         q, qd, tau, f_ext, qdd)


# ---- batches: the same algorithms over a leading axis, looped in compiled code ---------------

@njit([_sig(2, 2, 2, 3, 2)], cache=True)
def rnea_batch(model, ws, q, qd, qdd, f_ext, tau):
    n = _nbodies(model)
    parent, jtype, S, Xtree, axis, I, a_grav = _model(model, n)
    _check(n, q), _check(n, qd), _check(n, qdd), _check(n, tau), _check(6, f_ext)
    _check(n, f_ext[:, :, 0]), _check_batch(q, qd), _check_batch(q, qdd), _check_batch(q, tau)
    _check_batch(q, f_ext)
    Xup, v, a, f, t = _ws_rnea(ws, n)
    for k in range(q.shape[0]):
        ID(parent, jtype, S, Xtree, axis, I, a_grav, Xup, v, a, f, t, q[k], qd[k], qdd[k],
           f_ext[k], tau[k])


@njit([_sig(2, 2)], cache=True)
def gravity_batch(model, ws, q, tau):
    n = _nbodies(model)
    parent, jtype, S, Xtree, axis, I, a_grav = _model(model, n)
    _check(n, q), _check(n, tau), _check_batch(q, tau)
    Xup, v, a, f, t = _ws_rnea(ws, n)
    for k in range(q.shape[0]):
        ID(parent, jtype, S, Xtree, axis, I, a_grav, Xup, v, a, f, t, q[k], None, None, None,
           tau[k])


@njit([_sig(2, 3)], cache=True)
def crba_batch(model, ws, q, H):
    n = _nbodies(model)
    parent, jtype, S, Xtree, axis, I, _ = _model(model, n)
    _check(n, q), _check(n, H), _check(n, H[:, :, 0]), _check_batch(q, H)
    Xup, _, _, fh, t = _ws_rnea(ws, n)
    IC, _, _, _, _, X, T = _ws_aba(ws, n)
    for k in range(q.shape[0]):
        HandC_H(parent, jtype, S, Xtree, axis, I, Xup, X, IC, fh, t, T, q[k], H[k])


@njit([_sig(2, 2, 2, 3, 2)], cache=True)
def aba_batch(model, ws, q, qd, tau, f_ext, qdd):
    n = _nbodies(model)
    parent, jtype, S, Xtree, axis, I, a_grav = _model(model, n)
    _check(n, q), _check(n, qd), _check(n, tau), _check(n, qdd), _check(6, f_ext)
    _check(n, f_ext[:, :, 0]), _check_batch(q, qd), _check_batch(q, tau), _check_batch(q, qdd)
    _check_batch(q, f_ext)
    Xup, v, a, _, t = _ws_rnea(ws, n)
    IA, pA, U, c, du, X, T = _ws_aba(ws, n)
    for k in range(q.shape[0]):
        FDab(parent, jtype, S, Xtree, axis, I, a_grav, Xup, v, a, t, IA, pA, U, c, du, X, T,
             q[k], qd[k], tau[k], f_ext[k], qdd[k])
