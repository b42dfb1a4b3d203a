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
Compiled rigid-body algorithms: RNEA (spatial_v2 ``ID``), CRBA (``HandC``), ABA (``FDab``).

Each algorithm is one function whose loops are the textbook recursion with the textbook names.
An algorithm gets two arrays besides the state:

- ``model``: one flat float64 buffer holding ``parent`` (-1 for the fixed base) and
  ``jtype`` (as floats), ``S``, ``Xtree``, ``axis``, the inertias ``I``, the ``armature`` (rotor
  inertia reflected to each joint, added to the mass matrix diagonal) and ``a_grav``; ``_model``
  unpacks it into contiguous views. Read only.
- ``ws``: one flat float64 workspace; ``_ws_rnea``/``_ws_aba`` unpack it (``Xup``, ``v``, ``a``,
  ``f``, ``IA``, ``pA``, ``U``, ``c``, ``d``, ``u``, scratch). The kernels allocate nothing.

The entry points that Python calls (the end of this file, and other layers' such as the
observer's) get both, and the Coriolis kernel's scratch, as one array ``data`` (``data_buffer``;
``RobotModel._data``), split in compiled code by ``split_data``: numba's dispatcher checks the
type of every argument of every call, and a read-only array takes a slower path, so one
writable argument costs less than three (the figures are in the design notes).

``ID`` is compiled twice: with ``qd``, ``qdd`` and ``f_ext`` arrays, and with all three ``None``,
its branches pruned, as the gravity kernel (bias torques pass qdd = 0; no f_ext passes zeros).
``f_ext`` is the (n, 6) spatial force [moment; force] per body, in body coordinates, that the
environment applies to the body.
Batches loop over a leading axis in compiled code.

The algorithms are compiled with ``fastmath={'contract'}``: a multiply and an add become one
fused multiply-add where the CPU has it (one rounding instead of two; nothing else of fast-math,
no reassociation, NaN and inf kept): faster, and as close to Pinocchio as without (the design
notes give the figures).
"""
import subprocess
import sys
import threading
import time

import numpy as np
from numba import njit, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher as Dispatcher
from numba.core.runtime import rtsys
from numba.core.sigutils import normalize_signature
from numba.extending import intrinsic

from . import cache  # noqa: F401 (first: numba's cache keyed by the core's sources too)
from .spatial import (XTforce, XTforce_add, XTIX_add, Xmotion, congruence_add, crf_add, crm_add,
                      dot6, Imul, inertia6, jcalc, matvec6, plux6)

# ---- the packed layouts -------------------------------------------------------------------------
# model buffer: parent, jtype (2,n) | S (n,6) | Xtree (n,4,3) = [E; r] | axis (n,3)
#               | I (n,4,4) = [Ibar h; h^T m] | armature (n) | a_grav (6)
#               jtype packed: 0 revolute, 1 prismatic, 2 + k revolute about +-coordinate axis k
#               (x, y, z: most joints; ``jcalc`` then rotates two rows instead of three)
# workspace:    Xup (n,4,3) | v, a, f (n,6) | t (2,6) | IA (n,6,6) | pA, U, c (n,6) | du (n,2)
#               | X (n,6,6) | T (6,6)
# Coriolis:     X0 (n,4,3) | Sw, Sd, v (n,6) | Ic (n,4,4) | Bc (n,6,6) | 3 6x6
# data:         model | workspace | Coriolis scratch (what the entry points take)
_MODEL_PER_BODY, _MODEL_FIXED = 2 + 6 + 12 + 3 + 16 + 1, 6
_WS_PER_BODY, _WS_FIXED = 12 + 18 + 36 + 18 + 2 + 36, 12 + 36
_WC_PER_BODY, _WC_FIXED = 12 + 18 + 16 + 36, 3 * 36
_DATA_PER_BODY = _MODEL_PER_BODY + _WS_PER_BODY + _WC_PER_BODY
_DATA_FIXED = _MODEL_FIXED + _WS_FIXED + _WC_FIXED


def pack_model(parent, jtype, S, Etree, rtree, axis, mass, h, Ibar, armature, a_grav):
    """Pack the flat model buffer the kernels read (see ``_model``)."""
    n = len(S)
    Xtree = np.zeros((n, 4, 3))
    Xtree[:, :3] = Etree
    Xtree[:, 3] = rtree
    I = np.zeros((n, 4, 4))  # noqa: E741
    I[:, :3, :3] = Ibar
    I[:, :3, 3] = h
    I[:, 3, :3] = h
    I[:, 3, 3] = mass
    jtype = np.array(jtype, dtype=np.float64)
    for i in range(n):
        k = np.flatnonzero(axis[i])
        if jtype[i] == 0 and len(k) == 1 and abs(axis[i][k[0]]) == 1.0:
            jtype[i] = 2 + k[0]
    parts = [np.ascontiguousarray(x, dtype=np.float64).ravel()
             for x in (parent, jtype, S, Xtree, axis, I, armature, a_grav)]
    return np.concatenate(parts)


def workspace(n):
    return np.zeros(n * _WS_PER_BODY + _WS_FIXED)


def coriolis_workspace(n):
    """Coriolis kernel scratch (the layout above)."""
    return np.zeros(n * _WC_PER_BODY + _WC_FIXED)


def data_buffer(model):
    """Return the entry points' ``data``: a packed ``model``, then its two workspaces (zeros)."""
    n = (model.shape[0] - _MODEL_FIXED) // _MODEL_PER_BODY
    return np.concatenate([model, workspace(n), coriolis_workspace(n)])


def data_views(data):
    """Return views of ``data``'s packed model (read-only), workspace and Coriolis scratch."""
    _, a, b = _layout.py_func(data.shape[0])
    model = data[:a]
    model.flags.writeable = False
    return model, data[a:b], data[b:]


@intrinsic
def _view(typingctx, buf, offset, shape):
    """
    Return a C-contiguous view of ``buf`` starting at ``buf.flat[offset]``, of the given shape.

    ``reshape`` would do, but it calls into numba's C helpers (~20 ns a view, a dozen views a
    call); this builds the array struct in place and costs nothing. No bounds check: the layouts
    above fix every offset and shape from n.
    """
    ndim = len(shape)
    retty = types.Array(buf.dtype, ndim, 'C')

    def codegen(context, builder, signature, args):
        from numba.core import cgutils
        from numba.np.arrayobj import make_array, populate_array
        src = make_array(signature.args[0])(context, builder, args[0])
        dims = cgutils.unpack_tuple(builder, args[2], ndim)
        intp = context.get_value_type(types.intp)
        itemsize = context.get_constant(types.intp, context.get_abi_sizeof(
            context.get_data_type(buf.dtype)))
        strides, stride = [], itemsize
        for dim in reversed(dims):
            strides.insert(0, stride)
            stride = builder.mul(stride, builder.sext(dim, intp) if dim.type != intp else dim)
        out = make_array(retty)(context, builder)
        populate_array(out, data=builder.gep(src.data, [args[1]]),
                       shape=[builder.sext(d, intp) if d.type != intp else d for d in dims],
                       strides=strides, itemsize=itemsize, meminfo=None)
        return out._getvalue()
    return retty(buf, offset, shape), codegen


@intrinsic
def _readonly(typingctx, a):
    """Return ``a`` typed read-only, as the algorithms get ``model`` (writes do not compile)."""
    retty = a.copy(readonly=True)

    def codegen(context, builder, signature, args):
        from numba.core.imputils import impl_ret_borrowed
        return impl_ret_borrowed(context, builder, retty, args[0])
    return retty(a), codegen


@njit(cache=True, inline='always')
def _layout(size):
    """Return n and where the workspace and Coriolis scratch start in a ``data`` of ``size``."""
    n = (size - _DATA_FIXED) // _DATA_PER_BODY
    a = n * _MODEL_PER_BODY + _MODEL_FIXED
    return n, a, a + n * _WS_PER_BODY + _WS_FIXED


@njit(cache=True, inline='always')
def split_data(data):
    """Return n and the views model (read-only), ws and wc of an entry point's ``data``."""
    n, a, b = _layout(data.shape[0])
    return (n, _readonly(_view(data, 0, (a,))), _view(data, a, (b - a,)),
            _view(data, b, (data.shape[0] - b,)))


@njit(cache=True, inline='always')
def _model(model, n):
    """parent, jtype, S, Xtree, axis, I, armature, a_grav: views into the packed model."""
    pj = _view(model, 0, (2, n))
    S = _view(model, 2 * n, (n, 6))
    Xtree = _view(model, 8 * n, (n, 4, 3))
    axis = _view(model, 20 * n, (n, 3))
    I = _view(model, 23 * n, (n, 4, 4))  # noqa: E741
    armature, a_grav = _view(model, 39 * n, (n,)), _view(model, 40 * n, (6,))
    return pj[0], pj[1], S, Xtree, axis, I, armature, a_grav


@njit(cache=True, inline='always')
def _ws_rnea(ws, n):
    """Xup, v, a, f (per body), t (2x6 scratch): views into the workspace."""
    vaf = _view(ws, 12 * n, (3, n, 6))
    return _view(ws, 0, (n, 4, 3)), vaf[0], vaf[1], vaf[2], _view(ws, 30 * n, (2, 6))


def rnea_views(ws, n):
    """Return views of Xup (n, 4, 3) and f (n, 6) in ``ws``: after ID, its last pass's."""
    return ws[:12 * n].reshape(n, 4, 3), ws[24 * n:30 * n].reshape(n, 6)


def articulated_inertias(ws, n):
    """Return the articulated inertia d of every joint after FDab ran on ``ws`` (for errors)."""
    o = 30 * n + 12 + 54 * n
    return ws[o:o + 2 * n].reshape(n, 2)[:, 0].copy()


@njit(cache=True, inline='always')
def _ws_aba(ws, n):
    """IA, pA, U, c, du (d = du[:, 0], u = du[:, 1]), X (Xup as 6x6), T (6x6 scratch)."""
    o = 30 * n + 12
    pUc = _view(ws, o + 36 * n, (3, n, 6))
    return (_view(ws, o, (n, 6, 6)), pUc[0], pUc[1], pUc[2], _view(ws, o + 54 * n, (n, 2)),
            _view(ws, o + 56 * n, (n, 6, 6)), _view(ws, o + 92 * n, (6, 6)))


# ---- the algorithms, in spatial_v2's terms ------------------------------------------------------

@njit(cache=True, inline='always', fastmath={'contract'})
def forward_body(i, model, n, ws, q, qd, qdd, a0):
    """
    Body i's step of the RNEA's forward pass (``ID.m``): Xup[i], v[i] and a[i] in ``ws``.

    ``a0`` is the base's acceleration (-a_grav); ``qd`` or ``qdd`` None: zero. The one forward
    pass of ``ID`` and ``Regressor``; ``FDab``, ``momentum`` and ``FrameKin`` take its velocity
    part (``body_velocity``). Returns the parent's index (-1: the base).
    """
    parent, jtype, S, Xtree, axis, _, _, _ = _model(model, n)
    Xup, v, a, _, _ = _ws_rnea(ws, n)
    jcalc(Xup[i], jtype[i], axis[i], q[i], Xtree[i])                  # Xup[i] = XJ Xtree[i]
    p = int(parent[i])
    if qd is not None:
        body_velocity(v, i, p, Xup, S, qd)
    # a[i] = Xup[i] a[p] + S[i] qdd[i] + v[i] x S[i] qd[i]     (a[base] = -a_grav)
    Xmotion(a[i], Xup[i], a0 if p < 0 else a[p])
    if qdd is not None:
        for k in range(6):
            a[i, k] += S[i, k] * qdd[i]
    if qd is not None:
        crm_add(a[i], v[i], S[i], qd[i])
    return p


@njit(cache=True, inline='always', fastmath={'contract'})
def body_velocity(v, i, p, Xup, S, qd):
    """v[i] = Xup[i] v[p] + S[i] qd[i] (v[base] = 0), Xup[i] already computed."""
    if p < 0:
        for k in range(6):
            v[i, k] = S[i, k] * qd[i]
    else:
        Xmotion(v[i], Xup[i], v[p])
        for k in range(6):
            v[i, k] += S[i, k] * qd[i]


@njit(cache=True, fastmath={'contract'})
def ID(model, ws, q, qd, qdd, f_ext, tau):
    """Compute inverse dynamics tau by the recursive Newton-Euler algorithm (``ID.m``)."""
    n = tau.shape[0]
    parent, _, S, _, _, I, armature, a_grav = _model(model, n)
    Xup, v, a, f, t = _ws_rnea(ws, n)
    for k in range(6):
        t[0, k] = -a_grav[k]
    for i in range(n):
        forward_body(i, model, n, ws, q, qd, qdd, t[0])                 # Xup[i], v[i], a[i]
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
        if qdd is not None:
            tau[i] += armature[i] * qdd[i]                              # the rotor's inertia
        p = int(parent[i])
        if p >= 0:
            XTforce_add(f[p], Xup[i], f[i])                             # f[p] += Xup[i]^T f[i]


@njit(cache=True, fastmath={'contract'})
def HandC_H(model, ws, q, H):
    """H(q), the joint-space mass matrix, by the composite-rigid-body algorithm (``HandC.m``)."""
    n = H.shape[0]
    parent, jtype, S, Xtree, axis, _, _, _ = _model(model, n)
    Xup = _ws_rnea(ws, n)[0]
    for i in range(n):
        jcalc(Xup[i], jtype[i], axis[i], q[i], Xtree[i])
    _crba(model, ws, H)


@njit(cache=True, fastmath={'contract'})
def HandC(model, ws, q, qd, f_ext, H, C):
    """
    H(q) and the bias C(q, qd, f_ext) = ID(q, qd, 0, f_ext) together (``HandC.m``).

    The RNEA's Xup serve the composite-rigid-body pass; tau = H qdd + C.
    """
    ID(model, ws, q, qd, None, f_ext, C)
    _crba(model, ws, H)


@njit(cache=True, fastmath={'contract'})
def _crba(model, ws, H):
    """Run the composite-rigid-body pass of ``HandC.m`` on the Xup already in ``ws``."""
    n = H.shape[0]
    parent, _, S, _, _, I, armature, _ = _model(model, n)
    Xup, _, _, fh, _ = _ws_rnea(ws, n)
    IC = _view(ws, 30 * n + 12, (n, 4, 4))     # composite inertias, [Ibar h; h^T m] like I
    for i in range(n):
        for j in range(4):                                              # IC[i] = I[i]
            for k in range(4):
                IC[i, j, k] = I[i, j, k]
    for i in range(n - 1, -1, -1):
        p = int(parent[i])
        if p >= 0:
            XTIX_add(IC[p], Xup[i], IC[i])                              # IC[p] += Xup^T IC Xup
    for i in range(n):
        Imul(fh[i], IC[i], S[i])                                        # fh = IC[i] S[i]
        H[i, i] = dot6(S[i], fh[i]) + armature[i]
        j = i
        while parent[j] >= 0:
            XTforce(fh[i], Xup[j], fh[i])                               # fh = Xup[j]^T fh
            j = int(parent[j])
            H[i, j] = dot6(S[j], fh[i])
            H[j, i] = H[i, j]


@njit(cache=True, fastmath={'contract'})
def FDab(model, ws, q, qd, tau, f_ext, qdd):
    """
    Forward dynamics by the articulated-body algorithm (``FDab.m``): qdd = FD(q, qd, tau).

    Returns 0, or 1 + the index of a joint whose articulated inertia d is zero (it moves no mass:
    the mass matrix is singular and its qdd is NaN); ``ws`` then holds every joint's d.
    """
    n = qdd.shape[0]
    parent, jtype, S, Xtree, axis, I, armature, a_grav = _model(model, n)
    Xup, v, a, _, t = _ws_rnea(ws, n)
    IA, pA, U, c, du, X, T = _ws_aba(ws, n)
    for i in range(n):
        jcalc(Xup[i], jtype[i], axis[i], q[i], Xtree[i])              # Xup[i] = XJ Xtree[i]
        p = int(parent[i])
        body_velocity(v, i, p, Xup, S, qd)          # v[i] = Xup[i] v[p] + S[i] qd[i]
        # c[i] = v[i] x S[i] qd[i]
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
    singular = 0
    for i in range(n - 1, -1, -1):
        matvec6(U[i], IA[i], S[i])                                      # U = IA S
        d = du[i, 0] = dot6(S[i], U[i]) + armature[i]
        u = du[i, 1] = tau[i] - dot6(S[i], pA[i])
        if not d > 0.0:
            singular = i + 1        # nothing to pass on to the parent (U is zero, too)
            continue
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
        qdd[i] = (du[i, 1] - dot6(U[i], a[i])) / du[i, 0] if du[i, 0] > 0.0 else np.nan
        for k in range(6):
            a[i, k] += S[i, k] * qdd[i]
    return singular


@njit(cache=True, inline='always')
def _skew_at(out, r, c, x, y, z):
    """Write skew([x, y, z]) (the cross-product matrix) into out[r:r+3, c:c+3]."""
    out[r, c], out[r, c + 1], out[r, c + 2] = 0.0, -z, y
    out[r + 1, c], out[r + 1, c + 1], out[r + 1, c + 2] = z, 0.0, -x
    out[r + 2, c], out[r + 2, c + 1], out[r + 2, c + 2] = -y, x, 0.0


@njit(cache=True, inline='always')
def _crm6(out, v):
    """Write crm(v) = [w x, 0; u x, w x], the motion cross product as a matrix, into out."""
    for i in range(3):
        for j in range(3):
            out[i, j + 3] = 0.0
    _skew_at(out, 0, 0, v[0], v[1], v[2])
    _skew_at(out, 3, 3, v[0], v[1], v[2])
    _skew_at(out, 3, 0, v[3], v[4], v[5])


@njit(cache=True, inline='always')
def _minus_skew_add(out, r, c, x, y, z, s):
    """Add -s skew([x, y, z]) into out[r:r+3, c:c+3]."""
    out[r, c + 1] += s * z
    out[r, c + 2] -= s * y
    out[r + 1, c] -= s * z
    out[r + 1, c + 2] += s * x
    out[r + 2, c] += s * y
    out[r + 2, c + 1] -= s * x


@njit(cache=True, fastmath={'contract'})
def Coriolis_C(model, ws, wc, q, qd, C):
    """
    Compute C(q, qd) with C qd = c(q, qd) and dM/dt - 2C skew-symmetric (Christoffel-consistent).

    Echeandia & Wensing's body-level factorization, in world coordinates: C = sum over bodies b
    of J_b^T (B_b J_b + I_b dJ_b/dt) with B_b = (v_b x* I_b - I_b v_b x + (I_b v_b) xbar) / 2,
    evaluated in O(n^2) with composite I and B: for k an ancestor of i (or i),
    C[i, k] = S_i . (Bc_i S_k + Ic_i dS_k) = (Bc_i^T S_i) . S_k + (Ic_i S_i) . dS_k and
    C[k, i] = S_k . (Bc_i S_i + Ic_i dS_i), where dS_k = v_k x S_k is the motion subspace's rate
    of change in world coordinates: three 6-vectors per joint, two dot products per pair.
    """
    n = C.shape[0]
    parent, jtype, S, Xtree, axis, I, _, _ = _model(model, n)
    Xup, _, _, _, _ = _ws_rnea(ws, n)
    X0 = _view(wc, 0, (n, 4, 3))
    SSv = _view(wc, 12 * n, (3, n, 6))
    Sw, Sd, v = SSv[0], SSv[1], SSv[2]
    Ic = _view(wc, 30 * n, (n, 4, 4))          # world-frame inertias as [Ibar h; h^T m]
    Bc = _view(wc, 46 * n, (n, 6, 6))
    M3 = _view(wc, 82 * n, (3, 6, 6))
    I6, P, T = M3[0], M3[1], M3[2]
    for i in range(n):
        jcalc(Xup[i], jtype[i], axis[i], q[i], Xtree[i])
        p = int(parent[i])
        E, r = Xup[i], Xup[i, 3]
        # X0[i] = Xup[i] X0[p]: world -> body i, kept as [E; r] (r: origin of i in world)
        for a in range(3):
            for b in range(3):
                if p < 0:
                    X0[i, a, b] = E[a, b]
                else:
                    s = 0.0
                    for k in range(3):
                        s += E[a, k] * X0[p, k, b]
                    X0[i, a, b] = s
        for a in range(3):
            if p < 0:
                X0[i, 3, a] = r[a]
            else:
                s = X0[p, 3, a]
                for k in range(3):
                    s += X0[p, k, a] * r[k]
                X0[i, 3, a] = s
        # S in world coordinates: w = E^T w_i, u = E^T u_i + r x w
        E0, r0 = X0[i], X0[i, 3]
        for a in range(3):
            Sw[i, a] = E0[0, a] * S[i, 0] + E0[1, a] * S[i, 1] + E0[2, a] * S[i, 2]
            Sw[i, a + 3] = E0[0, a] * S[i, 3] + E0[1, a] * S[i, 4] + E0[2, a] * S[i, 5]
        Sw[i, 3] += r0[1] * Sw[i, 2] - r0[2] * Sw[i, 1]
        Sw[i, 4] += r0[2] * Sw[i, 0] - r0[0] * Sw[i, 2]
        Sw[i, 5] += r0[0] * Sw[i, 1] - r0[1] * Sw[i, 0]
        for k in range(6):
            v[i, k] = (0.0 if p < 0 else v[p, k]) + Sw[i, k] * qd[i]
            Sd[i, k] = 0.0
        crm_add(Sd[i], v[i], Sw[i], 1.0)                               # dS = v x S
        # the body's inertia in world coordinates (X0^T I X0) from its parameters: rotated,
        # Ibar' = E^T Ibar E and h' = E^T h; moved to the world origin (r from it),
        # Ibar_w = Ibar' + (h'.r) 1 - r h'^T + (r.h') 1 - h' r^T + m (|r|^2 1 - r r^T),
        # h_w = h' + m r
        Ib, m = I[i], I[i, 3, 3]
        Iw = Ic[i]
        for a in range(3):
            s = 0.0
            for k in range(3):
                s += E0[k, a] * Ib[k, 3]
            Iw[a, 3] = s                                                # h' = E^T h
        for a in range(3):
            for b in range(3):
                T[a, b] = Ib[a, 0] * E0[0, b] + Ib[a, 1] * E0[1, b] + Ib[a, 2] * E0[2, b]
        hr = Iw[0, 3] * r0[0] + Iw[1, 3] * r0[1] + Iw[2, 3] * r0[2]
        rr = r0[0] * r0[0] + r0[1] * r0[1] + r0[2] * r0[2]
        for a in range(3):
            for b in range(3):
                Iw[a, b] = (E0[0, a] * T[0, b] + E0[1, a] * T[1, b] + E0[2, a] * T[2, b]
                            - r0[a] * Iw[b, 3] - Iw[a, 3] * r0[b] - m * r0[a] * r0[b])
            Iw[a, a] += 2.0 * hr + m * rr
        for a in range(3):
            Iw[a, 3] += m * r0[a]
            Iw[3, a] = Iw[a, 3]
        Iw[3, 3] = m
        # B = (crf(v) I - I crm(v) + fbar(I v)) / 2 = -(P + P^T) / 2 + fbar(h) / 2, P = I crm(v)
        inertia6(I6, Iw)
        w0, w1, w2, u0, u1, u2 = v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5]
        for a in range(6):
            # columns of crm(v) = [wx 0; ux wx]: P[:, b] = I6 crm(v)[:, b]
            x0, x1, x2, x3, x4, x5 = I6[a, 0], I6[a, 1], I6[a, 2], I6[a, 3], I6[a, 4], I6[a, 5]
            P[a, 0] = x1 * w2 - x2 * w1 + x4 * u2 - x5 * u1
            P[a, 1] = -x0 * w2 + x2 * w0 - x3 * u2 + x5 * u0
            P[a, 2] = x0 * w1 - x1 * w0 + x3 * u1 - x4 * u0
            P[a, 3] = x4 * w2 - x5 * w1
            P[a, 4] = -x3 * w2 + x5 * w0
            P[a, 5] = x3 * w1 - x4 * w0
        for a in range(6):
            for b in range(6):
                Bc[i, a, b] = -0.5 * (P[a, b] + P[b, a])
        h = T[3]                                                         # I v (force)
        Imul(h, Iw, v[i])
        # + fbar(h) / 2, fbar(f) v = v x* f:  [-n x, -f x; -f x, 0] for h = [n; f]
        _minus_skew_add(Bc[i], 0, 0, h[0], h[1], h[2], 0.5)
        _minus_skew_add(Bc[i], 0, 3, h[3], h[4], h[5], 0.5)
        _minus_skew_add(Bc[i], 3, 0, h[3], h[4], h[5], 0.5)
    for i in range(n - 1, -1, -1):                                      # composites
        p = int(parent[i])
        if p >= 0:
            for a in range(4):
                for b in range(4):
                    Ic[p, a, b] += Ic[i, a, b]
            for a in range(6):
                for b in range(6):
                    Bc[p, a, b] += Bc[i, a, b]
    F, G, t = T[0], T[1], T[2]
    for i in range(n):
        # F = Bc_i^T S_i, G = Bc_i S_i + Ic_i dS_i, t = Ic_i S_i
        Imul(G, Ic[i], Sd[i])
        Imul(t, Ic[i], Sw[i])
        for a in range(6):
            s, g = 0.0, G[a]
            for k in range(6):
                s += Bc[i, k, a] * Sw[i, k]
                g += Bc[i, a, k] * Sw[i, k]
            F[a], G[a] = s, g
        k = i
        while k >= 0:
            C[i, k] = dot6(F, Sw[k]) + dot6(t, Sd[k])                   # S_i . (Bc_i S_k + ..)
            if k != i:
                C[k, i] = dot6(Sw[k], G)                                # S_k . (Bc_i S_i + ..)
            k = int(parent[k])
    # entries between joints on different branches stay zero
    return 0


