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
Task-space control of one frame: Cartesian impedance and operational-space control.

With x the pose of the task frame, J its Jacobian (``local_world_aligned``: root axes, the
frame's origin), v = J qd, Lambda = (J M^-1 J^T + mu 1)^-1 and J-bar = M^-1 J^T Lambda:

- ``cartesian_impedance``: tau = J^T (K e + D (v_d - v) + w_ff) + c + g + N tau_0
- ``operational_space``:   tau = J^T (Lambda (a_d - Jdot qd) + K e + D (v_d - v) + w_ff)
  + c + g + N tau_0

e is the pose error: the position difference p_d - p and the rotation error log(R_d R^T) as an
axis-angle vector, both in the root frame, each clipped to ``max_error`` (m, rad) so that a far
target never asks more than K max_error. With the dynamically consistent N the operational-space
law makes the task-space closed loop Lambda (x-ddot - a_d) = K e + D e-dot + F_ext exactly (up
to mu): it tracks a moving target (v_d, a_d) and its static stiffness is K, the same K as the
impedance law's (N/m, N m/rad). Khatib's unit-mass form tau = J^T Lambda (K' e - D' v - Jdot qd)
has the configuration-dependent stiffness Lambda K' instead: it is not what ``stiffness`` means
here.

Damping: D is diagonal, D_i = max(2 zeta_i sqrt(K_i Lambda_ii), D_min,i) (the ``damping_ratio``
zeta per axis, 1 critical; ``min_damping`` D_min, N s/m and N m s/rad, 0 by default). Exact for a
decoupled Lambda; the off-diagonal terms of Lambda are not damped specially (what franka's and
CRISP's examples do with a constant D, here scaled to the arm). With zero stiffness (hand
guiding) the ratio gives no damping at all: D_min is what a pushed arm then slows down with.

Nullspace: tau_0 = K_n (q_n - q) - D_n qd with D_n,i = 2 zeta_n,i sqrt(K_n,i M_ii), clamped to
the effort limits first and then projected (a clamp after the projection would put back what the
projection took out): N = 1 - J^T J-bar^T (``dynamic``: it causes no acceleration of the frame)
or 1 - J^T (J^T)^+ with the damped J^+ = J^T (J J^T + mu 1)^-1 (``kinematic``: no static force at
the frame).

Only the commanded joints act: J, M and Lambda are those of the commanded joints, the others held
where they are (a hand's fingers on an arm). mu damps Lambda near singularities (see
``dynamics.frames``), and only there: ``SINGULARITY_DAMPING`` times (1 - ratio /
``SINGULAR_RATIO``)^2 when the ratio of the smallest to the largest squared pivot of the Cholesky
factor of J M^-1 J^T scaled to a unit diagonal (``dynamics.frames.singularity_ratio``) falls
below ``SINGULAR_RATIO``, else 0 (``singularity_damping`` after a call): a
damped Lambda makes N leak (J-bar^T N = mu Lambda J-bar^T), which a hand-guided arm showed as a
creep of 0.3 mm/s.

The law is one compiled function (``task_command``): state in, torques out, nothing allocated.
"""
import math

from numba import njit, types
import numpy as np

from ..dynamics.frames import FrameKin, descriptor
from ..dynamics.frames import SINGULAR_RATIO
from ..dynamics.kernels import ID, _crba, _view, entry_point, split_data
from ..dynamics.linalg import cholesky, cholesky_solve
from ..dynamics.values import per_joint

TASK_MODES = ('cartesian_impedance', 'operational_space')
PROJECTORS = ('dynamic', 'kinematic')
SINGULARITY_DAMPING = 1e-4       # mu (1/kg): Lambda <= 1e4 kg along a lost direction

_F1, _F2 = (types.Array(types.float64, d, 'C') for d in (1, 2))
# the least share of its feedback a task law keeps where it asks more than the effort limits
# (feedback_within): a law beyond reason (so101's, its damping 1.8e3 per period, said at
# start-up) asked a share of 1e-3 of it, its arm left with none: joints 16 times v_max after a
# stall, where none gave 52 and the joint-by-joint clamp 50; panda's stiffness tenfold needs
# 0.044 at least
FEEDBACK_FLOOR = 0.02

# the target X: p_d (3) | R_d (3x3, row-major) | v_d (6) | a_d (6) | w_ff (6)
X_P, X_R, X_V, X_A, X_W, X_SIZE = 0, 3, 12, 18, 24, 30


def _param_layout(k):
    """Offsets in the parameter vector P of a law commanding k joints."""
    names = (('k', 1), ('cmd', k), ('K', 6), ('zeta', 6), ('max_error', 2), ('mu', 1),
             ('mode', 1), ('projector', 1), ('Kn', k), ('zeta_n', k), ('posture', k),
             ('limits', k), ('D_min', 6))
    out, o = {}, 0
    for name, size in names:
        out[name] = o
        o += size
    out['size'] = o
    return out


def _work_size(n, k):
    """Size of the workspace W: outputs first (see ``TaskSpaceLaw``), then scratch."""
    return 16 + 6 + 6 + 6 + 36 + n + n * n + 6 * n + 6 * k + k * k + 6 * k + 36 + 36 + 3 * k + 19


@njit(cache=True, inline='always')
def rotation_error(Rd, R, out):
    """
    Write log(R_d R^T) into ``out``: the axis-angle vector (rad, root axes) taking R to R_d.

    Robust at 0 (first order) and at pi (the axis from the symmetric part, the sign from the
    skew part).
    """
    e00 = Rd[0, 0] * R[0, 0] + Rd[0, 1] * R[0, 1] + Rd[0, 2] * R[0, 2]
    e01 = Rd[0, 0] * R[1, 0] + Rd[0, 1] * R[1, 1] + Rd[0, 2] * R[1, 2]
    e02 = Rd[0, 0] * R[2, 0] + Rd[0, 1] * R[2, 1] + Rd[0, 2] * R[2, 2]
    e10 = Rd[1, 0] * R[0, 0] + Rd[1, 1] * R[0, 1] + Rd[1, 2] * R[0, 2]
    e11 = Rd[1, 0] * R[1, 0] + Rd[1, 1] * R[1, 1] + Rd[1, 2] * R[1, 2]
    e12 = Rd[1, 0] * R[2, 0] + Rd[1, 1] * R[2, 1] + Rd[1, 2] * R[2, 2]
    e20 = Rd[2, 0] * R[0, 0] + Rd[2, 1] * R[0, 1] + Rd[2, 2] * R[0, 2]
    e21 = Rd[2, 0] * R[1, 0] + Rd[2, 1] * R[1, 1] + Rd[2, 2] * R[1, 2]
    e22 = Rd[2, 0] * R[2, 0] + Rd[2, 1] * R[2, 1] + Rd[2, 2] * R[2, 2]
    sx, sy, sz = e21 - e12, e02 - e20, e10 - e01          # 2 sin(theta) axis
    c = min(1.0, max(-1.0, 0.5 * (e00 + e11 + e22 - 1.0)))
    s = 0.5 * math.sqrt(sx * sx + sy * sy + sz * sz)
    theta = math.atan2(s, c)
    if theta < 1e-6:
        out[0], out[1], out[2] = 0.5 * sx, 0.5 * sy, 0.5 * sz
        return
    if theta < math.pi - 1e-4:
        f = 0.5 * theta / s
        out[0], out[1], out[2] = f * sx, f * sy, f * sz
        return
    # near pi: R_e + 1 ~ 2 a a^T; the largest diagonal gives the best-conditioned column
    d = (e00, e11, e22)
    i = 0 if d[0] >= d[1] and d[0] >= d[2] else (1 if d[1] >= d[2] else 2)
    if i == 0:
        ax, ay, az = e00 + 1.0, 0.5 * (e01 + e10), 0.5 * (e02 + e20)
    elif i == 1:
        ax, ay, az = 0.5 * (e01 + e10), e11 + 1.0, 0.5 * (e12 + e21)
    else:
        ax, ay, az = 0.5 * (e02 + e20), 0.5 * (e12 + e21), e22 + 1.0
    norm = math.sqrt(ax * ax + ay * ay + az * az)
    if ax * sx + ay * sy + az * sz < 0.0:
        norm = -norm
    out[0], out[1], out[2] = theta * ax / norm, theta * ay / norm, theta * az / norm


@njit(cache=True, fastmath={'contract'})
def TaskLaw(model, ws, wc, q, qd, F, P, X, W, tau):
    """Compute the task-space law's torques ``tau`` (every model joint) and its outputs in W."""
    n = q.shape[0]
    k = int(P[0])
    o_K = 1 + k
    o_z, o_me, o_mu = o_K + 6, o_K + 12, o_K + 14
    mode, projector = P[o_K + 15], P[o_K + 16]
    o_Kn = o_K + 17
    o_zn, o_qn, o_lim, o_dm = o_Kn + k, o_Kn + 2 * k, o_Kn + 3 * k, o_Kn + 4 * k
    mu = P[o_mu]
    # outputs: T (4x4) | e (6) | v (6) | Jdqd (6) | Lambda (6x6) | h (n) | H (n x n) | J (6 x n)
    T = _view(W, 0, (4, 4))
    e, v, jdqd = _view(W, 16, (6,)), _view(W, 22, (6,)), _view(W, 28, (6,))
    Lam = _view(W, 34, (6, 6))
    o = 70
    h = _view(W, o, (n,))
    H = _view(W, o + n, (n, n))
    J = _view(W, o + n + n * n, (6, n))
    o += n + n * n + 6 * n
    Jc, L = _view(W, o, (6, k)), _view(W, o + 6 * k, (k, k))
    Y = _view(W, o + 6 * k + k * k, (k, 6))          # M^-1 J^T
    o += 12 * k + k * k
    A, B = _view(W, o, (6, 6)), _view(W, o + 36, (6, 6))
    t0, tc, y = _view(W, o + 72, (k,)), _view(W, o + 72 + k, (k,)), _view(W, o + 72 + 2 * k, (k,))
    f, g = _view(W, o + 72 + 3 * k, (6,)), _view(W, o + 78 + 3 * k, (6,))

    FrameKin(model, ws, wc, q, qd, F, T, J, jdqd)
    ID(model, ws, q, qd, None, None, h)                   # c + g
    _crba(model, ws, H)                                   # on ID's Xup
    for r in range(6):
        for j in range(k):
            Jc[r, j] = J[r, int(P[1 + j])]
    for i in range(k):
        for j in range(k):
            L[i, j] = H[int(P[1 + i]), int(P[1 + j])]
    ok = cholesky(L, k)
    # Y = M^-1 J^T, A = J Y + mu 1, Lambda = A^-1
    for r in range(6):
        for j in range(k):
            y[j] = Jc[r, j]
        if ok:
            cholesky_solve(L, y, k)
        for j in range(k):
            Y[j, r] = y[j]
    for r in range(6):
        for c in range(6):
            s = 0.0
            for j in range(k):
                s += Jc[r, j] * Y[j, c]
            A[r, c] = B[r, c] = s
    # damped only near a singularity (a damped Lambda leaks nullspace torque into the frame: a
    # pushed arm in hand guiding crept at 0.3 mm/s with mu always on): the pivots of the
    # Cholesky factor of A scaled to a unit diagonal tell how close (unscaled, A's rows in 1/kg
    # and 1/(kg m^2) made well-conditioned poses look near-singular), mu_eff = mu (1 - ratio /
    # SINGULAR_RATIO)^2 below it
    ratio = 0.0
    positive = True
    for r in range(6):
        positive = positive and B[r, r] > 0.0
    if positive:
        for r in range(6):
            for c in range(6):
                if r != c:
                    B[r, c] /= math.sqrt(B[r, r] * B[c, c])
        for r in range(6):
            B[r, r] = 1.0
    if positive and cholesky(B, 6):
        lo, hi = B[0, 0] ** 2, B[0, 0] ** 2
        for r in range(1, 6):
            lo, hi = min(lo, B[r, r] ** 2), max(hi, B[r, r] ** 2)
        ratio = lo / hi
    mu_eff = 0.0 if ratio >= SINGULAR_RATIO else mu * (1.0 - ratio / SINGULAR_RATIO) ** 2
    W[W.shape[0] - 1] = mu_eff                         # the last element: an output
    for r in range(6):
        A[r, r] += mu_eff
    ok6 = cholesky(A, 6)
    for c in range(6):
        for r in range(6):
            f[r] = 1.0 if r == c else 0.0
        if ok6:
            cholesky_solve(A, f, 6)
        for r in range(6):
            Lam[r, c] = f[r]
    # v = J qd; the pose error, clipped
    for r in range(6):
        s = 0.0
        for i in range(n):
            s += J[r, i] * qd[i]
        v[r] = s
    Rd = _view(X, X_R, (3, 3))
    for r in range(3):
        e[r] = X[X_P + r] - T[r, 3]
    rotation_error(Rd, T, e[3:])
    for part in range(2):
        norm = math.sqrt(e[3 * part] ** 2 + e[3 * part + 1] ** 2 + e[3 * part + 2] ** 2)
        limit = P[o_me + part]
        if norm > limit:
            for r in range(3):
                e[3 * part + r] *= limit / norm
    # the task wrench f = K e + D (v_d - v) + w_ff (+ Lambda (a_d - Jdot qd))
    for r in range(6):
        K = P[o_K + r]
        D = max(2.0 * P[o_z + r] * math.sqrt(K * max(Lam[r, r], 0.0)), P[o_dm + r])
        W[W.shape[0] - 7 + r] = D                      # an output: the damping used
        f[r] = K * e[r] + D * (X[X_V + r] - v[r]) + X[X_W + r]
        g[r] = X[X_A + r] - jdqd[r]
    if mode == 1.0:
        for r in range(6):
            s = 0.0
            for c in range(6):
                s += Lam[r, c] * g[c]
            f[r] += s
    # the nullspace torque, clamped, then projected: tc = N t0
    for j in range(k):
        i = int(P[1 + j])
        Kn = P[o_Kn + j]
        Dn = 2.0 * P[o_zn + j] * math.sqrt(Kn * H[i, i])
        lim = P[o_lim + j]
        t0[j] = min(lim, max(-lim, Kn * (P[o_qn + j] - q[i]) - Dn * qd[i]))
    if projector == 0.0:              # dynamic: N t0 = t0 - J^T Lambda Y^T t0
        for r in range(6):
            s = 0.0
            for j in range(k):
                s += Y[j, r] * t0[j]
            g[r] = s
        for r in range(6):
            s = 0.0
            for c in range(6):
                s += Lam[r, c] * g[c]
            B[0, r] = s
    else:                             # kinematic: N t0 = t0 - J^T (J J^T + mu 1)^-1 J t0
        for r in range(6):
            for c in range(6):
                s = mu if r == c else 0.0
                for j in range(k):
                    s += Jc[r, j] * Jc[c, j]
                B[r, c] = s
        okk = cholesky(B, 6)
        for r in range(6):
            s = 0.0
            for j in range(k):
                s += Jc[r, j] * t0[j]
            g[r] = s
        if okk:
            cholesky_solve(B, g, 6)
        for r in range(6):
            B[0, r] = g[r]
    for j in range(k):
        s, p = t0[j], 0.0
        for r in range(6):
            s -= Jc[r, j] * B[0, r]
            p += Jc[r, j] * f[r]
        tc[j] = s + p
    for i in range(n):
        tau[i] = h[i]
    for j in range(k):
        tau[int(P[1 + j])] += tc[j]


@entry_point(types.void(_F1, _F1, _F1, _F2, _F1, _F1, _F1, _F1))
def task_command(data, q, qd, F, P, X, W, tau):
    """TaskSpaceLaw.torques in compiled code: one state in, every joint's torque out."""
    n, model, ws, wc = split_data(data)
    k = int(P[0])
    if (q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n or X.shape[0] != X_SIZE
            or W.shape[0] < 16 + 6 + 6 + 6 + 36 + n + n * n + 6 * n + 6 * k + k * k + 6 * k
            + 36 + 36 + 3 * k + 13 or P.shape[0] != 1 + 5 * k + 23):
        raise ValueError('the task law got arrays of the wrong size for this model')
    TaskLaw(model, ws, wc, q, qd, F, P, X, W, tau)


@entry_point(types.boolean(_F1, types.Array(types.int64, 1, 'C'), _F1, _F1,
                           types.Array(types.boolean, 1, 'C')))
def limit_command(tau, cmd, limits, out, clamped):
    """
    Write tau[cmd] into ``out``, clamped to +-limits (``clamped``): the effort limits.

    Returns whether any joint was clamped. What Controller.command does with numpy in ~4 us, in
    one compiled call.
    """
    any_clamped = False
    for j in range(cmd.shape[0]):
        x = tau[cmd[j]]
        lim = limits[j]
        clamped[j] = x > lim or x < -lim
        if clamped[j]:
            any_clamped = True
            x = lim if x > lim else -lim
        out[j] = x
    return any_clamped


@entry_point(types.float64(_F1, types.Array(types.int64, 1, 'C'), _F2, _F1, _F1, _F1, _F1, _F1,
                           _F1, _F1))
def feedback_within(tau, cmd, J, K, e, D, v_d, v, limits, fb):
    """
    Scale the task law's feedback in ``tau`` as one vector until every joint is within its limit.

    The feedback is J^T (K e + D (v_d - v)) on the commanded joints (``fb``, written); the rest
    of ``tau`` (c + g, the target wrench and acceleration, the nullspace torque) is kept. Where
    some joint asks more than its effort limit, the largest share s <= 1 of the feedback that
    keeps every joint whose rest is within its limit there replaces it (a joint whose rest alone
    is over is left to the clamp that follows). Returns s (1: nothing asked too much).

    Clamped joint by joint instead, a law asking many times the effort limits (a stiffness ten
    times the default, caught out of its small-signal range by a stall) is driven along a
    direction it never asked, its commands at the limits, slewing at the torque rate limit: the
    loop swung (panda: 12 times v_max 50 ms after a stall; issue #52). The feedback alone, not
    the target wrench: scaling that too let z1's elbow, at its limit under a 50 N target
    wrench, scale its shoulder's push down, and the frame sank 342 mm through a workspace wall.
    """
    k = cmd.shape[0]
    over = False
    for j in range(k):
        if abs(tau[cmd[j]]) > limits[j]:
            over = True
    if not over:
        return 1.0
    for j in range(k):
        s = 0.0
        for r in range(6):
            s += J[r, cmd[j]] * (K[r] * e[r] + D[r] * (v_d[r] - v[r]))
        fb[j] = s
    share = 1.0
    for j in range(k):
        x, lim = tau[cmd[j]], limits[j]
        rest = x - fb[j]
        if fb[j] != 0.0 and abs(rest) < lim and abs(x) > lim:
            share = min(share, (math.copysign(lim, fb[j]) - rest) / fb[j])
    share = max(share, FEEDBACK_FLOOR)
    if share < 1.0:
        for j in range(k):
            tau[cmd[j]] -= (1.0 - share) * fb[j]
    return share


def task_bandwidth(law):
    """
    Return (w, d, axis) of the task law at its last call's state: how fast its loop must act.

    About a still target the closed loop is Lambda x'' + D x' + K x = 0 (D, K diagonal): w
    (rad/s) is its fastest natural frequency, the root of the largest eigenvalue of Lambda^-1 K;
    d (1/s) the damping's fastest rate, the largest of Lambda^-1 D; ``axis`` the one the fastest
    mode moves most along (0-2 x y z, 3-5 about them). Axis by axis, sqrt(K_i / Lambda_ii) can
    be far below w: near a singularity Lambda_ii takes the mass of a direction the axis barely
    moves along (so101's jaw, 5 joints and a gripper: 0.18 rad per 1 ms period by its axes,
    1.81 coupled, and its damping 49 per period, set from those Lambda_ii).
    """
    inv = np.linalg.inv(law.lambda_)

    def fastest(gains):
        s = np.sqrt(np.maximum(gains, 0.0))
        values, vectors = np.linalg.eigh(s[:, None] * inv * s[None, :])
        return max(float(values[-1]), 0.0), vectors[:, -1]

    w2, mode = fastest(law.stiffness)
    d, _ = fastest(law.damping)
    return math.sqrt(w2), d, int(np.argmax(np.abs(mode)))


class TaskSpaceLaw:
    """
    The task-space law of one frame for the commanded joints ``cmd`` (model indices) of ``model``.

    Configure with ``set_*``; ``torques(q, qd)`` returns every model joint's torque (the
    commanded ones' with the law, the others' c + g). After a call, ``pose`` (4x4), ``error``
    (6), ``velocity`` (6, J qd), ``jacobian`` (6 x n), ``lambda_`` (6x6), ``damping`` (6: D) are
    those of that state.
    Vectors are [linear; angular], root axes.
    """

    def __init__(self, model, cmd, frame, mode='cartesian_impedance'):
        self.model = model
        self.cmd = np.asarray(cmd, dtype=np.int64)
        k, n = len(self.cmd), model.n
        self._layout = _param_layout(k)
        self.P = np.zeros(self._layout['size'])
        self.P[0] = k
        self.P[1:1 + k] = self.cmd
        self.X = np.zeros(X_SIZE)
        self.X[X_R:X_R + 9] = np.eye(3).ravel()
        self.W = np.zeros(_work_size(n, k))
        self.tau = np.zeros(n)
        self._feedback = np.zeros(k)            # feedback_within's work
        self.pose = self.W[:16].reshape(4, 4)
        self.error, self.velocity = self.W[16:22], self.W[22:28]
        self.bias_acceleration = self.W[28:34]
        self.lambda_ = self.W[34:70].reshape(6, 6)
        o = 70 + n + n * n
        self.jacobian = self.W[o:o + 6 * n].reshape(6, n)
        self.damping = self.W[-7:-1]            # D (the diagonal) the last call used
        # views of P and X for a control loop's updates (no checks: set_* check)
        lay = self._layout
        self.stiffness = self.P[lay['K']:lay['K'] + 6]
        self.min_damping = self.P[lay['D_min']:lay['D_min'] + 6]
        self.posture = self.P[lay['posture']:lay['posture'] + k]
        self.target_position, self.target_rotation = self.X[X_P:X_P + 3], \
            self.X[X_R:X_R + 9].reshape(3, 3)
        self.target_twist, self.target_acceleration, self.target_wrench = \
            self.X[X_V:X_V + 6], self.X[X_A:X_A + 6], self.X[X_W:X_W + 6]
        self.set_frame(frame)
        self.set_mode(mode)
        self.set_stiffness([0.0] * 6)
        self.set_damping_ratio([1.0])
        self.set_max_error([math.inf, math.inf])
        self.set_nullspace([0.0], [1.0], np.zeros(k), 'dynamic')
        self.set_limits(np.full(k, math.inf))
        self._set('mu', [SINGULARITY_DAMPING])

    @property
    def singularity_damping(self):
        """Return the mu the last call used (0 away from singularities)."""
        return float(self.W[-1])

    def _set(self, name, values):
        o = self._layout[name]
        self.P[o:o + len(values)] = values

    def set_frame(self, frame):
        self.frame = frame
        self.F = descriptor(self.model, frame, 'local_world_aligned')

    def set_mode(self, mode):
        if mode not in TASK_MODES:
            raise ValueError(f'task mode must be one of {TASK_MODES}, got "{mode}"')
        self.mode = mode
        self._set('mode', [TASK_MODES.index(mode)])

    def set_stiffness(self, K):
        self._set('K', per_joint(K, 6, 'task.stiffness', low=0.0, of='axis'))

    def set_damping_ratio(self, zeta):
        self._set('zeta', per_joint(zeta, 6, 'task.damping_ratio', low=0.0, of='axis'))

    def set_min_damping(self, D_min):
        self._set('D_min', per_joint(D_min, 6, 'task.min_damping', low=0.0, of='axis'))

    def set_max_error(self, max_error):
        self._set('max_error', per_joint(max_error, 2, 'task.max_error', low=0.0,
                                         strict=True, inf=True, of='bound (m, rad)'))

    def set_nullspace(self, stiffness, damping_ratio, posture, projector):
        k = len(self.cmd)
        if projector not in PROJECTORS:
            raise ValueError(f'nullspace.projector must be one of {PROJECTORS}, got '
                             f'"{projector}"')
        for key, x, what, low in (('Kn', stiffness, 'nullspace.stiffness', 0.0),
                                  ('zeta_n', damping_ratio, 'nullspace.damping_ratio', 0.0),
                                  ('posture', posture, 'nullspace.posture', None)):
            self._set(key, per_joint(x, k, what, low=low, of='commanded joint'))
        self._set('projector', [PROJECTORS.index(projector)])

    def set_limits(self, limits):
        self._set('limits', per_joint(limits, len(self.cmd), 'effort limits', low=0.0, inf=True,
                                      of='commanded joint'))

    def set_target(self, position, rotation, twist=None, acceleration=None, wrench=None):
        """Set the target pose (p in m; R a 3x3 rotation matrix), twist, acceleration, wrench."""
        X = self.X
        X[X_P:X_P + 3] = position
        X[X_R:X_R + 9] = np.asarray(rotation, dtype=float).ravel()
        for o, value in ((X_V, twist), (X_A, acceleration), (X_W, wrench)):
            X[o:o + 6] = 0.0 if value is None else value

    def torques(self, q, qd):
        task_command(self.model._data, q, qd, self.F, self.P, self.X, self.W, self.tau)
        return self.tau

    def feedback_within(self, tau, limits):
        """Scale the last call's feedback in ``tau`` to ``limits`` (feedback_within); the share."""
        return feedback_within(tau, self.cmd, self.jacobian, self.stiffness, self.error,
                               self.damping, self.target_twist, self.velocity, limits,
                               self._feedback)


def external_wrench(J, r):
    """
    Return the wrench [f; t] at a frame that explains the joint torques ``r`` best.

    F = (J J^T + mu 1)^-1 J r, the damped pseudo-inverse of J^T (mu = SINGULARITY_DAMPING):
    ``J`` (6 x k) the frame's Jacobian on the joints of ``r`` (k). What a person pushing the
    frame applies, from the observer's external torques: J^T F = r when J is square and regular
    (to mu), the least-squares fit when k > 6.
    """
    return np.linalg.solve(J @ J.T + SINGULARITY_DAMPING * np.eye(6), J @ r)
