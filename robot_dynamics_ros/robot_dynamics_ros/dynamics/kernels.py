"""Compiled rigid-body algorithms: RNEA (spatial_v2 ``ID``), CRBA (``HandC``), ABA (``FDab``).

Each algorithm is one function whose loops are the textbook recursion with the textbook names.
They read the model's packed arrays and write the model's workspace, so they allocate nothing:

- ``ji``: int64 (2, n): ``parent = ji[0]`` (-1 for the fixed base), ``jtype = ji[1]``.
- ``body``: float64 (n, 14, 6): ``S``, ``Xtree``, ``I``, joint axis (see ``model.ROW_*``).
- ``a_grav``: the spatial gravity acceleration [0, 0, 0, gx, gy, gz].
- ``ws``: float64 (n, 30, 6): ``Xup``, ``v``, ``a``, ``f``, ``IA``, ``pA``, ``U``, ``c``, ``d``, ``u``.

``qd``/``qdd``/``f_ext`` may be ``None``; numba compiles a version for each combination used and
prunes the branches, so ``rnea(q, None, None)`` is the gravity kernel. ``f_ext`` is an (n, 6)
spatial force per body, in body coordinates, that the environment applies to the body.
The ``*_batch`` kernels loop over a leading batch axis inside compiled code.
"""
from numba import njit

from .spatial import (congruence_add, crf_add, crm_add, dot6, jcalc_Xup, matTvec6_add, matvec6,
                      matvec6_add, scale6, set6)

_jit = njit(cache=True, fastmath=False, error_model='numpy')


@njit(cache=True, inline='always')
def _model(ji, body):
    """The model's arrays under their textbook names (views, no copies)."""
    return ji[0], ji[1], body[:, 0], body[:, 1:7], body[:, 7:13], body[:, 13]


@njit(cache=True, inline='always')
def _workspace(ws):
    """The workspace under textbook names (views): Xup, v, a, f, IA, pA, U, c, du (d = du[:, 0],
    u = du[:, 1]), Ia, pa, T (6x6 scratch), h (6 scratch)."""
    return (ws[:, 0:6], ws[:, 6], ws[:, 7], ws[:, 8], ws[:, 9:15], ws[:, 15], ws[:, 16],
            ws[:, 17], ws[:, 18], ws[:, 19:25], ws[:, 25], ws[:, 26:32], ws[:, 32])


@_jit
def rnea_one(ji, body, a_grav, ws, q, qd, qdd, f_ext, tau):
    """Inverse dynamics, tau = ID(model, q, qd, qdd, f_ext) (spatial_v2 ``ID.m``)."""
    parent, jtype, S, Xtree, I, axis = _model(ji, body)
    Xup, v, a, f, _, _, _, _, _, _, _, _, h = _workspace(ws)
    n = parent.shape[0]
    for i in range(n):
        jcalc_Xup(Xup[i], jtype[i], axis[i], q[i], Xtree[i])
        p = parent[i]
        # v[i] = Xup[i] v[p] + S[i] qd[i]
        if qd is not None:
            if p < 0:
                scale6(v[i], S[i], qd[i])
            else:
                matvec6(v[i], Xup[i], v[p])
                for k in range(6):
                    v[i, k] += S[i, k] * qd[i]
        # a[i] = Xup[i] a[p] + S[i] qdd[i] + v[i] x S[i] qd[i]    (a[-1] = -a_grav)
        if p < 0:
            scale6(h[i], a_grav, -1.0)
            matvec6(a[i], Xup[i], h[i])
        else:
            matvec6(a[i], Xup[i], a[p])
        if qdd is not None:
            for k in range(6):
                a[i, k] += S[i, k] * qdd[i]
        if qd is not None:
            crm_add(a[i], v[i], S[i], qd[i])
        # f[i] = I[i] a[i] + v[i] x* I[i] v[i] - f_ext[i]
        matvec6(f[i], I[i], a[i])
        if qd is not None:
            matvec6(h[i], I[i], v[i])
            crf_add(f[i], v[i], h[i])
        if f_ext is not None:
            for k in range(6):
                f[i, k] -= f_ext[i, k]
    for i in range(n - 1, -1, -1):
        tau[i] = dot6(S[i], f[i])
        p = parent[i]
        if p >= 0:
            matTvec6_add(f[p], Xup[i], f[i])             # f[p] += Xup[i].T f[i]