@njit(cache=True, fastmath={'contract'})
def momentum(model, ws, q, qd, p, beta):
    """
    Compute the generalized momentum p = M(q) qd without M: S_i . (subtree's I v).

    With ``beta``, also the momentum observer's beta = g(q) - C(q, qd)^T qd in the same O(n)
    sweep: C^T qd = sum over bodies of dJ_b^T I_b v_b (the body factorization's B_b^T v_b is
    zero), so (C^T qd)_i = (v_i x S_i) . (subtree's I v), and g_i = S_i . (subtree's I a_g).
    """
    n = p.shape[0]
    parent, jtype, S, Xtree, axis, I, armature, a_grav = _model(model, n)
    Xup, v, a, h, t = _ws_rnea(ws, n)
    _, f, _, _, _, _, _ = _ws_aba(ws, n)
    for k in range(6):
        t[0, k] = -a_grav[k]
    for i in range(n):
        jcalc(Xup[i], jtype[i], axis[i], q[i], Xtree[i])
        pp = int(parent[i])
        body_velocity(v, i, pp, Xup, S, qd)         # v[i] = Xup[i] v[pp] + S[i] qd[i]
        Imul(h[i], I[i], v[i])                                          # h = I v
        if beta is not None:
            Xmotion(a[i], Xup[i], t[0] if pp < 0 else a[pp])            # a_g = Xup a_g[p]
            Imul(f[i], I[i], a[i])                                      # f = I a_g
    for i in range(n - 1, -1, -1):
        p[i] = dot6(S[i], h[i]) + armature[i] * qd[i]
        if beta is not None:
            for k in range(6):
                t[1, k] = 0.0
            crm_add(t[1], v[i], S[i], 1.0)                              # dS = v x S
            beta[i] = dot6(S[i], f[i]) - dot6(t[1], h[i])
        pp = int(parent[i])
        if pp >= 0:
            XTforce_add(h[pp], Xup[i], h[i])
            if beta is not None:
                XTforce_add(f[pp], Xup[i], f[i])


