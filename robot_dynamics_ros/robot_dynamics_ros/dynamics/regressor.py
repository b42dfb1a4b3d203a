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
The joint torque regressor: tau = Y(q, qd, qdd) pi, linear in the dynamic parameters pi.

The parameters of a model with n joints, in this order (``parameter_names``):

- per body j (10 n): ``m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz`` of the body,
  in its frame (the frame of the URDF child link of joint j), the inertia about that frame's
  origin (not the centre of mass): Pinocchio's ``Inertia.toDynamicParameters`` order. A body is
  everything rigidly attached below joint j through fixed joints: one parameter set for all of
  it, as the model merges those links (``model.py``).
- per joint i (4 n): viscous friction ``b`` (column qd_i), Coulomb friction ``fc`` (column
  tanh(qd_i / epsilon), the controller's smooth sign), ``armature`` (column qdd_i) and the
  torque ``offset`` (column 1): a torque sensor's bias, or a Coulomb friction that differs with
  the direction of motion (fc + offset forwards, fc - offset backwards: with a sign column
  the two describe the same torques, see ``RobotModel.torque_offset``).

``Regressor`` is the recursion of Atkeson, An & Hollerbach (1986) in spatial_v2's terms:
velocities and accelerations outward as in ``ID``; then for each body its 6x10 body regressor
``Yb`` (f_j = I_j a_j + v_j x* I_j v_j = Yb(v_j, a_j) pi_j) carried inward through its
ancestors, each joint i on the way taking the row S_i^T (X_j->i)^T Yb.
"""
import numpy as np
from numba import njit

from .algorithms import _states
from .kernels import _check, _check_batch, _model, _row, _sig, _view, _ws_rnea, entry_point, \
    forward_body, split_data
from .spatial import XTforce, dot6

_inline = njit(cache=True, inline='always', fastmath={'contract'})

_ONE = np.ones(1)
INERTIAL = ('m', 'mc_x', 'mc_y', 'mc_z', 'I_xx', 'I_xy', 'I_yy', 'I_xz', 'I_yz', 'I_zz')
JOINT = ('damping', 'friction', 'armature', 'offset')


@_inline
def _body_regressor(Yb, v, a):
    """
    Fill Yb (10 x 6, one spatial force [n; f] per parameter) with f = Yb^T pi = I a + v x* I v.

    With b = a_lin + w x v_lin:  n = Ibar alpha + w x Ibar w - b x h,
    f = m b + alpha x h + w x (w x h)   (I = [Ibar hx; hx^T m], h = m c).
    """
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    al0, al1, al2 = a[0], a[1], a[2]
    b0 = a[3] + w1 * u2 - w2 * u1
    b1 = a[4] + w2 * u0 - w0 * u2
    b2 = a[5] + w0 * u1 - w1 * u0
    for c in range(10):
        for k in range(6):
            Yb[c, k] = 0.0
    Yb[0, 3], Yb[0, 4], Yb[0, 5] = b0, b1, b2                    # m
    for k in range(3):                                           # h_k: e_k x b; alpha x e_k + ..
        e0, e1, e2 = (1.0 if k == 0 else 0.0), (1.0 if k == 1 else 0.0), (1.0 if k == 2 else 0.0)
        Yb[1 + k, 0] = e1 * b2 - e2 * b1
        Yb[1 + k, 1] = e2 * b0 - e0 * b2
        Yb[1 + k, 2] = e0 * b1 - e1 * b0
        x0, x1, x2 = w1 * e2 - w2 * e1, w2 * e0 - w0 * e2, w0 * e1 - w1 * e0   # w x e_k
        Yb[1 + k, 3] = al1 * e2 - al2 * e1 + w1 * x2 - w2 * x1
        Yb[1 + k, 4] = al2 * e0 - al0 * e2 + w2 * x0 - w0 * x2
        Yb[1 + k, 5] = al0 * e1 - al1 * e0 + w0 * x1 - w1 * x0
    # Ibar x = L(x) [Ixx Ixy Iyy Ixz Iyz Izz]: columns of L(alpha) + w x L(w)
    _inertia_column(Yb[4], al0, 0.0, 0.0, w0, 0.0, 0.0, w0, w1, w2)     # I_xx
    _inertia_column(Yb[5], al1, al0, 0.0, w1, w0, 0.0, w0, w1, w2)      # I_xy
    _inertia_column(Yb[6], 0.0, al1, 0.0, 0.0, w1, 0.0, w0, w1, w2)     # I_yy
    _inertia_column(Yb[7], al2, 0.0, al0, w2, 0.0, w0, w0, w1, w2)      # I_xz
    _inertia_column(Yb[8], 0.0, al2, al1, 0.0, w2, w1, w0, w1, w2)      # I_yz
    _inertia_column(Yb[9], 0.0, 0.0, al2, 0.0, 0.0, w2, w0, w1, w2)     # I_zz


@_inline
def _inertia_column(out, l0, l1, l2, m0, m1, m2, w0, w1, w2):
    """Set the moment of out to l + w x m (L(alpha) and L(w) columns l, m)."""
    out[0] = l0 + w1 * m2 - w2 * m1
    out[1] = l1 + w2 * m0 - w0 * m2
    out[2] = l2 + w0 * m1 - w1 * m0


@njit(cache=True, fastmath={'contract'})
def Regressor(model, ws, wc, q, qd, qdd, Y):
    """
    Fill Y (n x 10n) with the joint torque regressor of the bodies' inertial parameters.

    The forward pass is ``ID``'s; the backward pass carries each body's regressor to the root.
    """
    n = q.shape[0]
    parent, _, S, _, _, _, _, a_grav = _model(model, n)
    Xup, v, a, _, t = _ws_rnea(ws, n)
    Yb = _view(wc, 0, (10, 6))
    for k in range(6):
        t[0, k] = -a_grav[k]
    for i in range(n):
        forward_body(i, model, n, ws, q, qd, qdd, t[0])                 # Xup[i], v[i], a[i]
    for i in range(n):
        for c in range(10 * n):
            Y[i, c] = 0.0
    for j in range(n):
        _body_regressor(Yb, v[j], a[j])
        i = j
        while i >= 0:                                   # joint i takes S_i^T X^T Yb
            for c in range(10):
                Y[i, 10 * j + c] = dot6(S[i], Yb[c])
            p = int(parent[i])
            if p >= 0:
                for c in range(10):
                    XTforce(Yb[c], Xup[i], Yb[c])      # to the parent's frame
            i = p


@_inline
def _joint_columns(n, qd, qdd, eps, Y):
    """Fill the friction, armature and offset columns of Y (n x 14n) after the inertial ones."""
    for i in range(n):
        for c in range(10 * n, 14 * n):
            Y[i, c] = 0.0
        Y[i, 10 * n + i] = qd[i]
        Y[i, 11 * n + i] = np.tanh(qd[i] / eps)
        Y[i, 12 * n + i] = qdd[i]
        Y[i, 13 * n + i] = 1.0


@njit(cache=True, inline='always')
def _check_columns(n, Y):
    if Y.shape[-2] != n or (Y.shape[-1] != 10 * n and Y.shape[-1] != 14 * n):
        raise ValueError('Y must be (n, 10n) or (n, 14n)')


@entry_point(_sig(1, 1, 1, 1, 2))
def regressor_one(data, q, qd, qdd, eps, Y):
    n, model, ws, wc = split_data(data)
    _check(n, q), _check(n, qd), _check(n, qdd)
    _check_columns(n, Y)
    Regressor(model, ws, wc, q, qd, qdd, Y)
    if Y.shape[1] == 14 * n:
        _joint_columns(n, qd, qdd, eps[0], Y)


@entry_point(_sig(2, 2, 2, 1, 3))
def regressor_batch(data, q, qd, qdd, eps, Y):
    n, model, ws, wc = split_data(data)
    _check(n, q), _check(n, qd), _check(n, qdd)
    _check_batch(q, qd), _check_batch(q, qdd), _check_batch(q, Y)
    _check_columns(n, Y)
    for k in range(q.shape[0]):
        Yk = _row(Y, k)
        Regressor(model, ws, wc, _row(q, k), _row(qd, k), _row(qdd, k), Yk)
        if Y.shape[2] == 14 * n:
            _joint_columns(n, _row(qd, k), _row(qdd, k), eps[0], Yk)


# ---- Python side ------------------------------------------------------------------------------

def regressor(model, q, qd, qdd, friction_velocity_epsilon=None, out=None):
    """
    Return Y with tau = Y pi, for one state (n,) -> (n, P) or a batch (K, n) -> (K, n, P).

    Without ``friction_velocity_epsilon``: the 10 n inertial columns (Pinocchio's
    ``computeJointTorqueRegressor``); with it, also the 4 n friction, armature and offset
    columns (P = 14 n, see the module doc). ``out``: a preallocated array of that shape to fill.
    """
    n = model.n
    if out is not None and friction_velocity_epsilon is None and out.shape[-1] == 10 * n:
        try:        # the fast path: the kernel checks types and shapes itself
            regressor_one(model._data, q, qd, qdd, _ONE, out)
            return out
        except (TypeError, ValueError):
            pass
    q, qd, qdd = _states(model, q, (qd, 'qd'), (qdd, 'qdd'))
    P = 10 * n if friction_velocity_epsilon is None else 14 * n
    eps = np.array([1.0 if friction_velocity_epsilon is None
                    else float(friction_velocity_epsilon)])
    if not eps[0] > 0:
        raise ValueError(f'friction_velocity_epsilon must be > 0, got {eps[0]}')
    shape = q.shape + (P,)
    if out is None:
        out = np.empty(shape)
    elif out.shape != shape or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(f'out must be a C-contiguous float64 array of shape {shape}')
    (regressor_one if q.ndim == 1 else regressor_batch)(model._data, q, qd, qdd, eps, out)
    return out


def inertial_parameters(model):
    """Return the 10 n inertial parameters of the model's bodies (module doc's order)."""
    out = np.empty((model.n, 10))
    Ibar = model.I[:, :3, :3]
    out[:, 0] = model.mass
    out[:, 1:4] = model.h
    out[:, 4:] = Ibar[:, [0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]
    return out.ravel()


def parameters(model):
    """Return all 14 n parameters: inertial, then damping, friction, armature, offset per joint."""
    return np.concatenate([inertial_parameters(model), model.damping, model.friction,
                           model.armature, model.torque_offset])


def body_names(model):
    """Name each body by the URDF child link of its joint (its frame)."""
    if model.urdf_joints:
        return [child for _, _, child in model.urdf_joints]
    return [f'body{i}' for i in range(model.n)]


def parameter_names(model, joint_columns=True):
    """Names of the parameters, e.g. ``link2.mc_x`` and ``joint2.damping``."""
    names = [f'{b}.{p}' for b in body_names(model) for p in INERTIAL]
    if joint_columns:
        names += [f'{j}.{p}' for p in JOINT for j in model.joint_names]
    return names


def spatial_inertia(p):
    """
    Return the 6x6 spatial inertia [Ibar hx; hx^T m1] (about the frame origin) of 10 parameters.

    Linear in them (Featherstone eq. 2.63 with h = m c): defined for any p, consistent or not.
    """
    m, h = p[0], p[1:4]
    H = np.array([[0.0, -h[2], h[1]], [h[2], 0.0, -h[0]], [-h[1], h[0], 0.0]])
    out = np.zeros((6, 6))
    out[:3, :3] = [[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]]
    out[:3, 3:], out[3:, :3], out[3:, 3:] = H, H.T, m * np.eye(3)
    return out


def inertia_parameters(I):  # noqa: E741
    """Return the 10 parameters of a spatial inertia about the frame origin (the inverse)."""
    return np.array([I[5, 5], I[2, 4], I[0, 5], I[1, 3], I[0, 0], I[0, 1], I[1, 1], I[0, 2],
                     I[1, 2], I[2, 2]])


def with_parameters(model, pi):
    """
    Return the model with the parameters ``pi`` (10 n, or 14 n with the joints' columns).

    A massless body with a first moment (m = 0, h != 0) has no rigid-body meaning and is refused.
    """
    pi = np.asarray(pi, dtype=float)
    n = model.n
    if pi.shape not in ((10 * n,), (14 * n,)) or not np.all(np.isfinite(pi)):
        raise ValueError(f'parameters must be {10 * n} or {14 * n} finite numbers')
    bodies = pi[:10 * n].reshape(n, 10)
    I = np.empty((n, 6, 6))  # noqa: E741
    for j, p in enumerate(bodies):
        if not p[0] > 0 and np.any(p[1:4] != 0):
            raise ValueError(f'body {body_names(model)[j]}: first moment without mass')
        I[j] = spatial_inertia(p)
    changes = dict(I=I)
    if pi.shape[0] == 14 * n:
        changes.update(damping=pi[10 * n:11 * n], friction=pi[11 * n:12 * n],
                       armature=pi[12 * n:13 * n], torque_offset=pi[13 * n:])
    return model._replace(**changes)
