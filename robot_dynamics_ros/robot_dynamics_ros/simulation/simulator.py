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
   a moving joint (``|qd|`` > ``v_eps``) feels ``-fc sgn(qd)``; a joint at rest sticks (friction
   cancels whatever would accelerate it) while the torque needed for that stays within ``fs``,
   else it slips with ``fc`` against the motion it starts. A joint whose velocity friction would
   reverse within a step stops instead (no chatter). ``friction_asymmetry`` a makes it depend
   on the direction, as a real gear's does: fc + a (and fs + a) forwards, fc - a backwards (a
   constant -a beside symmetric friction);
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

A step is one call into compiled code; ``run(tau, steps)`` makes many steps in one (a torque
profile or a free-running arm, with no Python between the steps). A NaN/Inf or a velocity
above ``max_velocity`` raises ``SimulationDiverged`` and leaves the state at its last valid
value. A model whose mass matrix is singular is refused at construction.
"""
import numpy as np
from numba import njit

from ..dynamics import PRISMATIC
from ..dynamics.kernels import FDab, HandC, load_overload_for
from ..dynamics.linalg import cholesky, cholesky_solve
from ..dynamics.values import per_joint
from . import contact as _contact
from .geometry import no_geometry
from .world import World

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
def _semi_implicit_euler(model, ws, f_ext, q, qd, applied, extra, damping, lower, upper,
                         friction, v_eps, vmax, dt, u, qdd, q_new, qd_new):
    """
    One semi-implicit Euler step in compiled code (the numpy version costs ~2.5x more).

    ``applied``: the commanded torques, clamped to the effort limits.

    Returns 0; -1 when a joint would pass a position limit moving outwards (the caller resolves
    the stops: ``_resting_torques``, ``_hold``, the impacts); or 1 + the index of the first joint
    whose state is NaN/Inf or faster than ``vmax``.
    """
    n = q.shape[0]
    for i in range(n):
        u[i] = applied[i] + extra[i] - damping[i] * qd[i]
    FDab(model, ws, q, qd, u, f_ext, qdd)
    return _euler_update(q, qd, qdd, friction, v_eps, dt, lower, upper, vmax, q_new, qd_new)


@njit(cache=True, inline='always')
def _euler_update(q, qd, qdd, friction, v_eps, dt, lower, upper, vmax, q_new, qd_new):
    """Update qd += dt qdd, then q += dt qd (the new qd); return as ``_checked``."""
    n = q.shape[0]
    for i in range(n):
        qd_new[i] = qd[i] + dt * qdd[i]
        # Coulomb friction does not reverse a motion within a step: the joint stops
        if friction[i] > 0 and abs(qd[i]) > v_eps and qd_new[i] * qd[i] < 0:
            qd_new[i] = 0.0
        q_new[i] = q[i] + dt * qd_new[i]
    return _checked(q_new, qd_new, lower, upper, vmax)


@njit(cache=True)
def _rk4(model, ws, f_ext, q, qd, applied, extra, damping, lower, upper, friction, v_eps, vmax,
         dt, u, k, q_new, qd_new):
    """
    One classic Runge-Kutta step on (q, qd) in compiled code (was ~80 us in numpy on panda).

    The viscous damping acts in every stage, ``extra`` (friction and stop torques) is held over
    the step. ``k``: an (8, n) scratch array: stage velocities k[0:4], accelerations k[4:8], with
    q_new as the stages' positions until the end. Returns as ``_semi_implicit_euler``.
    """
    n = q.shape[0]
    for i in range(n):
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


STICKING, AT_LOWER, AT_UPPER, HELD, ACTIVE = 1, 2, 4, 8, 16


@njit(cache=True)
def _resting_torques(model, ws, f_ext, q, qd, tau, fc, fs, eps, lower, upper, friction, stop,
                     w, mats, ints):
    """
    Friction and stop torques (see ``Simulator.resting_torques``) in compiled code.

    ``tau``: the applied torques with damping; ``w`` (8, n), ``mats`` (3, n, n) and ``ints``
    (3, n) scratch; ``ints[0]`` ends with the joints held (stuck, or on a stop) marked ``HELD``.
    With the held set S and the free joints F, M qdd + C = u + S^T lam and qdd_S = 0 give
    M_FF qdd_F = r_F and lam = M_SF qdd_F - r_S (r = u - C): one factorization of M_FF, and
    with every joint held none. With any candidate (a joint that may stick or rest on a stop)
    the accelerations that go with the result are left in ``w[6]`` (zero at the held joints)
    and it returns 1; 0 without a candidate (nothing computed), -1 when the mass matrix is not
    positive definite.
    """
    n = q.shape[0]
    lo, hi, C, r, x, lam, qdd, qdd_free = w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]
    M, LF, L = mats[0], mats[1], mats[2]
    kind, active, free = ints[0], ints[1], ints[2]
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
            kind[i] |= ACTIVE
            active[k] = i
            k += 1
    if k == 0:
        return 0
    M[:, :] = 0.0
    HandC(model, ws, q, qd, f_ext, M, C)
    factored = False                    # L: the factor of all of M, made on the first slip
    while True:
        # the free joints' accelerations with the active ones held, and the torques holding them
        nf = 0
        for i in range(n):
            r[i] = tau[i] + friction[i] - C[i]
            qdd[i] = 0.0
            if not kind[i] & ACTIVE:
                free[nf] = i
                nf += 1
        for a in range(nf):
            x[a] = r[free[a]]
            for b in range(a + 1):
                LF[a, b] = M[free[a], free[b]]
        if nf and not cholesky(LF, nf):
            return -1
        cholesky_solve(LF, x, nf)
        for a in range(nf):
            qdd[free[a]] = x[a]
        if k == 0:
            return 1
        for a in range(k):
            i = active[a]
            lam[a] = -r[i]
            for b in range(nf):
                lam[a] += M[i, free[b]] * x[b]
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
            return 1
        j = active[leaves]                  # the worst violation leaves the set
        for a in range(leaves, k - 1):
            active[a] = active[a + 1]
        k -= 1
        kind[j] &= ~ACTIVE
        if kind[j] & STICKING:
            # slips: kinetic friction against the motion it starts (when the stop, if any,
            # does not take the push); its direction: the acceleration with no joint held
            if not factored:
                for a in range(n):
                    for b in range(a + 1):
                        L[a, b] = M[a, b]
                if not cholesky(L, n):
                    return -1
                factored = True
            qdd_free[:] = r
            cholesky_solve(L, qdd_free, n)
            direction = qdd_free[j]
            if (kind[j] & AT_LOWER and direction < 0) or (kind[j] & AT_UPPER and direction > 0):
                continue
            friction[j] = -fc[j] * np.sign(direction)


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


@njit(cache=True)
def _impacts(model, ws, f_ext, q, qd, qd_new, lower, upper, dt, e, v, impulse, hit, is_lower, S,
             lam, C, mats):
    """
    Resolve the impacts of joints that would pass a limit moving outwards (``Simulator.step``).

    Fills ``v`` (the velocities after the impacts), ``impulse`` (the generalized impulse),
    ``hit`` (1: the joint was stopped) and ``is_lower`` (1: at its lower limit). The impulse
    M^-1 S^T lambda sets the hit joints' velocities to -e times their impact velocities,
    solved jointly; an impulse that would pull a joint outwards is dropped (the largest first),
    and joints that the impulse sends through their own limit join the set. ``M`` of ``model``
    (the true one: no implicit damping), by ``HandC`` as the resting torques (one kernel to
    compile; its bias ``C`` is not needed here). Returns 0, or -1 when M is not positive
    definite.
    """
    n = q.shape[0]
    M, Minv, A = mats[0], mats[1], mats[2]
    for i in range(n):
        trial = q[i] + dt * qd_new[i]
        hit[i] = (trial < lower[i] and qd_new[i] < 0) or (trial > upper[i] and qd_new[i] > 0)
        is_lower[i] = trial < lower[i] or q[i] <= lower[i]
        v[i], impulse[i] = qd_new[i], 0.0
    M[:, :] = 0.0
    HandC(model, ws, q, qd, f_ext, M, C)
    if not cholesky(M, n):
        return -1
    for j in range(n):
        lam[:] = 0.0
        lam[j] = 1.0
        cholesky_solve(M, lam, n)
        Minv[:, j] = lam
    for _ in range(4 * n + 4):
        k = 0
        for i in range(n):
            if hit[i]:
                S[k] = i
                k += 1
        if k == 0:
            for i in range(n):
                v[i], impulse[i] = qd_new[i], 0.0
            break
        for a in range(k):
            lam[a] = -(1.0 + e) * qd_new[S[a]]
            for b in range(k):
                A[a, b] = Minv[S[a], S[b]]
        cholesky(A, k)
        cholesky_solve(A, lam, k)
        drop, largest = -1, 0.0
        for a in range(k):
            pulling = lam[a] < 0 if is_lower[S[a]] else lam[a] > 0
            if pulling and abs(lam[a]) > largest:
                drop, largest = a, abs(lam[a])
        if drop >= 0:
            hit[S[drop]] = 0
            continue
        for i in range(n):
            impulse[i] = 0.0
            v[i] = qd_new[i]
        for a in range(k):
            impulse[S[a]] = lam[a]
            for i in range(n):
                v[i] += Minv[i, S[a]] * lam[a]
        more = False
        for i in range(n):
            trial = q[i] + dt * v[i]
            if not hit[i] and ((trial < lower[i] and v[i] < 0) or (trial > upper[i] and v[i] > 0)):
                hit[i] = 1
                more = True
        if not more:
            break
        for i in range(n):
            if q[i] + dt * v[i] < lower[i]:
                is_lower[i] = 1
    return 0


# rows of Simulator._params (per joint) and _consts
DAMPING, EFFORT, LOWER, UPPER, FC, FS, VMAX, NO_VMAX, ASYMMETRY = range(9)
V_EPS, DT, RESTITUTION, FRICTIONLESS = range(4)
# rows of the per-step results (``last``) and of the scratch
APPLIED, FRICTION, STOP, IMPULSE = range(4)
Q, QD, U, REST_TAU, EXTRA, QD_HIT, LAM, RW, QDD = 0, 1, 2, 3, 4, 5, 6, 7, 15
NOT_POSITIVE = -2


@njit(cache=True, inline='always')
def _integrate(fd, fd_ws, f_ext, q, qd, applied, extra, params, consts, vmax, u, qdd, k, q_new,
               qd_new):
    """
    Run the integrator: semi-implicit Euler when ``k`` is None, else RK4 with ``k`` its stages.

    ``k is None`` is known when numba compiles: a simulator compiles only its own integrator.
    """
    if k is None:
        return _semi_implicit_euler(fd, fd_ws, f_ext, q, qd, applied, extra, params[DAMPING],
                                    params[LOWER], params[UPPER], params[FC], consts[V_EPS],
                                    vmax, consts[DT], u, qdd, q_new, qd_new)
    return _rk4(fd, fd_ws, f_ext, q, qd, applied, extra, params[DAMPING], params[LOWER],
                params[UPPER], params[FC], consts[V_EPS], vmax, consts[DT], u, k, q_new, qd_new)


@njit(cache=True)
def _step(fd, fd_ws, model, ws, f_ext, q, qd, tau, params, consts, q_new, qd_new, last,
          scratch, k, mats, ints):
    """
    Make one whole step (see ``Simulator.step``).

    Returns 0, 1 + the first joint whose state is NaN/Inf or too fast, or NOT_POSITIVE (the
    mass matrix). ``fd``: the model the integrator and the resting torques use (semi-implicit
    Euler: with the implicit damping in its armature), ``model``: the true one, for the
    impacts. ``k``: None (semi-implicit Euler) or the stages of RK4 (see ``_integrate``).
    """
    n = q.shape[0]
    damping, effort, lower, upper = params[DAMPING], params[EFFORT], params[LOWER], params[UPPER]
    fc, fs, vmax, no_vmax = params[FC], params[FS], params[VMAX], params[NO_VMAX]
    v_eps, dt, e = consts[V_EPS], consts[DT], consts[RESTITUTION]
    applied, friction, stop, impulse = last[APPLIED], last[FRICTION], last[STOP], last[IMPULSE]
    u, extra, qdd = scratch[U], scratch[EXTRA], scratch[QDD]
    for i in range(n):
        applied[i] = min(max(tau[i], -effort[i]), effort[i])
        friction[i] = stop[i] = impulse[i] = extra[i] = 0.0
    if consts[FRICTIONLESS] != 0.0:
        # the common case in one pass: no friction, no joint pushed into a limit
        status = _integrate(fd, fd_ws, f_ext, q, qd, applied, extra, params, consts, vmax, u,
                            qdd, k, q_new, qd_new)
        if status >= 0:
            return status
    # friction and stops: the resting torques, the integrator, the held joints
    rest_tau = scratch[REST_TAU]
    asymmetry = params[ASYMMETRY]       # friction fc + a moving forwards, fc - a backwards
    for i in range(n):
        rest_tau[i] = applied[i] - damping[i] * qd[i] - asymmetry[i]
    factored = _resting_torques(fd, fd_ws, f_ext, q, qd, rest_tau, fc, fs, v_eps, lower,
                                upper, friction, stop, scratch[RW:RW + 8], mats, ints[0:3])
    if factored < 0:
        return NOT_POSITIVE
    for i in range(n):
        extra[i] = friction[i] + stop[i] - asymmetry[i]
    if k is None and factored:
        # Euler: the accelerations came with the resting torques (what FDab would give again)
        status = _euler_update(q, qd, scratch[RW + 6], fc, v_eps, dt, lower, upper, no_vmax,
                               q_new, qd_new)
    else:
        status = _integrate(fd, fd_ws, f_ext, q, qd, applied, extra, params, consts, no_vmax, u,
                            qdd, k, q_new, qd_new)
    if status <= 0:
        status = _hold(q, q_new, qd_new, ints[0], lower, upper, vmax)
    if status != -1:
        return status
    # impacts: joints that would pass a limit moving outwards
    qd_hit = scratch[QD_HIT]
    qd_hit[:] = qd_new
    hit, is_lower = ints[3], ints[4]
    if _impacts(model, ws, f_ext, q, qd, qd_hit, lower, upper, dt, e, qd_new, impulse, hit,
                is_lower, ints[5], scratch[LAM], scratch[RW + 2], mats) < 0:
        return NOT_POSITIVE
    for i in range(n):
        if k is None:
            q_new[i] = q[i] + dt * qd_new[i]        # Euler: from the velocities after impact
        if hit[i]:
            q_new[i] = lower[i] if is_lower[i] else upper[i]
        # whatever still lies beyond a limit (rounding, RK4's positions) is put back on it
        if q_new[i] < lower[i]:
            q_new[i] = lower[i]
            qd_new[i] = max(qd_new[i], 0.0)
        elif q_new[i] > upper[i]:
            q_new[i] = upper[i]
            qd_new[i] = min(qd_new[i], 0.0)
    for i in range(n):
        if not (np.isfinite(q_new[i]) and np.isfinite(qd_new[i])) or abs(qd_new[i]) > vmax[i]:
            return 1 + i
    return 0


@njit(cache=True)
def _run(fd, fd_ws, model, ws, f_ext, q0, qd0, taus, params, consts, qs, qds, last, scratch,
         k, mats, ints):
    """
    Make ``len(qs)`` steps from (q0, qd0).

    Step s applies ``taus[s]`` (``taus[0]`` throughout when it has one row) and leaves its state
    in qs[s], qds[s].

    Returns (status, steps done): status as ``_step``; on a failure in step s, qs[s] and qds[s]
    hold the failed step's values and s steps are done.
    """
    n = q0.shape[0]
    q, qd = scratch[Q], scratch[QD]
    for i in range(n):
        q[i], qd[i] = q0[i], qd0[i]
    for s in range(qs.shape[0]):
        status = _step(fd, fd_ws, model, ws, f_ext, q, qd, taus[s if taus.shape[0] > 1 else 0],
                       params, consts, qs[s], qds[s], last, scratch, k, mats, ints)
        if status != 0:
            return status, s
        for i in range(n):
            q[i], qd[i] = qs[s, i], qds[s, i]
    return 0, qs.shape[0]


@njit(cache=True)
def _run_world(fd, fd_ws, model, ws, f_ext, q0, qd0, taus, params, consts, qs, qds, last,
               scratch, k, mats, ints, geo, shapes, cparams, cstate, cs, ci, kin, f_c, stats):
    """
    Run ``_run``'s steps with a world.

    Each step's contact forces (``contact.contact_forces``, implicit) join the external
    wrenches of an ordinary step.

    ``geo`` (body, points, radius), ``shapes`` (kind, R, position, half, friction),
    ``cparams`` (stiffness, damping ratio), ``cstate`` (anchor, touching, force, where);
    ``cs``, ``ci``, ``kin``, ``f_c``: the contact's scratch; ``stats``: see ``contact``.
    """
    n = q0.shape[0]
    geo_body, geo_pts, geo_r = geo
    sh_kind, sh_R, sh_p, sh_half, sh_mu = shapes
    anchor, touching, force, where = cstate
    effort, damping = params[EFFORT], params[DAMPING]
    q, qd, applied = scratch[Q], scratch[QD], scratch[U]
    for i in range(n):
        q[i], qd[i] = q0[i], qd0[i]
    for s in range(qs.shape[0]):
        tau = taus[s if taus.shape[0] > 1 else 0]
        for i in range(n):
            applied[i] = min(max(tau[i], -effort[i]), effort[i])
        if _contact.contact_forces(fd, fd_ws, q, qd, applied, damping, params[LOWER],
                                   params[UPPER], consts[DT], f_ext, kin,
                                   geo_body, geo_pts, geo_r, sh_kind, sh_R, sh_p, sh_half, sh_mu,
                                   cparams[0], cparams[1], anchor, touching, force, where, f_c,
                                   cs, ci, stats) < 0:
            return NOT_POSITIVE, s
        status = _step(fd, fd_ws, model, ws, f_c, q, qd, tau, params, consts, qs[s], qds[s],
                       last, scratch, k, mats, ints)
        if status != 0:
            return status, s
        for i in range(n):
            q[i], qd[i] = qs[s, i], qds[s, i]
    return 0, qs.shape[0]


class Simulator:

    def __init__(self, model, *, dt=1e-3, integrator='semi_implicit_euler', damping=None,
                 friction=None, static_friction=None, v_eps=1e-6, max_velocity=None,
                 q0=None, qd0=None, position_limits=True, effort_limits=True, restitution=0.0,
                 friction_asymmetry=None, world=None, geometry=None):
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
        self.damping = per_joint(model.damping if damping is None else damping, n, 'damping',
                                 low=0.0)
        self.friction = per_joint(model.friction if friction is None else friction, n,
                                  'friction', low=0.0)
        self.static_friction = (self.friction.copy() if static_friction is None else
                                per_joint(static_friction, n, 'static_friction', low=0.0))
        if np.any(self.static_friction < self.friction):
            raise ValueError('static friction must be at least the Coulomb friction')
        # a friction that differs with the direction of motion: fc + a forwards, fc - a
        # backwards (and static friction alike), i.e. symmetric friction and a constant -a
        asym = np.zeros(n) if friction_asymmetry is None else \
            per_joint(friction_asymmetry, n, 'friction_asymmetry')
        if np.any(np.abs(asym) > self.friction):
            raise ValueError(f'friction_asymmetry needs one value or one per joint ({n}), each '
                             f'within +-friction {self.friction.tolist()} (a friction that '
                             f'pushes is no friction), got {asym.tolist()}')
        self.friction_asymmetry = asym
        self.v_eps = v_eps
        vlim = model.velocity_limits
        self.max_velocity = (np.where(np.isfinite(vlim), 100 * vlim, 1e3) if max_velocity is None
                             else per_joint(max_velocity, n, 'max_velocity', low=0.0,
                                            strict=True))
        self.lower = model.position_limits[:, 0] if position_limits else np.full(n, -np.inf)
        self.upper = model.position_limits[:, 1] if position_limits else np.full(n, np.inf)
        self.effort = model.effort_limits if effort_limits else np.full(n, np.inf)
        self.q = np.zeros(n) if q0 is None else per_joint(q0, n, 'initial positions')
        self.qd = np.zeros(n) if qd0 is None else per_joint(qd0, n, 'initial velocities')
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
        self._rk4 = integrator == 'rk4'
        # what the compiled step takes: per joint ``_params`` (rows DAMPING..NO_VMAX) and
        # ``_consts``; its scratch (the stages of rk4, the resting torques' and the impacts'
        # vectors and matrices)
        self._params = np.array([self.damping, self.effort, self.lower, self.upper,
                                 self.friction, self.static_friction, self.max_velocity,
                                 np.full(n, np.inf), self.friction_asymmetry])
        self._consts = np.array([v_eps, self.dt, self.restitution,
                                 float(not np.any(self.static_friction > 0))])
        self._scratch = np.zeros((QDD + 1, n))
        self._k = np.zeros((8, n)) if self._rk4 else None
        self._mats = np.zeros((3, n, n))
        self._ints = np.zeros((6, n), dtype=np.int64)
        self.wrenches = {}                  # link -> [fx, fy, fz, tx, ty, tz] in the link frame
        self._f_ext = np.zeros((n, 6))      # the same as body wrenches, as the kernels take them
        # contact: the arm's contact spheres (``geometry.arm_geometry``) and the world's shapes
        self.geometry = no_geometry() if geometry is None else geometry
        self.contact_stats = np.zeros(3, dtype=np.int64)
        self.set_world(World() if world is None else world)
        self._warm_up()

    def _warm_up(self):
        """
        Run the compiled step once on the start state, keeping nothing.

        It compiles (or loads from the numba cache) now, not in the first step of a run.
        """
        n = self.model.n
        kept = [a.copy() for a in self._cstate] if self._world_on else None
        kernel, args = self._kernel_call(np.zeros((1, n)), np.empty((1, n)), np.empty((1, n)),
                                         np.empty((4, n)))
        # from numba's cache without its refresh of every implementation it has (0.4 CPU-s
        # and SciPy's import at each simulator's start); compiled by the call where it is not
        load_overload_for(kernel, args)
        kernel(*args)
        if kept is not None:
            for a, b in zip(self._cstate, kept):
                a[...] = b

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

    def set_world(self, world, geometry=None):
        """
        Use ``world`` (a ``World``) from now on: its shapes and contact parameters.

        Contacts that went on go on where the shape still is (their anchors are forgotten only
        when the new world has other shapes). ``geometry``: the arm's contact spheres, when
        they change (``geometry.arm_geometry``).
        """
        if geometry is not None and geometry is not self.geometry:
            self.geometry = geometry
            self.world = None
            self.__dict__.pop('_kin', None)
        n, P, S = self.model.n, self.geometry.size, len(world.shapes)
        old = getattr(self, 'world', None)
        same = old is not None and [s.name for s in old.shapes] == [s.name for s in world.shapes]
        self.world = world
        self._world_on = P > 0 and S > 0
        if not self._world_on:
            return
        self._shapes = (np.array([_contact.PLANE if s.type == 'plane' else _contact.BOX
                                  for s in world.shapes], dtype=np.int64),
                        np.array([s.rotation for s in world.shapes], dtype=float),
                        np.array([s.position for s in world.shapes], dtype=float),
                        np.array([s.half for s in world.shapes], dtype=float),
                        np.array([world.friction(s) for s in world.shapes], dtype=float))
        self._cparams = np.array([world.contact['stiffness'], world.contact['damping_ratio']])
        if not same:
            self._cstate = (np.zeros((P, S, 3)), np.zeros((P, S), dtype=np.int64),
                            np.zeros((P, S, 3)), np.zeros((P, S, 3)))
            self._cs, self._ci = _contact.contact_scratch(n, P * S)
        if not hasattr(self, '_kin'):
            g = self.geometry
            self._geo = (g.body, np.ascontiguousarray(g.points), g.radius)
            self._kin = _contact.kinematics_scratch(n)
            self._f_c = np.zeros((n, 6))
            if hasattr(self, 'applied'):
                self._warm_up()             # compile (or load) the contact step now

    def contacts(self):
        """
        Return the contacts of the last step, one per (link, shape) touching.

        A list of dicts with ``link``, ``shape``, ``force`` (N, on the arm, root frame; the sum
        over the link's contact points on that shape), ``position`` (m, where it acts: the
        points' force-weighted mean) and ``points`` (how many).
        """
        if not self._world_on:
            return []
        _, touching, force, where = self._cstate
        out = {}
        for p, s in zip(*np.nonzero(touching)):
            key = (self.geometry.links[self.geometry.link[p]], self.world.shapes[s].name)
            c = out.setdefault(key, [np.zeros(3), np.zeros(3), 0.0, 0])
            f = force[p, s]
            c[0] += f
            c[1] += np.linalg.norm(f) * where[p, s]
            c[2] += np.linalg.norm(f)
            c[3] += 1
        return [{'link': link, 'shape': shape, 'force': f, 'points': count,
                 'position': w / total if total > 0 else w}
                for (link, shape), (f, w, total, count) in out.items()]

    def contact_wrenches(self):
        """
        Return {link: [fx, fy, fz, tx, ty, tz]}: the wrenches the last step's contacts exert.

        In each link's frame about its origin: ``set_wrench``'s and ``rnea``'s f_ext convention.
        """
        from ..dynamics.frames import frame_placement
        out, placements = {}, {}
        if not self._world_on:
            return out
        _, touching, force, where = self._cstate
        for p, s in zip(*np.nonzero(touching)):
            link = self.geometry.links[self.geometry.link[p]]
            if link not in placements:
                placements[link] = frame_placement(self.model, self.q, link)
            T = placements[link]
            R = T[:3, :3]
            f = R.T @ force[p, s]
            w = out.setdefault(link, np.zeros(6))
            w[:3] += f
            w[3:] += np.cross(R.T @ (where[p, s] - T[:3, 3]), f)
        return out

    def reset(self, q0, qd0=None):
        n = self.model.n
        self.q = per_joint(q0, n, 'initial positions')
        self.qd = np.zeros(n) if qd0 is None else per_joint(qd0, n, 'initial velocities')
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
        n, m = self.model.n, self._fd
        friction, stop = np.zeros(n), np.zeros(n)
        if _resting_torques(m._model, m._ws, self._f_ext, per_joint(q, n, 'positions'),
                            per_joint(qd, n, 'velocities'), per_joint(tau, n, 'torques'),
                            self.friction, self.static_friction, self.v_eps, self.lower,
                            self.upper, friction, stop, self._scratch[RW:RW + 8], self._mats,
                            self._ints[0:3]) < 0:
            self._not_positive()
        return friction, stop

    # ---- stepping -----------------------------------------------------------------------------
    def _kernel(self, taus, qs, qds, last):
        """Run ``len(qs)`` compiled steps from the current state; (status, steps done)."""
        kernel, args = self._kernel_call(taus, qs, qds, last)
        return kernel(*args)

    def _kernel_call(self, taus, qs, qds, last):
        """Return the compiled run (with the world's contact or without) and its arguments."""
        fd, m = self._fd, self.model
        if self._world_on:
            return _run_world, (fd._model, fd._ws, m._model, m._ws, self._f_ext, self.q,
                                self.qd, taus, self._params, self._consts, qs, qds, last,
                                self._scratch, self._k, self._mats, self._ints, self._geo,
                                self._shapes, self._cparams, self._cstate, self._cs, self._ci,
                                self._kin, self._f_c, self.contact_stats)
        return _run, (fd._model, fd._ws, m._model, m._ws, self._f_ext, self.q, self.qd, taus,
                      self._params, self._consts, qs, qds, last, self._scratch, self._k,
                      self._mats, self._ints)

    def step(self, tau):
        """Advance by dt with joint torques ``tau`` (model order); returns (q, qd)."""
        tau = np.ascontiguousarray(tau, dtype=float)    # a strided view would compile anew
        n = self.model.n
        if tau.shape != (n,):
            raise ValueError(f'step takes {n} joint torques, got shape {tau.shape}')
        out = np.empty((6, n))      # q, qd, then the step's applied, friction, stop, impulse
        status, _ = self._kernel(tau.reshape(1, n), out[0:1], out[1:2], out[2:])
        if status != 0:
            self._failed(status, out[0], out[1])
        self.q, self.qd = out[0], out[1]
        self.applied, self.stop_torque, self.impulse = out[2 + APPLIED], out[2 + STOP], \
            out[2 + IMPULSE]
        self.t += self.dt
        return self.q, self.qd

    def run(self, tau, steps=None):
        """
        Advance by ``steps`` steps in one compiled loop; return the states (qs, qds).

        ``tau``: joint torques (model order) held throughout, or one row per step (then
        ``steps`` may be omitted). qs[s], qds[s] is the state after step s; afterwards the
        simulator is where ``step`` called that many times would leave it (state, time, the last
        step's ``applied``, ``stop_torque`` and ``impulse``). No Python runs between the steps:
        for simulating a torque profile or a free-running arm, not for a controller in the loop.
        A divergence raises ``SimulationDiverged`` with the state left at the last valid step.
        """
        n = self.model.n
        taus = np.ascontiguousarray(tau, dtype=float)
        if taus.shape == (n,):
            taus = taus.reshape(1, n)
            if steps is None:
                raise ValueError('run: give steps with a constant torque')
        elif taus.ndim == 2 and taus.shape[1] == n and taus.shape[0] > 0:
            if steps is None:
                steps = taus.shape[0]
            if taus.shape[0] != steps:
                raise ValueError(f'run: {taus.shape[0]} rows of torques for {steps} steps')
        else:
            raise ValueError(f'run takes {n} joint torques, or one row of {n} per step; got '
                             f'shape {taus.shape}')
        steps = int(steps)
        if steps < 1:
            raise ValueError(f'run: steps must be >= 1, got {steps}')
        qs, qds, last = np.empty((steps, n)), np.empty((steps, n)), np.empty((4, n))
        status, done = self._kernel(taus, qs, qds, last)
        if done:
            self.q, self.qd = qs[done - 1].copy(), qds[done - 1].copy()
            self.t += done * self.dt
        if status != 0:         # applied, stop_torque and impulse stay those before the run
            self._failed(status, qs[done], qds[done])
        self.applied, self.stop_torque, self.impulse = last[APPLIED], last[STOP], last[IMPULSE]
        return qs, qds

    def _failed(self, status, q_new, qd_new):
        if status == NOT_POSITIVE:
            self._not_positive()
        self._diverged(status - 1, q_new, qd_new)

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
    mock hardware starts at), for the joints that have one; else zero clamped to
    ``START_MARGIN`` of the range inside each joint's limits (``start_pose``).
    """
    q0 = start_pose(model)
    if len(initial_positions):
        if len(initial_positions) != len(joints):
            raise ValueError(f'initial_positions needs {len(joints)} values (one per joint of '
                             f'{list(joints)}), got {len(initial_positions)}')
        values = per_joint(initial_positions, len(joints), 'initial_positions')
        q0[[model.index(j) for j in joints]] = values
        return q0, 'the initial_positions parameter'
    initial = {j: v for j, v in model.ros2_control.initial_positions.items()
               if j in model.joint_names}
    for j, v in initial.items():
        q0[model.index(j)] = v
    if initial:
        return q0, ('the initial_value of the <ros2_control> position state interfaces; zero '
                    f'clamped to {START_MARGIN:.0%} of the range inside the limits for the '
                    'others')
    return q0, f'zero clamped to {START_MARGIN:.0%} of the range inside the joint limits'


# A start pose at zero clamped into the limits rests some arms on their stops (kinova on three,
# panda's joint4 at 0.07 rad from its stop): a stop's reaction is an external torque to the
# observer and a jolt to the first command. The default start keeps this share of each joint's
# range away from either limit.
START_MARGIN = 0.1


def start_pose(model):
    """
    Zero clamped to ``START_MARGIN`` of the range inside each joint's position limits.

    A joint with one infinite limit is clamped to its finite one (no range to take a share of).
    """
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    span = np.where(np.isfinite(hi - lo), hi - lo, 0.0)
    return np.clip(np.zeros(model.n), lo + START_MARGIN * span, hi - START_MARGIN * span)
