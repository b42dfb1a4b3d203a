"""Forward-dynamics simulation (ABA) of a RobotModel, without ROS.

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

from .dynamics import aba, crba, rnea

INTEGRATORS = ('semi_implicit_euler', 'rk4')


class SimulationDiverged(RuntimeError):
    pass


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
        tau = np.clip(np.asarray(tau, dtype=float), -self.effort, self.effort)
        self.applied = tau
        q, qd, dt = self.q, self.qd, self.dt
        f = self.coulomb(q, qd, tau - self.damping * qd)
        u = tau + f
        if self.integrator == 'semi_implicit_euler':
            qd_new = qd + dt * self.acceleration(q, qd, u)
            q_new = q + dt * qd_new
        else:
            k1v, k1a = qd, self.acceleration(q, qd, u)
            k2v, k2a = qd + 0.5 * dt * k1a, self.acceleration(q + 0.5 * dt * k1v, qd + 0.5 * dt * k1a, u)
            k3v, k3a = qd + 0.5 * dt * k2a, self.acceleration(q + 0.5 * dt * k2v, qd + 0.5 * dt * k2a, u)
            k4v, k4a = qd + dt * k3a, self.acceleration(q + dt * k3v, qd + dt * k3a, u)
            q_new = q + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
            qd_new = qd + dt / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)
        # Coulomb friction does not reverse a motion within a step: the joint stops
        reversed_ = (self.friction > 0) & (np.abs(qd) > self.v_eps) & (np.sign(qd_new) != np.sign(qd))
        if reversed_.any():
            qd_new[reversed_] = 0.0
        # hard stops
        below, above = q_new < self.lower, q_new > self.upper
        if below.any() or above.any():
            q_new = np.clip(q_new, self.lower, self.upper)
            qd_new[below & (qd_new < 0)] = 0.0
            qd_new[above & (qd_new > 0)] = 0.0
        if not (np.all(np.isfinite(q_new)) and np.all(np.isfinite(qd_new))):
            raise SimulationDiverged(f'the state became NaN/Inf at t = {self.t:.4f} s')
        fast = np.abs(qd_new) > self.max_velocity
        if fast.any():
            j = int(np.flatnonzero(fast)[0])
            raise SimulationDiverged(
                f'joint {self.model.joint_names[j]} reached {qd_new[j]:.3g} (> '
                f'{self.max_velocity[j]:.3g}) at t = {self.t:.4f} s')
        self.q, self.qd = q_new, qd_new
        self.t += dt
        return self.q, self.qd

    def gravity_compensation(self):
        return rnea(self.model, self.q, np.zeros(self.model.n), np.zeros(self.model.n))


def _per_joint(values, n, what):
    a = np.asarray(values, dtype=float).ravel()
    if a.size == 1 and n != 1:
        a = np.full(n, a[0])
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise ValueError(f'{what} needs one finite value or one per joint ({n}), got {a.tolist()}')
    return a
