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
``~/estimate_payload``'s procedure in process: the simulated arm and feedforward_node's loop.

The arm is simulated carrying a payload its controller's model lacks; feedforward_node's
ControlLoop runs with the node's parameter defaults (kp 100, kd 20, the limits layer, the
observer fed the simulated efforts) but for what is given, and each command acts ``delay``
steps late (one: a 1 kHz loop; over DDS beside a simulator in real time, 2-3 were seen).
``stalls``: the loop stalls now and then, as a process on a loaded machine (0.1-0.15 s seen).
``estimate`` runs the sequence the service runs (``control.payload_estimation``: its poses, its
gains, its preliminary fit, its sweeps and their checks), in simulated time; the service over
DDS is tested by test_payload_service.

Friction: ``model_friction`` and ``arm_friction`` are (Coulomb, viscous) per joint or None (none);
``friction_of`` gives an arm's: its URDF's where it has any, else a share of the effort limits.
Used by test_payload_estimation and bench/bench_payload_arms.py.
"""
import collections
import functools
import time
from types import SimpleNamespace

import numpy as np

from robot_dynamics_ros.control import configuration
from robot_dynamics_ros.control import payload_estimation as pe
from robot_dynamics_ros.control.loop import ControlLoop
from robot_dynamics_ros.dynamics import RobotModel
from robot_dynamics_ros.nodes.feedforward_declarations import PARAMETERS
from robot_dynamics_ros.simulation import Simulator
from robot_dynamics_ros.tools.identify import with_payload_link

# an arm whose URDF has no friction gets this much, as shares of its effort limits (ur5: 3 N m
# Coulomb and 1.5 N m s/rad on the shoulder, 0.56 and 0.28 on the wrist)
COULOMB_SHARE, VISCOUS_SHARE = 0.02, 0.01


def friction_of(model):
    """Return (Coulomb, viscous) per joint: the URDF's where it has any, else shares of limits."""
    if np.any(model.friction > 0) or np.any(model.damping > 0):
        return model.friction.copy(), model.damping.copy()
    return COULOMB_SHARE * model.effort_limits, VISCOUS_SHARE * model.effort_limits


class Log:
    """The loop's log: warnings kept (the last of each key), nothing printed."""

    def __init__(self):
        self.last = {}

    def warning(self, key, message, period=0.0):
        self.last[key] = message

    info = error = warning

    def once(self, key, message, level='warning'):
        self.last.setdefault(key, message)


class Interrupted(pe.Refusal):
    """A stall's runaway: the arm held, the step to be made again (the node's Interrupted)."""