# ---- entry points: check shapes, run; batches loop in compiled code ----------------------------
# Explicit signatures: compiled (or loaded from numba's cache) on the first call
# (``entry_point``), and a call with other types (a list, int64, a strided view, ...) raises
# TypeError at once (``_bind``) instead of compiling; the wrappers in algorithms.py then convert
# and call again.

_V = {d: types.Array(types.float64, d, 'C') for d in (1, 2, 3)}


def _sig(*dims, ret=types.void):
    return ret(_V[1], *[_V[d] for d in dims])


ENTRY_POINTS = {}       # name -> (python function, signature) of every entry point


def entry_point(signature):
    """
    Declare an entry point compiled for ``signature`` on its first call, not at import.

    Until then the module attribute is a stub; the first call compiles (or loads from numba's
    cache) the kernel and rebinds the attribute (of the module that defines it, which may be
    another layer's: ``fn.__globals__``) to the compiled dispatcher, so later calls pay nothing
    for the laziness. Names are unique across modules. A node then compiles only what its mode
    uses (seconds each on a fresh install); ``compile_kernels`` compiles a given list (all by
    default, of the modules imported).
    """
    def declare(fn):
        ENTRY_POINTS[fn.__name__] = (fn, signature)

        def stub(*args):
            return compile_kernels([fn.__name__])[0](*args)
        stub.__name__ = stub.__qualname__ = fn.__name__
        stub.__doc__ = fn.__doc__
        return stub
    return declare


