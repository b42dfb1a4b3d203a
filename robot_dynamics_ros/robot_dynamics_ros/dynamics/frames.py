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
Frames: where a link is, its Jacobian, its bias acceleration and its operational-space inertia.

Every URDF link is a frame (``model.frames``), those merged into a body through fixed joints
(``tool0``, ``panda_hand``) included; a frame is fixed to one body (or to the fixed base).

Task-space vectors are a Twist's order: ``[v_x, v_y, v_z, w_x, w_y, w_z]`` (Pinocchio's), not
Featherstone's ``[angular; linear]`` that the kernels use inside. ``reference`` has Pinocchio's
meanings:

- ``local``: the frame's own axes, the velocity of the frame's origin;
- ``local_world_aligned`` (default): the root link's axes, the velocity of the frame's origin;
- ``world``: the root link's axes, the velocity of the body's point at the root's origin (the
  spatial velocity).

``frame_bias_acceleration`` is J-dot q-dot: the frame's classical acceleration (the origin's
acceleration, and the angular acceleration) when q-ddot = 0 and without gravity, as Pinocchio's
``getFrameClassicalAcceleration`` after ``forwardKinematics(q, qd, 0)``. In ``local_world_aligned``
it is the time derivative of ``J q-dot``: what operational-space control subtracts.

