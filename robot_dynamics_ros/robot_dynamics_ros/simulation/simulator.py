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
Forward-dynamics simulation (ABA) of a RobotModel, without ROS.

One ``step(tau)`` advances the state by ``dt``:

1. the commanded torques are clamped to the effort limits;
2. viscous damping ``-b qd`` and Coulomb friction with stiction, by the lecture notes' rule:
   a moving joint (|qd| > ``v_eps``) feels ``-fc sgn(qd)``; a joint at rest sticks (friction
   cancels whatever would accelerate it) while the torque needed for that stays within ``fs``,
   else it slips with ``fc`` against the motion it starts. A joint whose velocity friction would
   reverse within a step stops instead (no chatter);
3. joints resting on a position limit: while the net generalized force pushes such a joint
   outwards, a constraint torque holds it there (qdd = 0 at that joint, the rest of the arm
   feels the reaction); it releases when the force pulls it away. Sticking and resting joints
   are solved together (an active set over M^-1 restricted to them): friction torques within
   +-fs, stop torques pushing inwards only; the joints so held keep their position exactly;
4. ``semi_implicit_euler`` (qd += dt qdd; q += dt qd, with the viscous damping taken implicitly:
   (M + dt B) qdd = tau - c - g - B qd, stable for any damping) or ``rk4`` (classic Runge-Kutta
   on (q, qd); damping inside every stage, friction and stop torques held over the step);
5. impacts: joints that would pass a limit moving outwards get the generalized impulse that
   stops them, solved jointly (qd += M^-1 S^T lambda with their velocities set to
   -``restitution`` times the impact velocity, every lambda pushing inwards), so the impact
   reaches the whole arm and creates no energy; they are placed on the limit.