class Rig:
    """One arm, its payload simulated, feedforward_node's loop on the model without it."""

    def __init__(self, xml, link, q0, payload, *, model_friction=None, arm_friction=None,
                 delay=1, armature=0.0, stalls=None, seed=0, **values):
        self.model = RobotModel.from_urdf(xml)
        n = self.model.n
        zero = (np.zeros(n), np.zeros(n))
        fc, b = zero if model_friction is None else model_friction
        afc, ab = zero if arm_friction is None else arm_friction
        plant = RobotModel.from_urdf(with_payload_link(
            xml, SimpleNamespace(link=link, **vars(payload))))
        if armature:                # the rotor inertia the URDF lacks: the arm's and the model's
            plant = plant.with_armature(np.full(n, float(armature)))
            values.setdefault('armature', [float(armature)])
        self.sim = Simulator(plant, q0=q0, friction=afc, damping=ab)
        self.link = link
        v = {name: d[1] for name, d in PARAMETERS.items()}
        v.update({'mode': 'computed_torque', 'friction': list(map(float, fc)),
                  'damping': list(map(float, b))})
        v.update(values)
        self.log = Log()
        self.loop = ControlLoop(self.log)
        self.loop.set_observer_ready(True)
        ctrl = configuration.controller(self.model, v)
        obs, observing = configuration.observer(ctrl, v)
        self.loop.use_model(ctrl, obs, observing, v, 0.0)
        self.names = list(self.model.joint_names)
        # the commands on their way: each acts ``delay`` steps after the state it answers
        self.queue = collections.deque([np.zeros(n) for _ in range(delay)], maxlen=delay)
        self.samples = None
        self.guard = False              # the service's speed check, while it runs
        # the loop stalled now and then: (every, longest) s, each stall a third of longest to
        # longest; meanwhile the arm acts on the last command (the drive holds it)
        self.stalls, self.rng, self.stalled = stalls, np.random.default_rng(seed), 0
        self.retries = 0                # poses swept again after a stall
        self.runaways = pe.Runaways()   # the service's judge of a fast joint (sim time)
        self.fastest = 0.0              # the fastest joint speed the loop saw in ``estimate``

    @property
    def ctrl(self):
        return self.loop.ctrl

    def run(self, seconds):
        sim, loop = self.sim, self.loop
        for _ in range(int(round(seconds / sim.dt))):
            q, qd = sim.step(self.queue[0])
            t = sim.t
            if not np.all(np.isfinite(q)) or np.abs(qd).max() > 100.0:
                raise pe.Refusal(f'the simulation diverged at {t:.3f} s')
            if self.stalled > 0:
                self.stalled -= 1
                self.queue.append(self.queue[-1])
                continue
            if self.stalls and self.rng.random() < sim.dt / self.stalls[0]:
                self.stalled = int(self.rng.uniform(1 / 3, 1) * self.stalls[1] / sim.dt)
            self.fastest = max(self.fastest, float(np.abs(qd[self.ctrl.cmd]).max()))
            if self.guard:              # as the node's watch: held after a stall, or stopped
                loop = self.loop
                verdict = self.runaways.see(self.model, qd, self.ctrl.cmd, t, loop.late_at,
                                            loop.late_gap)
                if verdict is pe.HELD:
                    self.ctrl.hold_here()
                    raise Interrupted(self.runaways.interrupted)
                if verdict is not None:
                    raise pe.Refusal(verdict)
            reply = loop.joint_states(self.names, q.tolist(), qd.tolist(),
                                      sim.applied.tolist(), t, t, lambda: t)
            tau = np.zeros(self.model.n)
            if reply is not None and reply.command is not None:
                tau[self.ctrl.cmd] = reply.command
            self.queue.append(tau)
            if reply is not None and reply.estimate and self.samples is not None:
                self.samples.append((q.copy(), qd.copy(), loop.estimate.copy()))

    def move(self, target, duration=None):
        """Start a quintic to ``target`` (model order), a move's duration by default; return it."""
        if duration is None:
            duration = pe.move_time(self.ctrl.q, target, self.ctrl.cmd)
        t = self.sim.t
        k = len(self.ctrl.cmd)
        self.ctrl.set_trajectory(list(self.ctrl.joints), [duration],
                                 [list(np.asarray(target)[self.ctrl.cmd])], [[0.0] * k],
                                 [[0.0] * k], start_time=t, now=t, q=self.ctrl.q,
                                 qd=self.ctrl.qd)
        return duration

    def window(self, seconds):
        self.samples = []
        self.run(seconds)
        samples, self.samples = self.samples, None
        return tuple(np.array([s[k] for s in samples]) for k in range(3))

    def _at_rest(self, q):
        """Move to pose ``q`` and return (q, r) of a window at rest there."""
        self.run(self.move(q) + pe.SETTLE)
        qs, _, rs = self.window(0.25)
        return qs, rs

    def _passes(self, q, d, chain):
        """Sweep pose ``q`` forwards and backwards; return the two passes' means and rows."""
        ctrl, model = self.ctrl, self.model
        T, (a, b) = pe.SWEEP_TIME, pe.WINDOW
        self.run(self.move(q - d) + pe.SETTLE)
        passes = []
        for target in (q + d, q - d):
            self.move(target, T)
            self.run(a * T)
            qs, qds, rs = self.window((b - a) * T)
            pe.check_followed(ctrl, qs, qds, d, chain)
            passes.append((qs.mean(axis=0), rs.mean(axis=0),
                           pe.pass_rows(model, self.link, qs, qds), np.abs(qds.mean(axis=0))))
            self.run((1 - b) * T + pe.SETTLE)
        pe.check_mirrored(model, passes[0][3], passes[1][3], chain)
        return passes

    def _swept_again(self, refusal):
        self.retries += 1
        if isinstance(refusal, Interrupted):
            self._resume()

    def _resume(self):
        """After a stall's runaway, held: at rest again (as the node's ``_settle``), then on."""
        rest = 0.0
        while rest < pe.SETTLE:
            self.run(self.sim.dt)
            rest = rest + self.sim.dt if np.abs(self.sim.qd[self.ctrl.cmd]).max() <= pe.AT_REST \
                else 0.0
        self.runaways.resumed()

    def _again(self, step):
        """Return ``step()``, made again where a stall's runaway held the arm (the node's)."""
        for k in range(pe.STALL_RETRIES + 1):
            try:
                return step()
            except Interrupted as e:
                if k == pe.STALL_RETRIES:
                    raise pe.Refusal(f'{e} ({k + 1} times in a row)') from None
                self.retries += 1
                self._resume()

    def _sweeps(self, Q, d, chain):
        """Sweep each pose forwards and backwards; return (q, r, A, missed) for the fit."""
        at, r, A, missed = [], [], [], 0.0
        for q in Q:
            passes = pe.retried_after_stalls(functools.partial(self._passes, q, d, chain),
                                             lambda: self.loop.late, self._swept_again)
            q_mean, r_mean, friction, rows = pe.combine(*passes)
            at.append(q_mean)
            r.append(r_mean)
            A.append(rows)
            missed = max(missed, float(np.abs(friction[chain]).max()))
        return at, r, A, missed

    def estimate(self, amplitude=0.5):
        """
        Run the service's sequence; return (fit, missed, simulated seconds, wall seconds).

        pe.Refusal where the service would refuse (its message), as the service's.
        """
        ctrl, model, cmd = self.ctrl, self.model, self.ctrl.cmd
        t0, w0 = self.sim.t, time.monotonic()
        q0 = self.sim.q.copy()
        self.fastest = 0.0
        Q = pe.poses(model, q0, self.link, cmd, amplitude)
        chain = pe.wrist_joints(model, self.link, cmd)     # what the payload loads
        d = pe.sweep(model, Q, chain)
        saved = pe.take_over(ctrl, self.sim.dt, chain)
        self.guard = True
        try:
            at, r = [], []              # at rest: the preliminary fit
            for q in Q:
                qs, rs = self._again(functools.partial(self._at_rest, q))
                at.append(qs.mean(axis=0))
                r.append(rs.mean(axis=0))
            self.first = pe.fit(model, self.link, np.array(at), np.array(r), chain)
            self.carried = pe.carry(ctrl, saved, self.first, Q, d)
            try:
                at, r, A, missed = self._sweeps(Q, d, chain)
                self.compensated = False
            except pe.Refusal:
                if not pe.compensate(ctrl, chain):
                    raise
                self.compensated = True
                at, r, A, missed = self._sweeps(Q, d, chain)
            self._again(lambda: self.run(self.move(q0) + pe.SETTLE))
        finally:
            self.guard = False
            pe.hand_back(ctrl, saved)
        fit = pe.fit(model, self.link, np.array(at), np.array(r), chain, A=np.array(A))
        return fit, missed, self.sim.t - t0, time.monotonic() - w0
