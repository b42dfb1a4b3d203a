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
   else it slips with ``fc`` against the motion it starts. With several joints at rest the
   sticking torques are solved together (M^-1 restricted to them), dropping any joint whose
   torque would exceed its limit. A joint whose velocity friction would reverse within a step
   stops instead (no chatter);
3. ``semi_implicit_euler`` (qd += dt qdd; q += dt qd) or ``rk4`` (classic Runge-Kutta on
   (q, qd); damping inside every stage, Coulomb friction held over the step);
4. position limits are hard stops: a joint that passes one is put back on it and its velocity
   into the limit is zeroed (an inelastic stop; documented, not a spring-damper).

A NaN/Inf or a velocity above ``max_velocity`` raises ``SimulationDiverged`` and leaves the state
at its last valid value.
"""
import numpy as np
from numba import njit

from ..dynamics import aba, crba
from ..dynamics.kernels import FDab

INTEGRATORS = ('semi_implicit_euler', 'rk4')


class SimulationDiverged(RuntimeError):
    pass


@njit(cache=True)
def _semi_implicit_euler(model, ws, no_f_ext, q, qd, tau, extra, damping, effort, lower, upper,
                         friction, v_eps, vmax, dt, applied, u, qdd, q_new, qd_new):
    """
    One semi-implicit Euler step in compiled code (the numpy version costs ~2.5x more).

    Returns 0, or 1 + the index of the first joint whose state is NaN/Inf or too fast.
    """
    n = q.shape[0]
    for i in range(n):
        applied[i] = min(max(tau[i], -effort[i]), effort[i])
        u[i] = applied[i] + extra[i] - damping[i] * qd[i]
    FDab(model, ws, q, qd, u, no_f_ext, qdd)
    for i in range(n):
        qd_new[i] = qd[i] + dt * qdd[i]
        # Coulomb friction does not reverse a motion within a step: the joint stops
        if friction[i] > 0 and abs(qd[i]) > v_eps and qd_new[i] * qd[i] < 0:
            qd_new[i] = 0.0
        q_new[i] = q[i] + dt * qd_new[i]
        if q_new[i] < lower[i]:
            q_new[i] = lower[i]
            if qd_new[i] < 0:
                qd_new[i] = 0.0
        elif q_new[i] > upper[i]:
            q_new[i] = upper[i]
            if qd_new[i] > 0:
                qd_new[i] = 0.0
    for i in range(n):
        if not (np.isfinite(q_new[i]) and np.isfinite(qd_new[i])) or abs(qd_new[i]) > vmax[i]:
            return 1 + i
    return 0


class Simulator:

    def __init__(self, model, *, dt=1e-3, integrator='semi_implicit_euler', damping=None,
                 friction=None, static_friction=None, v_eps=1e-6, max_velocity=None,
                 q0=None, qd0=None, position_limits=True, effort_limits=True):
        if not dt > 0:
            raise ValueError(f'timestep must be > 0, got {dt}')
        if integrator not in INTEGRATORS:
            raise ValueError(f'integrator must be one of {INTEGRATORS}, got "{integrator}"')
        n = model.n
        self.model, self.dt, self.integrator = model, float(dt), integrator
        self.damping = _per_joint(model.damping if damping is None else damping, n, 'damping')
        self.friction = _per_joint(model.friction if friction is None else friction, n, 'friction')
        self.static_friction = (self.friction.copy() if static_friction is None else
                                _per_joint(static_friction, n, 'static_friction'))
        if np.any(self.static_friction < self.friction):
            raise ValueError('static friction must be at least the Coulomb friction')
        self.v_eps = v_eps
        vlim = model.velocity_limits
        self.max_velocity = (np.where(np.isfinite(vlim), 10 * vlim, 1e3) if max_velocity is None
                             else _per_joint(max_velocity, n, 'max_velocity'))
        self.lower = model.position_limits[:, 0] if position_limits else np.full(n, -np.inf)
        self.upper = model.position_limits[:, 1] if position_limits else np.full(n, np.inf)
        self.effort = model.effort_limits if effort_limits else np.full(n, np.inf)
        self.q = np.zeros(n) if q0 is None else _per_joint(q0, n, 'initial positions').copy()
        self.qd = np.zeros(n) if qd0 is None else _per_joint(qd0, n, 'initial velocities').copy()
        self.t = 0.0
        self.applied = np.zeros(n)          # the clamped command of the last step
        self._frictionless = not np.any(self.static_friction > 0)
        self._no_friction = np.zeros(n)
        self._u, self._qdd = np.zeros(n), np.zeros(n)

    def reset(self, q0, qd0=None):
        n = self.model.n
        self.q = _per_joint(q0, n, 'initial positions').copy()
        self.qd = np.zeros(n) if qd0 is None else _per_joint(qd0, n, 'initial velocities').copy()
        self.t = 0.0

    # ---- friction -----------------------------------------------------------------------------
    def coulomb(self, q, qd, tau):
        """Coulomb friction torques for the state and the (damped) applied torques."""
        fc, fs = self.friction, self.static_friction
        out = np.zeros(self.model.n)
        if not np.any(fs > 0):
            return out
        moving = np.abs(qd) > self.v_eps
        out[moving] = -fc[moving] * np.sign(qd[moving])
        resting = np.flatnonzero(~moving & (fs > 0))
        if resting.size == 0:
            return out
        qdd_free = aba(self.model, q, qd, tau + out)
        Minv = np.linalg.inv(crba(self.model, q))
        stick = list(resting)
        while stick:
            S = np.array(stick)
            # friction on the sticking joints that zeroes their accelerations
            f = np.linalg.solve(Minv[np.ix_(S, S)], -qdd_free[S])
            over = np.abs(f) > fs[S]
            if not over.any():
                out[S] = f
                break
            worst = int(np.argmax(np.abs(f) / np.maximum(fs[S], 1e-300)))
            j = S[worst]
            out[j] = -fc[j] * np.sign(qdd_free[j])     # slips against the motion it starts
            stick.remove(j)
            qdd_free = aba(self.model, q, qd, tau + out)
        return out

    # ---- stepping -----------------------------------------------------------------------------
    def acceleration(self, q, qd, tau):
        return aba(self.model, q, qd, tau - self.damping * qd)

    def step(self, tau):
        """Advance by dt with joint torques ``tau`` (model order); returns (q, qd)."""
        tau = np.asarray(tau, dtype=float)
        q, qd, dt = self.q, self.qd, self.dt
        if self.integrator == 'semi_implicit_euler':
            f = self._no_friction if self._frictionless else self.coulomb(
                q, qd, np.clip(tau, -self.effort, self.effort) - self.damping * qd)
            m, n = self.model, self.model.n
            q_new, qd_new, applied = np.empty(n), np.empty(n), np.empty(n)
            bad = _semi_implicit_euler(m._model, m._ws, m._no_f_ext, q, qd, tau, f, self.damping,
                                       self.effort, self.lower, self.upper, self.friction,
                                       self.v_eps, self.max_velocity, dt, applied, self._u,
                                       self._qdd, q_new, qd_new)
            if bad:
                self._diverged(bad - 1, q_new, qd_new)
            self.applied = applied
        else:
            tau = np.clip(tau, -self.effort, self.effort)
            self.applied = tau
            f = self.coulomb(q, qd, tau - self.damping * qd)
            u = tau + f
            k1v, k1a = qd, self.acceleration(q, qd, u)
            k2v = qd + 0.5 * dt * k1a
            k2a = self.acceleration(q + 0.5 * dt * k1v, k2v, u)
            k3v = qd + 0.5 * dt * k2a
            k3a = self.acceleration(q + 0.5 * dt * k2v, k3v, u)
            k4v = qd + dt * k3a
            k4a = self.acceleration(q + dt * k3v, k4v, u)
            q_new = q + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
            qd_new = qd + dt / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)
            reversed_ = ((self.friction > 0) & (np.abs(qd) > self.v_eps)
                         & (qd_new * qd < 0))
            qd_new[reversed_] = 0.0
            below, above = q_new < self.lower, q_new > self.upper
            q_new = np.clip(q_new, self.lower, self.upper)
            qd_new[below & (qd_new < 0)] = 0.0
            qd_new[above & (qd_new > 0)] = 0.0
            bad = np.flatnonzero(~np.isfinite(q_new) | ~np.isfinite(qd_new)
                                 | (np.abs(qd_new) > self.max_velocity))
            if bad.size:
                self._diverged(int(bad[0]), q_new, qd_new)
        self.q, self.qd = q_new, qd_new
        self.t += dt
        return self.q, self.qd

    def _diverged(self, j, q_new, qd_new):
        name = self.model.joint_names[j]
        if not (np.isfinite(q_new[j]) and np.isfinite(qd_new[j])):
            raise SimulationDiverged(f'the state of joint {name} became NaN/Inf at '
                                     f't = {self.t:.4f} s')
        raise SimulationDiverged(f'joint {name} reached {qd_new[j]:.3g} (> '
                                 f'{self.max_velocity[j]:.3g}) at t = {self.t:.4f} s')


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