Steps 1-4 run in compiled code (without friction, and away from the stops, in one call); the
impacts of step 5 in numpy. A NaN/Inf or a velocity above ``max_velocity`` raises
``SimulationDiverged`` and leaves the state at its last valid value. A model whose mass matrix
is singular is refused at construction.
"""
import numpy as np
from numba import njit

from ..dynamics import PRISMATIC, crba
from ..dynamics.kernels import FDab, HandC_H

INTEGRATORS = ('semi_implicit_euler', 'rk4')


class SimulationDiverged(RuntimeError):
    pass


@njit(cache=True)
def _checked(q_new, qd_new, lower, upper, vmax):
    """0; -1 when a joint would pass a position limit moving outwards; 1 + the first bad joint."""
    n = q_new.shape[0]
    crossing = 0
    for i in range(n):
        if not (np.isfinite(q_new[i]) and np.isfinite(qd_new[i])):
            return 1 + i
        if (q_new[i] < lower[i] and qd_new[i] < 0) or (q_new[i] > upper[i] and qd_new[i] > 0):
            crossing = -1
    if crossing == 0:
        for i in range(n):
            if abs(qd_new[i]) > vmax[i]:
                return 1 + i
    return crossing


@njit(cache=True)
def _semi_implicit_euler(model, ws, f_ext, q, qd, tau, extra, damping, effort, lower, upper,
                         friction, v_eps, vmax, dt, applied, u, qdd, q_new, qd_new):
    """
    One semi-implicit Euler step in compiled code (the numpy version costs ~2.5x more).

    Returns 0; -1 when a joint would pass a position limit moving outwards (the caller resolves
    the stops: ``_resting_torques``, ``_hold``, the impacts); or 1 + the index of the first joint
    whose state is NaN/Inf or faster than ``vmax``.
    """
    n = q.shape[0]
    for i in range(n):
        applied[i] = min(max(tau[i], -effort[i]), effort[i])
        u[i] = applied[i] + extra[i] - damping[i] * qd[i]
    FDab(model, ws, q, qd, u, f_ext, qdd)
    for i in range(n):
        qd_new[i] = qd[i] + dt * qdd[i]
        # Coulomb friction does not reverse a motion within a step: the joint stops
        if friction[i] > 0 and abs(qd[i]) > v_eps and qd_new[i] * qd[i] < 0:
            qd_new[i] = 0.0
        q_new[i] = q[i] + dt * qd_new[i]
    return _checked(q_new, qd_new, lower, upper, vmax)


@njit(cache=True)
def _rk4(model, ws, f_ext, q, qd, tau, extra, damping, effort, lower, upper, friction, v_eps,
         vmax, dt, applied, u, k, q_new, qd_new):
    """
    One classic Runge-Kutta step on (q, qd) in compiled code (was ~80 us in numpy on panda).

    The viscous damping acts in every stage, ``extra`` (friction and stop torques) is held over
    the step. ``k``: an (8, n) scratch array: stage velocities k[0:4], accelerations k[4:8], with
    q_new as the stages' positions until the end. Returns as ``_semi_implicit_euler``.
    """
    n = q.shape[0]
    for i in range(n):
        applied[i] = min(max(tau[i], -effort[i]), effort[i])
        k[0, i] = qd[i]
        q_new[i] = q[i]
    for s in range(4):
        if s > 0:
            h = dt if s == 3 else 0.5 * dt
            for i in range(n):
                k[s, i] = qd[i] + h * k[s + 3, i]           # the stage's velocity
                q_new[i] = q[i] + h * k[s - 1, i]           # and position
        for i in range(n):
            u[i] = applied[i] + extra[i] - damping[i] * k[s, i]
        FDab(model, ws, q_new, k[s], u, f_ext, k[s + 4])
    for i in range(n):
        q_new[i] = q[i] + dt / 6 * (k[0, i] + 2 * k[1, i] + 2 * k[2, i] + k[3, i])
        qd_new[i] = qd[i] + dt / 6 * (k[4, i] + 2 * k[5, i] + 2 * k[6, i] + k[7, i])
        if friction[i] > 0 and abs(qd[i]) > v_eps and qd_new[i] * qd[i] < 0:
            qd_new[i] = 0.0
    return _checked(q_new, qd_new, lower, upper, vmax)


@njit(cache=True)
def _cholesky(A, k):
    """Factor A[:k, :k] = L L^T in place (L in the lower triangle); False if not positive."""
    for j in range(k):
        s = A[j, j]
        for m in range(j):
            s -= A[j, m] * A[j, m]
        if not s > 0.0:
            return False
        A[j, j] = np.sqrt(s)
        for i in range(j + 1, k):
            s = A[i, j]
            for m in range(j):
                s -= A[i, m] * A[j, m]
            A[i, j] = s / A[j, j]
    return True


@njit(cache=True)
def _cholesky_solve(L, b, k):
    """b[:k] = (L L^T)^-1 b[:k] with the factor of ``_cholesky``."""
    for i in range(k):
        s = b[i]
        for m in range(i):
            s -= L[i, m] * b[m]
        b[i] = s / L[i, i]
    for i in range(k - 1, -1, -1):
        s = b[i]
        for m in range(i + 1, k):
            s -= L[m, i] * b[m]
        b[i] = s / L[i, i]


STICKING, AT_LOWER, AT_UPPER, HELD = 1, 2, 4, 8


@njit(cache=True)
def _resting_torques(model, ws, f_ext, q, qd, tau, fc, fs, eps, lower, upper, friction, stop,
                     w, mats, ints):
    """
    Friction and stop torques (see ``Simulator.resting_torques``) in compiled code.

    ``tau``: the applied torques with damping; ``w`` (5, n), ``mats`` (3, n, n) and ``ints``
    (2, n) scratch; ``ints[0]`` ends with the joints held (stuck, or on a stop) marked ``HELD``.
    Returns 0, or -1 when the mass matrix is not positive definite.
    """
    n = q.shape[0]
    lo, hi, qdd_free, u, lam = w[0], w[1], w[2], w[3], w[4]
    M, Minv, A = mats[0], mats[1], mats[2]
    kind, active = ints[0], ints[1]
    k = 0
    for i in range(n):
        friction[i] = stop[i] = 0.0
        moving = abs(qd[i]) > eps
        if moving:
            friction[i] = -fc[i] * np.sign(qd[i])
        kind[i] = ((STICKING if not moving and fs[i] > 0 else 0)
                   | (AT_LOWER if q[i] <= lower[i] and qd[i] <= eps else 0)
                   | (AT_UPPER if q[i] >= upper[i] and qd[i] >= -eps else 0))
        # the torque interval of each candidate: stiction +-fs, a stop pushes inwards only
        lo[i] = -fs[i] if kind[i] & STICKING else 0.0
        hi[i] = fs[i] if kind[i] & STICKING else 0.0
        if kind[i] & AT_LOWER:
            hi[i] = np.inf
        if kind[i] & AT_UPPER:
            lo[i] = -np.inf
        if kind[i]:
            active[k] = i
            k += 1
    factored, moved = False, True
    while k > 0:
        if moved:           # the accelerations without the active joints' torques
            for i in range(n):
                u[i] = tau[i] + friction[i]
            FDab(model, ws, q, qd, u, f_ext, qdd_free)
            moved = False
        if not factored:
            M[:, :] = 0.0
            HandC_H(model, ws, q, M)
            if not _cholesky(M, n):
                return -1
            for j in range(n):                          # Minv, column by column
                lam[:] = 0.0
                lam[j] = 1.0
                _cholesky_solve(M, lam, n)
                Minv[:, j] = lam
            factored = True
        # the torques lam that zero the active joints' accelerations: Minv[S, S] lam = -qdd[S]
        for a in range(k):
            lam[a] = -qdd_free[active[a]]
            for b in range(k):
                A[a, b] = Minv[active[a], active[b]]
        _cholesky(A, k)
        _cholesky_solve(A, lam, k)
        worst, leaves, inside = 0.0, -1, True
        for a in range(k):
            i = active[a]
            excess = max(lo[i] - lam[a], lam[a] - hi[i])
            if excess > 1e-12 * max(1.0, abs(lam[a])):
                inside = False
            ratio = excess / max(fs[i] if kind[i] & STICKING else abs(lam[a]), 1e-300)
            if leaves < 0 or ratio > worst:
                worst, leaves = ratio, a
        if inside:
            # a stop takes the inward part of the torque, friction the rest
            for a in range(k):
                i = active[a]
                stop[i] = (max(lam[a], 0.0) if kind[i] & AT_LOWER else
                           min(lam[a], 0.0) if kind[i] & AT_UPPER else 0.0)
                friction[i] = lam[a] - stop[i]
                kind[i] |= HELD             # its acceleration is zero
            return 0
        j = active[leaves]                  # the worst violation leaves the set
        for a in range(leaves, k - 1):
            active[a] = active[a + 1]
        k -= 1
        if kind[j] & STICKING:
            # slips: kinetic friction against the motion it starts (when the stop, if any,
            # does not take the push)
            direction = qdd_free[j]
            if (kind[j] & AT_LOWER and direction < 0) or (kind[j] & AT_UPPER and direction > 0):
                continue
            friction[j] = -fc[j] * np.sign(direction)
            moved = True
    return 0


@njit(cache=True)
def _hold(q, q_new, qd_new, held, lower, upper, vmax):
    """
    Keep the held joints (``held & HELD``) in place; put the rest back within the limits.

    Returns -1 when a joint would pass a position limit moving outwards (an impact: the caller
    resolves it from q_new, qd_new), else as ``_checked``.
    """
    n = q.shape[0]
    for i in range(n):
        if held[i] & HELD:          # stuck, or resting on a stop: qdd = 0 there, up to rounding
            q_new[i], qd_new[i] = q[i], 0.0
    for i in range(n):
        if (q_new[i] < lower[i] and qd_new[i] < 0) or (q_new[i] > upper[i] and qd_new[i] > 0):
            return -1
    for i in range(n):
        # whatever still lies beyond a limit (rounding, RK4's positions) is put back on it
        q_new[i] = min(max(q_new[i], lower[i]), upper[i])
    return _checked(q_new, qd_new, lower, upper, vmax)


class Simulator:

    def __init__(self, model, *, dt=1e-3, integrator='semi_implicit_euler', damping=None,
                 friction=None, static_friction=None, v_eps=1e-6, max_velocity=None,
                 q0=None, qd0=None, position_limits=True, effort_limits=True, restitution=0.0):
        if not dt > 0:
            raise ValueError(f'timestep must be > 0, got {dt}')
        if integrator not in INTEGRATORS:
            raise ValueError(f'integrator must be one of {INTEGRATORS}, got "{integrator}"')
        if not 0.0 <= restitution <= 1.0:
            raise ValueError(f'restitution must be in [0, 1], got {restitution}')
        n = model.n
        massless = model.massless_joints
        if massless:
            raise ValueError(
                f'the mass matrix is singular: joint(s) {", ".join(massless)} move no mass or '
                f'inertia about their axis, so forward dynamics is undefined: give them an '
                f'armature (rotor inertia; the simulator\'s armature parameter) or make them '
                f'fixed')
        self.model, self.dt, self.integrator = model, float(dt), integrator
        self.restitution = float(restitution)
        self.damping = _per_joint(model.damping if damping is None else damping, n, 'damping')
        self.friction = _per_joint(model.friction if friction is None else friction, n, 'friction')
        self.static_friction = (self.friction.copy() if static_friction is None else
                                _per_joint(static_friction, n, 'static_friction'))
        if np.any(self.static_friction < self.friction):
            raise ValueError('static friction must be at least the Coulomb friction')
        self.v_eps = v_eps
        vlim = model.velocity_limits
        self.max_velocity = (np.where(np.isfinite(vlim), 100 * vlim, 1e3) if max_velocity is None
                             else _per_joint(max_velocity, n, 'max_velocity'))
        self.lower = model.position_limits[:, 0] if position_limits else np.full(n, -np.inf)
        self.upper = model.position_limits[:, 1] if position_limits else np.full(n, np.inf)
        self.effort = model.effort_limits if effort_limits else np.full(n, np.inf)
        self.q = np.zeros(n) if q0 is None else _per_joint(q0, n, 'initial positions').copy()
        self.qd = np.zeros(n) if qd0 is None else _per_joint(qd0, n, 'initial velocities').copy()
        self.t = 0.0
        self.applied = np.zeros(n)          # the clamped command of the last step
        self.stop_torque = np.zeros(n)      # N m (N): what the stops exerted in the last step
        self.impulse = np.zeros(n)          # N m s (N s): the impacts' generalized impulse
        # semi-implicit Euler takes the viscous damping implicitly: (M + dt B) qdd = tau - c - g
        # - B qd, i.e. ABA with dt b added to the armature, stable for any b (a light joint with
        # URDF damping, z1's gripper, has dt b / M = 3 and oscillated explicitly)
        self._fd = (model.with_armature(model.armature + self.dt * self.damping)
                    if integrator == 'semi_implicit_euler' and np.any(self.damping > 0)
                    else model)
        self._frictionless = not np.any(self.static_friction > 0)
        self._rk4 = integrator == 'rk4'
        self._kernel = _rk4 if self._rk4 else _semi_implicit_euler
        # the kernels' scratch: the stages' velocities and accelerations (rk4), qdd (Euler)
        self._k = np.zeros((8, n))
        self._scratch = self._k if self._rk4 else self._k[4]
        self._rw, self._rmats = np.zeros((5, n)), np.zeros((3, n, n))
        self._rints = np.zeros((2, n), dtype=np.int64)
        self._no_vmax = np.full(n, np.inf)      # the general path checks speeds after impacts
        self._no_torque = np.zeros(n)
        self._u = np.zeros(n)
        self.wrenches = {}                  # link -> [fx, fy, fz, tx, ty, tz] in the link frame
        self._f_ext = np.zeros((n, 6))      # the same as body wrenches, as the kernels take them
        self._warm_up()

    def _warm_up(self):
        """
        Run both compiled paths once on the start state, keeping nothing.

        They compile (or load from the numba cache) now, not at the first stop or stiction in
        the middle of a run.
        """
        applied, q_new, qd_new, friction, stop = (np.empty(self.model.n) for _ in range(5))
        self._integrate(self._no_torque, self._no_torque, self.max_velocity, applied, q_new,
                        qd_new)
        self._resting(self.q, self.qd, self._no_torque, friction, stop)
        _hold(self.q, q_new, qd_new, self._rints[0], self.lower, self.upper, self.max_velocity)

    def set_wrench(self, link, wrench):
        """
        Apply a constant wrench to ``link`` from now on (None or zeros: remove it).

        ``wrench`` = [fx, fy, fz, tx, ty, tz] (N, N m) in the link frame, about its origin, as
        ``rnea``'s f_ext. The environment pushes: it enters ABA as an external force.
        """
        from ..dynamics.algorithms import _f_ext
        self.model.link_frame(link)         # KeyError naming an unknown link
        wrenches = dict(self.wrenches)
        if wrench is None or not np.any(wrench):
            wrenches.pop(link, None)
        else:
            wrenches[link] = np.asarray(wrench, dtype=float)
        self._f_ext = _f_ext(self.model, wrenches, np.zeros(self.model.n))    # checks finite
        self.wrenches = wrenches

    def reset(self, q0, qd0=None):
        n = self.model.n
        self.q = _per_joint(q0, n, 'initial positions').copy()
        self.qd = np.zeros(n) if qd0 is None else _per_joint(qd0, n, 'initial velocities').copy()
        self.t = 0.0

    # ---- friction and stops -------------------------------------------------------------------
    def resting_torques(self, q, qd, tau):
        """
        Return (friction, stop) torques for the state and the (damped) applied torques ``tau``.

        Moving joints feel -fc sgn(qd). Joints at rest with stiction and joints resting on a
        limit form an active set whose torques zero their accelerations: a friction torque must
        stay within +-fs (else the joint slips, with fc against the motion it starts), a stop
        torque must push inwards (else the stop releases). The worst violation leaves the set
        first, then the rest is solved again.
        """
        n = self.model.n
        friction, stop = np.zeros(n), np.zeros(n)
        self._resting(_per_joint(q, n, 'positions'), _per_joint(qd, n, 'velocities'),
                      _per_joint(tau, n, 'torques'), friction, stop)
        return friction, stop

    def _resting(self, q, qd, tau, friction, stop):
        """Fill ``friction`` and ``stop`` as ``resting_torques`` does, from checked arrays."""
        m = self._fd
        if _resting_torques(m._model, m._ws, self._f_ext, q, qd, tau, self.friction,
                            self.static_friction, self.v_eps, self.lower, self.upper, friction,
                            stop, self._rw, self._rmats, self._rints) < 0:
            self._not_positive()

    def _impacts(self, q, qd_new):
        """
        Return (velocities after the impacts, impulse, joints hit, which hit their lower limit).

        The joints that would pass a limit moving outwards get the generalized impulse
        M^-1 S^T lambda that sets their velocities to -restitution times their impact velocity,
        solved jointly; an impulse that would pull a joint outwards is dropped, and joints that
        the impulse sends through their own limit join the set.
        """
        dt, e = self.dt, self.restitution
        lower, upper = self.lower, self.upper

        def outwards(v):
            trial = q + dt * v
            return ((trial < lower) & (v < 0)) | ((trial > upper) & (v > 0))
        hit = set(np.flatnonzero(outwards(qd_new)).tolist())
        Minv = np.linalg.inv(crba(self.model, q))
        v, impulse = qd_new.copy(), np.zeros(self.model.n)
        is_lower = (q + dt * qd_new < lower) | (q <= lower)
        for _ in range(4 * self.model.n + 4):
            if not hit:
                v, impulse = qd_new.copy(), np.zeros(self.model.n)
                break
            S = np.array(sorted(hit))
            lam = np.linalg.solve(Minv[np.ix_(S, S)], -(1.0 + e) * qd_new[S])
            pulling = np.where(is_lower[S], lam < 0, lam > 0)
            if pulling.any():
                hit.discard(int(S[int(np.argmax(np.abs(lam) * pulling))]))
                continue
            impulse = np.zeros(self.model.n)
            impulse[S] = lam
            v = qd_new + Minv[:, S] @ lam
            more = set(np.flatnonzero(outwards(v)).tolist()) - hit
            if not more:
                break
            hit |= more
            is_lower |= q + dt * v < lower
        return v, impulse, np.array(sorted(hit), dtype=int), is_lower

    # ---- stepping -----------------------------------------------------------------------------
    def _integrate(self, tau, extra, vmax, applied, q_new, qd_new):
        """Run the integrator's kernel from the current state; return its status (``_checked``)."""
        m = self._fd
        return self._kernel(m._model, m._ws, self._f_ext, self.q, self.qd, tau, extra,
                            self.damping, self.effort, self.lower, self.upper, self.friction,
                            self.v_eps, vmax, self.dt, applied, self._u, self._scratch, q_new,
                            qd_new)

    def step(self, tau):
        """Advance by dt with joint torques ``tau`` (model order); returns (q, qd)."""
        tau = np.asarray(tau, dtype=float)
        q, qd, dt = self.q, self.qd, self.dt
        n = self.model.n
        if tau.shape != (n,):
            raise ValueError(f'step takes {n} joint torques, got shape {tau.shape}')
        q_new, qd_new, applied = np.empty(n), np.empty(n), np.empty(n)
        if self._frictionless:
            # the common case in one compiled call: no friction, no joint pushed into a limit
            status = self._integrate(tau, self._no_torque, self.max_velocity, applied, q_new,
                                     qd_new)
            if status == 0:
                self.q, self.qd, self.applied = q_new, qd_new, applied
                self.stop_torque = self.impulse = self._no_torque
                self.t += dt
                return self.q, self.qd
            if status > 0:
                self._diverged(status - 1, q_new, qd_new)
        # friction and stops: the resting torques, the integrator, the held joints (compiled)
        friction, stop = np.empty(n), np.empty(n)
        clamped = np.clip(tau, -self.effort, self.effort)
        self._resting(q, qd, clamped - self.damping * qd, friction, stop)
        status = self._integrate(tau, friction + stop, self._no_vmax, applied, q_new, qd_new)
        if status <= 0:
            status = _hold(q, q_new, qd_new, self._rints[0], self.lower, self.upper,
                           self.max_velocity)
        if status > 0:
            self._diverged(status - 1, q_new, qd_new)
        impulse = self._no_torque
        if status == -1:
            # impacts: joints that would pass a limit moving outwards
            qd_new, impulse, hit, is_lower = self._impacts(q, qd_new)
            if not self._rk4:
                q_new = q + dt * qd_new
            q_new[hit] = np.where(is_lower[hit], self.lower[hit], self.upper[hit])
            # whatever still lies beyond a limit (rounding, RK4's positions) is put back on it
            below, above = q_new < self.lower, q_new > self.upper
            if below.any() or above.any():
                q_new = np.clip(q_new, self.lower, self.upper)
                qd_new[below & (qd_new < 0)] = 0.0
                qd_new[above & (qd_new > 0)] = 0.0
            bad = np.flatnonzero(~np.isfinite(q_new) | ~np.isfinite(qd_new)
                                 | (np.abs(qd_new) > self.max_velocity))
            if bad.size:
                self._diverged(int(bad[0]), q_new, qd_new)
        self.q, self.qd, self.applied = q_new, qd_new, applied
        self.stop_torque, self.impulse = stop, impulse
        self.t += dt
        return self.q, self.qd

    def _not_positive(self):
        raise SimulationDiverged(f'the mass matrix is not positive definite at '
                                 f't = {self.t:.4f} s (q = {np.round(self.q, 4).tolist()})')

    def _diverged(self, j, q_new, qd_new):
        name = self.model.joint_names[j]
        unit = 'm/s' if self.model.jtype[j] == PRISMATIC else 'rad/s'
        if not (np.isfinite(q_new[j]) and np.isfinite(qd_new[j])):
            raise SimulationDiverged(f'the state of joint {name} became NaN/Inf at '
                                     f't = {self.t:.4f} s')
        raise SimulationDiverged(f'joint {name} reached a velocity of {qd_new[j]:.3g} {unit} '
                                 f'(limit for the simulation {self.max_velocity[j]:.3g} {unit}, '
                                 f'100x the URDF velocity limit) at t = {self.t:.4f} s')