def _from_cache(name):
    """
    Return the entry point ``name`` loaded from numba's cache, or None when the cache lacks it.

    This is what numba's ``Dispatcher.compile`` does on a cache hit, minus its first step:
    ``load_overload`` first refreshes the target context, which imports and registers every
    implementation numba has (0.25-0.35 s here, measured; the whole load of a node's kernels
    took 0.27-0.41 s, now ~0.05 s). Running machine code from the cache needs only numba's
    runtime (NRT, 0.03 s); a later compile refreshes the context as usual. With other numba
    internals than 0.5x-0.6x's (an AttributeError) this returns None and the caller takes
    numba's own path.
    """
    fn, signature = ENTRY_POINTS[name]
    kernel = njit(cache=True)(fn)
    if not load_overload(kernel, signature):
        return None
    kernel.disable_compile()        # as after njit([signature]): other types raise TypeError
    return kernel


def load_overload(dispatcher, signature):
    """
    Load ``dispatcher``'s machine code for ``signature`` (argument types) from numba's cache.

    Return whether it is loaded (or was already). Without numba's first step, the target
    context's refresh (see ``_from_cache``); the dispatcher's own ``njit(cache=True)``. False
    when the cache lacks it or numba's internals differ: a call then takes numba's own path.
    """
    # numba's cache is keyed by the signature as given to compile (entry points: a Signature;
    # a call: the tuple of argument types), its overloads by the argument types
    args, _ = normalize_signature(signature)
    if tuple(args) in dispatcher.overloads:
        return True
    ctx = dispatcher.targetctx
    try:
        with global_compiler_lock:
            cres = cached_result(dispatcher, signature, ctx)
            if cres is None:
                return False
            ctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
            dispatcher.add_overload(cres)
    except AttributeError:
        return False
    return True