``operational_space_inertia`` is Lambda = (J M^-1 J^T)^-1 with Tikhonov damping near a
singularity, (J M^-1 J^T + mu 1)^-1: there J M^-1 J^T loses rank and Lambda would grow without
bound along the lost direction; with ``mu`` it stays below 1/mu (kg for translation, kg m^2 for
rotation: mu has the units of the inverse, 1/kg). How near: ``singularity_ratio``, the ratio of
the smallest to the largest squared pivot of the Cholesky factor of J M^-1 J^T scaled to a unit
diagonal: scaled so, the measure does not depend on the units of its rows (its translational
rows are in 1/kg, its rotational ones in 1/(kg m^2): unscaled, 456 of 2527 poses of ur10 with
cond J < 100 counted as near a singularity, and Lambda was damped there by up to 0.3 %). Below
SINGULAR_RATIO the damping is mu (1 - ratio / SINGULAR_RATIO)^2, above it none: the exact
inverse. A given ``damping`` is Tikhonov's with that mu at every pose.
"""
import math

import numpy as np
from numba import njit, types

from .algorithms import _state, crba
from .kernels import _model, _view, _ws_rnea, body_velocity, entry_point, split_data
from .spatial import Xmotion, crm_add, jcalc

REFERENCES = ('world', 'local', 'local_world_aligned')
WORLD, LOCAL, LOCAL_WORLD_ALIGNED = 0, 1, 2
DEFAULT_DAMPING = 1e-6          # mu of the damped Lambda (1/kg): see the module doc
# below this singularity_ratio Lambda is damped. Measured (5000 random poses each): with cond J
# < 100 the ratio is at least 3.8e-5 (ur10), 5.7e-5 (xarm7), 5.6e-4 (kinova), 4.6e-3 (z1); ur5 at
# a working pose with wrist_2 0.01 rad from its singularity 6.3e-4, 1e-3 rad 6.4e-6
SINGULAR_RATIO = 1e-5
_empty = np.empty


@njit(cache=True, inline='always')
def _ws_frames(wc, n):
    """X0 (world -> body, [E; r]), v, a (no gravity, qdd = 0), chain: views into the scratch."""
    return (_view(wc, 0, (n, 4, 3)), _view(wc, 12 * n, (n, 6)), _view(wc, 18 * n, (n, 6)),
            _view(wc, 24 * n, (n,)))


@njit(cache=True, fastmath={'contract'})
def FrameKin(model, ws, wc, q, qd, F, T, J, acc):
    """
    Pose ``T`` (4x4), Jacobian ``J`` (6 x n) and bias acceleration ``acc`` (6) of a frame.

    ``F`` describes the frame and the reference (``descriptor``): it is fixed to ``body`` (-1:
    the fixed base) at ``Xf`` = [E; r] (body -> frame). Only the bodies from the root to
    ``body`` are visited. ``qd``, ``J``, ``acc`` may be None.
    """
    n = q.shape[0]
    Xf, body, ref = F[:4], int(F[4, 0]), int(F[4, 1])
    parent, jtype, S, Xtree, axis, _, _, _ = _model(model, n)
    Xup = _ws_rnea(ws, n)[0]
    X0, v, a, chain = _ws_frames(wc, n)
    m = 0
    i = body
    while i >= 0:                                       # the chain, body first
        chain[m] = i
        m += 1
        i = int(parent[i])
    for k in range(m - 1, -1, -1):                      # root to body
        i = int(chain[k])
        jcalc(Xup[i], jtype[i], axis[i], q[i], Xtree[i])
        p = int(parent[i])
        E, r = Xup[i], Xup[i, 3]
        if p < 0:
            for c in range(4):
                X0[i, c, 0], X0[i, c, 1], X0[i, c, 2] = E[c, 0], E[c, 1], E[c, 2]
        else:                                           # X0[i] = Xup[i] X0[p]
            P = X0[p]
            for c in range(3):
                e0, e1, e2 = E[c, 0], E[c, 1], E[c, 2]
                X0[i, c, 0] = e0 * P[0, 0] + e1 * P[1, 0] + e2 * P[2, 0]
                X0[i, c, 1] = e0 * P[0, 1] + e1 * P[1, 1] + e2 * P[2, 1]
                X0[i, c, 2] = e0 * P[0, 2] + e1 * P[1, 2] + e2 * P[2, 2]
            r0, r1, r2 = r[0], r[1], r[2]
            X0[i, 3, 0] = P[3, 0] + P[0, 0] * r0 + P[1, 0] * r1 + P[2, 0] * r2
            X0[i, 3, 1] = P[3, 1] + P[0, 1] * r0 + P[1, 1] * r1 + P[2, 1] * r2
            X0[i, 3, 2] = P[3, 2] + P[0, 2] * r0 + P[1, 2] * r1 + P[2, 2] * r2
        if qd is not None and acc is not None:
            # v[i] = Xup[i] v[p] + S[i] qd[i];  a[i] = Xup[i] a[p] + v[i] x S[i] qd[i]
            # (a[base] = 0: the frame's acceleration from qd alone, no gravity)
            body_velocity(v, i, p, Xup, S, qd)
            if p < 0:
                for c in range(6):
                    a[i, c] = 0.0
            else:
                Xmotion(a[i], Xup[i], a[p])
            crm_add(a[i], v[i], S[i], qd[i])
    # the frame: Ef = E_f E0[body] (world -> frame), rf its origin in world coordinates
    # T[:3, :3] = Ef^T (frame axes in world coordinates), T[:3, 3] = rf
    if body < 0:
        for c in range(3):
            T[c, 0], T[c, 1], T[c, 2], T[c, 3] = Xf[0, c], Xf[1, c], Xf[2, c], Xf[3, c]
    else:
        B = X0[body]
        for c in range(3):
            f0, f1, f2 = Xf[c, 0], Xf[c, 1], Xf[c, 2]
            T[0, c] = f0 * B[0, 0] + f1 * B[1, 0] + f2 * B[2, 0]
            T[1, c] = f0 * B[0, 1] + f1 * B[1, 1] + f2 * B[2, 1]
            T[2, c] = f0 * B[0, 2] + f1 * B[1, 2] + f2 * B[2, 2]
        x0, x1, x2 = Xf[3, 0], Xf[3, 1], Xf[3, 2]
        for c in range(3):
            T[c, 3] = B[3, c] + B[0, c] * x0 + B[1, c] * x1 + B[2, c] * x2
    T[3, 0], T[3, 1], T[3, 2], T[3, 3] = 0.0, 0.0, 0.0, 1.0
    R = T          # R[c, d] = (Ef^T)[c, d]: frame axes in world coordinates, as columns
    if J is not None:
        for c in range(6):
            for d in range(n):
                J[c, d] = 0.0
        px, py, pz = (0.0, 0.0, 0.0) if ref == WORLD else (T[0, 3], T[1, 3], T[2, 3])
        for k in range(m):
            i = int(chain[k])
            E0, o = X0[i], X0[i, 3]
            zx = E0[0, 0] * axis[i, 0] + E0[1, 0] * axis[i, 1] + E0[2, 0] * axis[i, 2]
            zy = E0[0, 1] * axis[i, 0] + E0[1, 1] * axis[i, 1] + E0[2, 1] * axis[i, 2]
            zz = E0[0, 2] * axis[i, 0] + E0[1, 2] * axis[i, 1] + E0[2, 2] * axis[i, 2]
            if jtype[i] == 1:                           # prismatic: [z; 0]
                lx, ly, lz, wx, wy, wz = zx, zy, zz, 0.0, 0.0, 0.0
            else:                                       # revolute: [z x (P - o); z]
                dx, dy, dz = px - o[0], py - o[1], pz - o[2]
                lx, ly, lz = zy * dz - zz * dy, zz * dx - zx * dz, zx * dy - zy * dx
                wx, wy, wz = zx, zy, zz
            if ref == LOCAL:                            # world axes -> frame axes: Ef = R^T
                for c in range(3):
                    J[c, i] = R[0, c] * lx + R[1, c] * ly + R[2, c] * lz
                    J[c + 3, i] = R[0, c] * wx + R[1, c] * wy + R[2, c] * wz
            else:
                J[0, i], J[1, i], J[2, i], J[3, i], J[4, i], J[5, i] = lx, ly, lz, wx, wy, wz
    if qd is not None and acc is not None:
        t = _ws_rnea(ws, n)[4]                          # 2x6 scratch: vf, af
        if body < 0:
            for c in range(6):
                acc[c] = 0.0
            return
        Xmotion(t[0], Xf, v[body])                      # the frame's spatial velocity, frame axes
        Xmotion(t[1], Xf, a[body])
        if ref == LOCAL:
            for c in range(3):
                acc[c] = t[1, 3 + c]
                acc[c + 3] = t[1, c]
            wx, wy, wz, vx, vy, vz = t[0, 0], t[0, 1], t[0, 2], t[0, 3], t[0, 4], t[0, 5]
        else:                                           # to world axes
            for c in range(3):
                acc[c] = R[c, 0] * t[1, 3] + R[c, 1] * t[1, 4] + R[c, 2] * t[1, 5]
                acc[c + 3] = R[c, 0] * t[1, 0] + R[c, 1] * t[1, 1] + R[c, 2] * t[1, 2]
            wx = R[0, 0] * t[0, 0] + R[0, 1] * t[0, 1] + R[0, 2] * t[0, 2]
            wy = R[1, 0] * t[0, 0] + R[1, 1] * t[0, 1] + R[1, 2] * t[0, 2]
            wz = R[2, 0] * t[0, 0] + R[2, 1] * t[0, 1] + R[2, 2] * t[0, 2]
            vx = R[0, 0] * t[0, 3] + R[0, 1] * t[0, 4] + R[0, 2] * t[0, 5]
            vy = R[1, 0] * t[0, 3] + R[1, 1] * t[0, 4] + R[1, 2] * t[0, 5]
            vz = R[2, 0] * t[0, 3] + R[2, 1] * t[0, 4] + R[2, 2] * t[0, 5]
            if ref == WORLD:        # the body's point at the root's origin: + r x w, + r x dw
                px, py, pz = T[0, 3], T[1, 3], T[2, 3]
                vx, vy, vz = vx + py * wz - pz * wy, vy + pz * wx - px * wz, \
                    vz + px * wy - py * wx
                ax, ay, az = acc[3], acc[4], acc[5]
                acc[0] += py * az - pz * ay
                acc[1] += pz * ax - px * az
                acc[2] += px * ay - py * ax
        # classical acceleration: + w x v
        acc[0] += wy * vz - wz * vy
        acc[1] += wz * vx - wx * vz
        acc[2] += wx * vy - wy * vx


# ---- entry points ------------------------------------------------------------------------------
# A frame and a reference travel as one 5x3 array F (``descriptor``): [E; r] of the frame in its
# body, then (body, reference, 0). Numba's dispatcher checks each argument of each call (~50 ns):
# one array instead of three arguments, and the pose in the scratch when not asked for.
_F1, _F2, _F3 = (types.Array(types.float64, d, 'C') for d in (1, 2, 3))


@njit(cache=True, inline='always')
def _check_frame(n, q, F):
    if q.shape[-1] != n:
        raise ValueError('q must have the length of the model (its joint count)')
    if F.shape[0] != 5 or F.shape[1] != 3 or not -1 <= F[4, 0] < n or not 0 <= F[4, 1] <= 2:
        raise ValueError('not a frame descriptor of this model')


@njit(cache=True, inline='always')
def _check_out(x, rows, cols):
    if x.shape[-2] != rows or x.shape[-1] != cols:
        raise ValueError('the output has the wrong shape')


@njit(cache=True, inline='always')
def _pose_scratch(wc, n):
    return _view(wc, 25 * n, (4, 4))


@entry_point(types.void(_F1, _F1, _F2, _F2))
def placement_one(data, q, F, T):
    n, model, ws, wc = split_data(data)
    _check_frame(n, q, F), _check_out(T, 4, 4)
    FrameKin(model, ws, wc, q, None, F, T, None, None)


@entry_point(types.void(_F1, _F2, _F2, _F3))
def placement_batch(data, q, F, T):
    n, model, ws, wc = split_data(data)
    _check_frame(n, q, F), _check_out(T, 4, 4)
    if T.shape[0] != q.shape[0]:
        raise ValueError('batch arrays must have the same length')
    for k in range(q.shape[0]):
        FrameKin(model, ws, wc, q[k], None, F, T[k], None, None)


@entry_point(types.void(_F1, _F1, _F2, _F2))
def jacobian_one(data, q, F, J):
    n, model, ws, wc = split_data(data)
    _check_frame(n, q, F), _check_out(J, 6, n)
    FrameKin(model, ws, wc, q, None, F, _pose_scratch(wc, n), J, None)


@entry_point(types.void(_F1, _F2, _F2, _F3))
def jacobian_batch(data, q, F, J):
    n, model, ws, wc = split_data(data)
    _check_frame(n, q, F), _check_out(J, 6, n)
    if J.shape[0] != q.shape[0]:
        raise ValueError('batch arrays must have the same length')
    for k in range(q.shape[0]):
        FrameKin(model, ws, wc, q[k], None, F, _pose_scratch(wc, n), J[k], None)


@entry_point(types.void(_F1, _F1, _F1, _F2, _F1))
def bias_acceleration_one(data, q, qd, F, acc):
    n, model, ws, wc = split_data(data)
    _check_frame(n, q, F)
    if qd.shape[0] != n or acc.shape[0] != 6:
        raise ValueError('qd must have the length of the model (its joint count)')
    FrameKin(model, ws, wc, q, qd, F, _pose_scratch(wc, n), None, acc)


# ---- the public functions ----------------------------------------------------------------------
def descriptor(model, frame, reference='local_world_aligned'):
    """
    Return the kernels' 5x3 array for a frame and a reference: [E; r], then (body, reference, 0).

    Made once per model, frame and reference (a dict lookup after that). KeyError for a link
    the model lacks, ValueError for an unknown reference.
    """
    try:
        return model._frames[frame, reference]
    except KeyError:
        pass
    except TypeError:                   # unhashable
        raise ValueError(f'frame must be a link name, got {frame!r}') from None
    if reference not in REFERENCES:
        raise ValueError(f'reference must be one of {REFERENCES}, got {reference!r}')
    body, Xf = model.frame(frame)
    F = np.zeros((5, 3))
    F[:4], F[4, 0], F[4, 1] = Xf, body, REFERENCES.index(reference)
    model._frames[frame, reference] = F
    return F


def _one(model, q, name):
    q = _state(model, q, name)
    if q.ndim != 1:
        raise ValueError(f'{name} must be one state ({model.n},), not a batch')
    return q


def frame_placement(model, q, frame):
    """
    Return the 4x4 homogeneous transform of ``frame`` in the root link's frame.

    ``q`` one state (n,) or a batch (K, n) (then (K, 4, 4)).
    """
    F = descriptor(model, frame)
    try:
        T = _empty((4, 4))
        placement_one(model._data, q, F, T)
        return T
    except (TypeError, ValueError):   # not the fast path's types or shapes: check below
        pass
    q = _state(model, q, 'q')
    T = np.empty(q.shape[:-1] + (4, 4))
    (placement_one if q.ndim == 1 else placement_batch)(model._data, q, F, T)
    return T


def frame_jacobian(model, q, frame, reference='local_world_aligned', out=None):
    """
    Return the 6 x n Jacobian of ``frame``, rows ``[v_x, v_y, v_z, w_x, w_y, w_z]``.

    ``reference``: ``world``, ``local`` or ``local_world_aligned`` (see the module doc). Columns
    of joints that do not move the frame are zero. A batch (K, n) gives (K, 6, n). ``out``: a
    C-contiguous float64 array of that shape to write into (a control loop's: no allocation).
    """
    try:
        J = _empty((6, model.n)) if out is None else out
        jacobian_one(model._data, q, model._frames[frame, reference], J)
        return J
    except (TypeError, ValueError, KeyError):   # not the fast path's: check below
        pass
    F = descriptor(model, frame, reference)
    q = _state(model, q, 'q')
    shape = q.shape[:-1] + (6, model.n)
    J = np.empty(shape) if out is None else out
    if not (isinstance(J, np.ndarray) and J.shape == shape and J.dtype == np.float64
            and J.flags.c_contiguous and J.flags.writeable):
        raise ValueError(f'out must be a writable C-contiguous float64 array of shape {shape}')
    (jacobian_one if q.ndim == 1 else jacobian_batch)(model._data, q, F, J)
    return J


def frame_bias_acceleration(model, q, qd, frame, reference='local_world_aligned'):
    """
    Return J-dot q-dot of ``frame`` (6,): its classical acceleration when q-ddot = 0.

    Linear part first; no gravity. See the module doc for ``reference``.
    """
    F = descriptor(model, frame, reference)
    q, qd = _one(model, q, 'q'), _one(model, qd, 'qd')
    acc = np.empty(6)
    bias_acceleration_one(model._data, q, qd, F, acc)
    return acc


def singularity_ratio(A):
    """
    Return how far the 6x6 J M^-1 J^T ``A`` is from singular: 1 far, 0 singular.

    The ratio of the smallest to the largest squared pivot of the Cholesky factor of A scaled to
    a unit diagonal (D^-1/2 A D^-1/2, D = diag A): the units of A's rows drop out. 0 when A is
    not positive definite.
    """
    d = np.diag(A)
    if not np.all(d > 0):
        return 0.0
    s = 1.0 / np.sqrt(d)
    try:
        p = np.diag(np.linalg.cholesky(A * s[:, None] * s[None, :])) ** 2
    except np.linalg.LinAlgError:
        return 0.0
    return float(p.min() / p.max())


def singularity_damping(ratio, mu=DEFAULT_DAMPING):
    """Return the damping (1/kg) at a singularity_ratio: 0 from SINGULAR_RATIO on, mu at 0."""
    return 0.0 if ratio >= SINGULAR_RATIO else mu * (1.0 - ratio / SINGULAR_RATIO) ** 2


def _operational(model, q, frame, damping):
    """Return (M^-1 J^T, Lambda as inverted) of ``frame``: what the two functions below use."""
    if damping is not None and not damping >= 0:
        raise ValueError(f'damping must be >= 0, got {damping}')
    J = frame_jacobian(model, q, frame)
    MJ = np.linalg.solve(crba(model, q), J.T)
    A = J @ MJ
    mu = singularity_damping(singularity_ratio(A)) if damping is None else damping
    return MJ, np.linalg.inv(A + mu * np.eye(6))


def operational_space_inertia(model, q, frame, damping=None):
    """
    Return Lambda = (J M^-1 J^T + mu 1)^-1 of ``frame`` (6x6, local_world_aligned).

    ``damping``: None, mu only near a singularity (the exact inverse elsewhere; see the module
    doc); or mu (1/kg, >= 0) at every pose. With mu = 0 at a singularity the inverse does not
    exist: numpy's LinAlgError.
    """
    Lam = _operational(model, q, frame, damping)[1]
    return 0.5 * (Lam + Lam.T)          # symmetric, as it is, whatever the rounding


def dynamically_consistent_inverse(model, q, frame, damping=None):
    """
    Return J-bar = M^-1 J^T Lambda (n x 6): the dynamically consistent pseudo-inverse of J.

    J J-bar = 1 (up to the damping); the torques (1 - J^T J-bar^T) tau_0 cause no acceleration
    of the frame. ``damping`` as in ``operational_space_inertia``.
    """
    MJ, Lam = _operational(model, q, frame, damping)
    return MJ @ Lam


def quaternion(R):
    """Return (x, y, z, w) of a rotation matrix (Shepperd's method: stable at any angle)."""
    m00, m11, m22 = R[0, 0], R[1, 1], R[2, 2]
    tr = m00 + m11 + m22
    if tr > 0.0:
        s = 2.0 * math.sqrt(tr + 1.0)
        return ((R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s,
                0.25 * s)
    if m00 >= m11 and m00 >= m22:
        s = 2.0 * math.sqrt(1.0 + m00 - m11 - m22)
        return (0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s,
                (R[2, 1] - R[1, 2]) / s)
    if m11 >= m22:
        s = 2.0 * math.sqrt(1.0 + m11 - m00 - m22)
        return ((R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s,
                (R[0, 2] - R[2, 0]) / s)
    s = 2.0 * math.sqrt(1.0 + m22 - m00 - m11)
    return ((R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s, (R[1, 0] - R[0, 1]) / s)