def initial_pose(model, joints, initial_positions=()):
    """
    (q0 in model order, where it came from) for a simulation start.

    ``initial_positions`` (in ``joints`` order) when given; else the ``initial_value`` of the
    position state interfaces in the description's ``<ros2_control>`` blocks (what ros2_control's
    mock hardware starts at), for the joints that have one; else zero clamped into each joint's
    position limits.
    """
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    q0 = np.clip(np.zeros(model.n), lo, hi)
    if len(initial_positions):
        if len(initial_positions) != len(joints):
            raise ValueError(f'initial_positions needs {len(joints)} values (one per joint of '
                             f'{list(joints)}), got {len(initial_positions)}')
        values = _per_joint(initial_positions, len(joints), 'initial_positions')
        q0[[model.index(j) for j in joints]] = values
        return q0, 'the initial_positions parameter'
    initial = {j: v for j, v in model.ros2_control.initial_positions.items()
               if j in model.joint_names}
    for j, v in initial.items():
        q0[model.index(j)] = v
    if initial:
        return q0, ('the initial_value of the <ros2_control> position state interfaces; zero '
                    'clamped into the limits for the others')
    return q0, 'zero clamped into the joint limits'


def _per_joint(values, n, what):
    a = np.asarray(values, dtype=float).ravel()
    if a.size == 1 and n != 1:
        a = np.full(n, a[0])
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise ValueError(f'{what} needs one finite value or one per joint ({n}), got {a.tolist()}')
    return a