def cached_result(function, signature, ctx):
    """
    Return numba's compile result for ``function`` (a dispatcher or a cfunc) from its cache.

    Without the target context's refresh (see ``_from_cache``); None when the cache lacks it.
    Numba's internals as 0.5x-0.6x have them: another numba raises AttributeError, which the
    callers take for "not cached" (numba's own path then).
    """
    with global_compiler_lock:
        rtsys.initialize(ctx)
        return function._cache._load_overload(signature, ctx)


def load_overload_for(dispatcher, args):
    """``load_overload`` for the types numba gives ``args`` (as a call with them would)."""
    return load_overload(dispatcher, tuple(dispatcher.typeof_pyval(a) for a in args))


def _loaded(name):
    """Return the compiled entry point ``name`` (loading it from the cache now), or None."""
    fn = ENTRY_POINTS[name][0]
    kernel = fn.__globals__[name]
    if not isinstance(kernel, Dispatcher):
        kernel = _from_cache(name)
        if kernel is not None:
            _bind(name, kernel)
    return kernel


def compile_kernels(names=None):
    """Compile (or load from the cache) the entry points ``names`` (all); return them."""
    out = []
    for name in ENTRY_POINTS if names is None else names:
        kernel = _loaded(name)
        if kernel is None:
            fn, signature = ENTRY_POINTS[name]
            kernel = _bind(name, njit([signature], cache=True)(fn))
        out.append(kernel)
    return out