@_jit
def crba_one(ji, body, ws, q, H):
    """Joint-space mass matrix H(q) by the composite-rigid-body algorithm (spatial_v2 ``HandC.m``)."""
    parent, jtype, S, Xtree, I, axis = _model(ji, body)
    Xup, _, _, fh, IC, _, _, _, _, _, _, T, h = _workspace(ws)
    n = parent.shape[0]
    for i in range(n):
        jcalc_Xup(Xup[i], jtype[i], axis[i], q[i], Xtree[i])
        IC[i, :, :] = I[i]
    for i in range(n - 1, -1, -1):
        p = parent[i]
        if p >= 0:
            congruence_add(IC[p], Xup[i], IC[i], T[i])   # IC[p] += Xup[i].T IC[i] Xup[i]
    for i in range(n):
        matvec6(fh[i], IC[i], S[i])                      # fh = IC[i] S[i]
        H[i, i] = dot6(S[i], fh[i])
        j = i
        while parent[j] >= 0:
            h[i, :] = 0.0
            matTvec6_add(h[i], Xup[j], fh[i])            # fh = Xup[j].T fh
            set6(fh[i], h[i])
            j = parent[j]
            H[i, j] = dot6(S[j], fh[i])
            H[j, i] = H[i, j]


@_jit
def aba_one(ji, body, a_grav, ws, q, qd, tau, f_ext, qdd):
    """Forward dynamics by the articulated-body algorithm (spatial_v2 ``FDab.m``)."""
    parent, jtype, S, Xtree, I, axis = _model(ji, body)
    Xup, v, a, _, IA, pA, U, c, du, Ia, pa, T, h = _workspace(ws)
    n = parent.shape[0]
    for i in range(n):
        jcalc_Xup(Xup[i], jtype[i], axis[i], q[i], Xtree[i])
        p = parent[i]
        # v[i] = Xup[i] v[p] + S[i] qd[i];  c[i] = v[i] x S[i] qd[i]
        if p < 0:
            scale6(v[i], S[i], qd[i])
        else:
            matvec6(v[i], Xup[i], v[p])
            for k in range(6):
                v[i, k] += S[i, k] * qd[i]
        c[i, :] = 0.0
        crm_add(c[i], v[i], S[i], qd[i])
        # IA[i] = I[i];  pA[i] = v[i] x* I[i] v[i] - f_ext[i]
        IA[i, :, :] = I[i]
        pA[i, :] = 0.0
        matvec6(h[i], I[i], v[i])
        crf_add(pA[i], v[i], h[i])
        if f_ext is not None:
            for k in range(6):
                pA[i, k] -= f_ext[i, k]
    for i in range(n - 1, -1, -1):
        matvec6(U[i], IA[i], S[i])                       # U = IA S
        d = dot6(S[i], U[i])
        u = tau[i] - dot6(S[i], pA[i])
        du[i, 0] = d
        du[i, 1] = u
        p = parent[i]
        if p >= 0:
            # Ia = IA - U U^T / d;  pa = pA + Ia c + U u / d
            for r in range(6):
                for k in range(6):
                    Ia[i, r, k] = IA[i, r, k] - U[i, r] * U[i, k] / d
            matvec6(pa[i], Ia[i], c[i])
            for k in range(6):
                pa[i, k] += pA[i, k] + U[i, k] * u / d
            congruence_add(IA[p], Xup[i], Ia[i], T[i])  # IA[p] += Xup[i].T Ia Xup[i]
            matTvec6_add(pA[p], Xup[i], pa[i])           # pA[p] += Xup[i].T pa
    for i in range(n):
        p = parent[i]
        # a[i] = Xup[i] a[p] + c[i]    (a[-1] = -a_grav)
        if p < 0:
            scale6(h[i], a_grav, -1.0)
            matvec6(a[i], Xup[i], h[i])
        else:
            matvec6(a[i], Xup[i], a[p])
        for k in range(6):
            a[i, k] += c[i, k]
        qdd[i] = (du[i, 1] - dot6(U[i], a[i])) / du[i, 0]
        for k in range(6):
            a[i, k] += S[i, k] * qdd[i]


# ---- batches: the same algorithms over a leading axis, looped in compiled code -----------------

@_jit
def rnea_batch(ji, body, a_grav, ws, q, qd, qdd, f_ext, tau):
    for k in range(q.shape[0]):
        rnea_one(ji, body, a_grav, ws, q[k], None if qd is None else qd[k],
                 None if qdd is None else qdd[k], None if f_ext is None else f_ext[k], tau[k])


@_jit
def crba_batch(ji, body, ws, q, H):
    for k in range(q.shape[0]):
        crba_one(ji, body, ws, q[k], H[k])


@_jit
def aba_batch(ji, body, a_grav, ws, q, qd, tau, f_ext, qdd):
    for k in range(q.shape[0]):
        aba_one(ji, body, a_grav, ws, q[k], qd[k], tau[k], None if f_ext is None else f_ext[k],
                qdd[k])