def _refused(*args, **kws):
    raise TypeError('arguments not of the types of the compiled signature')


def _bind(name, kernel):
    """
    Make ``kernel`` the entry point ``name`` (rebind the defining module's attribute); return it.

    A call with other types than the signature's must be refused fast: the wrappers in
    algorithms.py try the kernel first and convert only on a TypeError (a batch, a list, ints).
    Numba explains a refusal by typing every argument in Python twice, first looking for
    conversions to register, then for its message: 144 us for a batch given to ``rnea_one``
    (measured, 0.14 us a point of a 1000-point batch). The callers convert to the exact types
    themselves (an int time included: observer_step), so no conversion is looked for; the
    refusal is a plain TypeError (1.4 us).
    """
    kernel._search_new_conversions = lambda *args, **kws: False
    kernel._explain_matching_error = _refused
    ENTRY_POINTS[name][0].__globals__[name] = kernel
    return kernel


def load_cached(names):
    """
    Load those of the entry points ``names`` that numba's cache holds; return the others.

    Nothing compiles here: an entry point missing from the cache (a fresh install) is returned
    for the caller to compile now, or elsewhere with ``compile_in_background``.
    """
    return [name for name in names if _loaded(name) is None]


def compile_in_background(names, done):
    """
    Compile the entry points ``names`` in a child process, then load them here from the cache.

    Compiling in this process, even on another thread, holds the GIL for up to 0.27 s at a time
    (measured): a control loop would stall. The child fills numba's cache on the other core; a
    thread here waits for it and loads the kernels (ms; it compiles them itself only if the
    child failed or the cache is not writable). Then ``done(seconds, error)`` is called on that
    thread, ``error`` the child's last words or None. Returns the child (``Popen``): kill it
    to abandon (``done`` is then not called).
    """
    t0 = time.monotonic()
    modules = sorted({ENTRY_POINTS[name][0].__module__ for name in names})  # they register them
    child = subprocess.Popen(
        [sys.executable, '-c', 'import importlib, sys; '
                               f'from {__name__} import compile_kernels; '
                               f'[importlib.import_module(m) for m in {modules!r}]; '
                               'compile_kernels(sys.argv[1:])', *names],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def wait():
        _, err = child.communicate()
        if child.returncode < 0:    # killed: abandoned
            return
        error = (err.decode(errors='replace').strip().splitlines() or ['?'])[-1] \
            if child.returncode else None
        compile_kernels(names)
        done(time.monotonic() - t0, error)
    threading.Thread(target=wait, name='compile ' + ' '.join(names), daemon=True).start()
    return child


@njit(cache=True, inline='always')
def _check(n, x):
    if x.shape[-1] != n:
        raise ValueError('state arrays must have the length of the model (its joint count)')


@njit(cache=True, inline='always')
def _check_dims(x, rows, cols):
    if x.shape[-2] != rows or x.shape[-1] != cols:
        raise ValueError('f_ext must be (n, 6) and H (n, n)')


@njit(cache=True, inline='always')
def _check_batch(x, y):
    if x.shape[0] != y.shape[0]:
        raise ValueError('batch arrays must have the same length')


@njit(cache=True, inline='always')
def _row(x, k):
    """x[k] of a C-contiguous batch, as a view that costs nothing."""
    return _view(x, k * (x.size // x.shape[0]), x.shape[1:])


@entry_point(_sig(1, 1, 1, 2, 1))
def rnea_one(data, q, qd, qdd, f_ext, tau):
    n, model, ws, _ = split_data(data)
    _check(n, q), _check(n, qd), _check(n, qdd), _check(n, tau), _check_dims(f_ext, n, 6)
    ID(model, ws, q, qd, qdd, f_ext, tau)


@entry_point(_sig(1, 1))
def gravity_one(data, q, tau):
    n, model, ws, _ = split_data(data)
    _check(n, q), _check(n, tau)
    ID(model, ws, q, None, None, None, tau)


@entry_point(_sig(1, 2))
def crba_one(data, q, H):
    n, model, ws, _ = split_data(data)
    _check(n, q), _check_dims(H, n, n)
    HandC_H(model, ws, q, H)


@entry_point(_sig(1, 1, 1, 2, 1, ret=types.int64))
def aba_one(data, q, qd, tau, f_ext, qdd):
    n, model, ws, _ = split_data(data)
    _check(n, q), _check(n, qd), _check(n, tau), _check(n, qdd), _check_dims(f_ext, n, 6)
    return FDab(model, ws, q, qd, tau, f_ext, qdd)


@entry_point(_sig(1, 1, 2))
def coriolis_one(data, q, qd, C):
    n, model, ws, wc = split_data(data)
    _check(n, q), _check(n, qd), _check_dims(C, n, n)
    for i in range(n):
        for j in range(n):
            C[i, j] = 0.0
    Coriolis_C(model, ws, wc, q, qd, C)


@entry_point(_sig(1, 1, 1))
def momentum_one(data, q, qd, p):
    n, model, ws, _ = split_data(data)
    _check(n, q), _check(n, qd), _check(n, p)
    momentum(model, ws, q, qd, p, None)


@entry_point(_sig(1, 1, 1, 1))
def momentum_beta_one(data, q, qd, p, beta):
    n, model, ws, _ = split_data(data)
    _check(n, q), _check(n, qd), _check(n, p), _check(n, beta)
    momentum(model, ws, q, qd, p, beta)


@entry_point(_sig(2, 2, 2, 3, 2))
def rnea_batch(data, q, qd, qdd, f_ext, tau):
    n, model, ws, _ = split_data(data)
    _check(n, q), _check(n, qd), _check(n, qdd), _check(n, tau), _check_dims(f_ext, n, 6)
    _check_batch(q, qd), _check_batch(q, qdd), _check_batch(q, tau)
    _check_batch(q, f_ext)
    for k in range(q.shape[0]):
        ID(model, ws, _row(q, k), _row(qd, k), _row(qdd, k), _row(f_ext, k), _row(tau, k))


@entry_point(_sig(2, 2))
def gravity_batch(data, q, tau):
    n, model, ws, _ = split_data(data)
    _check(n, q), _check(n, tau), _check_batch(q, tau)
    for k in range(q.shape[0]):
        ID(model, ws, _row(q, k), None, None, None, _row(tau, k))


@entry_point(_sig(2, 3))
def crba_batch(data, q, H):
    n, model, ws, _ = split_data(data)
    _check(n, q), _check_dims(H, n, n), _check_batch(q, H)
    for k in range(q.shape[0]):
        HandC_H(model, ws, _row(q, k), _row(H, k))


@entry_point(_sig(2, 2, 2, 3, 2, ret=types.int64))
def aba_batch(data, q, qd, tau, f_ext, qdd):
    n, model, ws, _ = split_data(data)
    _check(n, q), _check(n, qd), _check(n, tau), _check(n, qdd), _check_dims(f_ext, n, 6)
    _check_batch(q, qd), _check_batch(q, tau), _check_batch(q, qdd)
    _check_batch(q, f_ext)
    for k in range(q.shape[0]):
        singular = FDab(model, ws, _row(q, k), _row(qd, k), _row(tau, k), _row(f_ext, k),
                        _row(qdd, k))
        if singular:
            return singular
    return 0
