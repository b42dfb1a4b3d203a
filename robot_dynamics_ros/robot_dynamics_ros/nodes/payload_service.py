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
``~/estimate_payload`` of feedforward_node: "I changed the gripper", one service call.

From the pose it is called at, the arm moves through a few poses (``control.
payload_estimation.poses``: the wrist turned by +-amplitude, each within the limits and checked
by the feasibility module before it moves), each move a quintic the controller itself tracks,
with the service's own gains (``pe.take_over``: the node's default kp lets a light wrist sag and
stick). At each pose, once settled, the momentum observer's estimate is averaged over a short
window: a first fit, which the controller then computes with. Then every commanded joint that
moves the link is swept slowly through each pose, forwards and backwards, and the estimate taken
in the middle of each pass (``pe.sweep``): the friction the model has wrong, whether it has too
much or none, changes sign with the direction and drops out of the mean of the two passes,
where at rest stiction would hold any part of the load up to its value. The fit of the swept
estimates gives the mass and centre of mass on the link (on top of the configured payload); the
arm returns to where it was, and the node's gains and model are given back. With ``apply`` the
payload parameters are set and the efforts fade into the new model's (bumpless, as after a
description change).

The call runs on a side node of the controller (``<name>_services``, two threads of its own: a
second call is answered while one runs), neither on the main executor nor on the control loop's:
commands go on while it waits. It refuses, saying why and leaving the arm where
it is: no observer, a trajectory running, a collision reaction, an unknown link, poses that do
not determine the payload, joint_states stale, another estimate running; and after the sequence,
a negative mass or a residual that says the arm was disturbed.
"""
import functools
import threading
import time

import numpy as np
from rclpy.parameter import Parameter

from ..control import payload_estimation as pe
from ..control.loop import LATE
from ..dynamics.model import com_inertia, inertia_matrix, inertia_six, mcI

DEFAULT_AMPLITUDE = 0.5         # rad (m)
MOVE_TIME, SETTLE = pe.MOVE_TIME, pe.SETTLE
WINDOW = 0.25                   # s over which the observer's estimate is averaged
STEADY = 0.002                  # N m: drift of the estimate over a window that counts as none
# and of the estimates' size (their RMS over the joints): the windows at rest give the
# preliminary fit only (``pe.carry``, replaced by the sweeps'), for which a percent is nothing.
# Without it xarm7 carrying a tool its model lacks (and the model's friction the arm lacks) was
# refused at a pose in 4 of 6 calls over DDS: its wrist, a sixth as stiff and damped as the
# service's gains mean (the model's inertia without the tool), still drifting 3-6 mN m a window
# after 6 s. With a percent of each joint's own estimate, 2 of 6: joint7 drifting 3-4 mN m
# where it carried 0.01-0.05 N m of the tool, the others several N m
STEADY_SHARE = 0.01
DISTURBED = 0.1                 # of the estimate's RMS (+ 0.05 N m): a residual over it refused
BACKSTOP = 10.0                 # a timeout's multiple in wall time: simulated time that stopped


class Refused(Exception):
    """The estimate cannot go on; the message says why."""


class Interrupted(Refused, pe.Refusal):
    """A joint ran over ABORT_SPEED right after a state came late: held, the step to be redone."""


def _speed(ctrl):
    """Return the largest speed of the commanded joints (rad/s, m/s)."""
    return float(np.abs(ctrl.qd[ctrl.cmd]).max())


def _drift(r):
    """
    Return (drift, allowed, k, mean) of estimates r (K, n) over a window, in N m.

    drift: the difference between the means of the window's two halves, of the joint k where it
    exceeds its allowance most; allowed: STEADY, plus STEADY_SHARE of the RMS over the joints of
    the mean estimates, plus three standard errors of that difference (the estimates' noise).
    """
    a, b = np.array_split(r, 2)
    se = np.sqrt(a.var(axis=0) / len(a) + b.var(axis=0) / len(b))
    d = np.abs(a.mean(axis=0) - b.mean(axis=0))
    mean = r.mean(axis=0)
    allowed = STEADY + STEADY_SHARE * float(np.sqrt(np.mean(mean ** 2))) + 3 * se
    k = int(np.argmax(d - allowed))
    return float(d[k]), float(allowed[k]), k, float(mean[k])


class PayloadService:
    """The procedure behind ``~/estimate_payload``, on a FeedforwardNode ``node``."""

    def __init__(self, node):
        self.node = node
        self.busy = threading.Lock()
        self.samples = None         # (q, qd, r) appended by the node's observer while collecting
        self.window = None          # (a, b): only those of states timed within it (node time)
        self.saved = None           # what pe.take_over saved, while the service's gains act
        self.stopped = None         # why ``watch`` stopped the sequence
        self.runaways = pe.Runaways()   # ``watch``'s judge (monotonic s)

    # ---- the service -------------------------------------------------------------------------
    def __call__(self, req, res):
        node = self.node
        if not self.busy.acquire(blocking=False):
            return self._refuse(res, 'an estimate is already running')
        try:
            t0 = time.monotonic()
            self.stopped = None
            self.runaways.resumed()
            with node.lock:
                link, amplitude, Q, q0, d = self._plan(req)
            fit, missed = self._sequence(link, Q, q0, d)
            self._judge(fit)
            res.mass, res.residual, res.poses = fit.mass, fit.residual, fit.poses
            res.com.x, res.com.y, res.com.z = (float(x) for x in fit.com)
            found = (f'{fit.mass:.4g} kg at {np.round(fit.com, 4).tolist()} m'
                     if fit.found else
                     f'none ({fit.mass:.2g} kg, below {pe.MASS_RESOLUTION:g} kg: '
                     'no centre of mass)')
            low, high = d[d > 0].min(), d.max()
            swept = (f', the joints moving it swept +-{low:.3g}'
                     + (f' to {high:.3g}' if high > low else '')
                     + f' rad through each (the friction the model has wrong: up to '
                       f'{missed:.3g} N m)')
            message = (f'payload on {link}: {found} (on top of the configured payload), '
                       f'residual {fit.residual:.3g} N m over {fit.poses} poses{swept}, '
                       f'{time.monotonic() - t0:.1f} s')
            if req.apply:
                try:
                    message += '; ' + self._apply(fit)
                except Refused as e:
                    return self._refuse(res, f'{message}; {e}')
        except Refused as e:
            return self._refuse(res, str(e))
        finally:
            self.samples = None
            self.busy.release()
        node.get_logger().info(f'estimate_payload: {message}')
        res.success, res.message = True, message
        return res

    def _refuse(self, res, why):
        self.node.get_logger().warning(f'estimate_payload refused: {why}')
        res.success, res.message = False, why
        return res

    # ---- before moving -----------------------------------------------------------------------
    def _plan(self, req):
        """
        Return (link, amplitude, poses, q0, d) or raise Refused (under the node's lock).

        d: the sweep per joint (``pe.sweep``: the commanded joints that move the link).
        """
        node = self.node
        ctrl = node.ctrl
        if ctrl is None:
            raise Refused('no robot_description yet')
        if ctrl.mode != 'computed_torque':
            raise Refused(f'mode is {ctrl.mode}: the poses are reached by computed torque (set '
                          f'mode to computed_torque first)')
        if node.observer is None:
            raise Refused('the momentum observer is disabled (observer.enabled): the estimate '
                          'is made from it')
        if not node.observer_ready or not node.observer.settled():
            raise Refused('the momentum observer is not running yet (its kernel is loading, or '
                          'its estimate has not settled): try again in a moment')
        stale = node.loop.stale_joints(time.monotonic())
        if stale:
            raise Refused(f'joint_states of {stale} are stale or missing')
        if ctrl.ref.reaction is not None:
            raise Refused(f'a collision reaction ({ctrl.ref.reaction}) is active: '
                          f'~/reset_collision first')
        now = node.loop.trajectory_time(node.clock())
        if ctrl.ref.trajectory is not None and now < ctrl.ref.trajectory.path.end_time:
            raise Refused('a trajectory is running: call it when the arm is at rest')
        if _speed(ctrl) > pe.AT_REST:
            raise Refused(f'the arm is moving (|qd| up to {_speed(ctrl):.3f} rad/s): call it '
                          f'when the arm is at rest')
        model = ctrl.model
        link = req.link or node.values['payload.link'] or self._last_link(ctrl)
        if link not in model.link_names:
            raise Refused(f'link "{link}" is not in {model.name}')
        amplitude = req.amplitude or DEFAULT_AMPLITUDE
        if not (np.isfinite(amplitude) and 0 < amplitude <= 1.5):
            raise Refused(f'amplitude must be in (0, 1.5] rad, got {amplitude}')
        limits = model.effort_limits.copy()
        limits[ctrl.cmd] = ctrl.limits
        q0 = ctrl.q.copy()
        try:
            Q = pe.poses(model, q0, link, ctrl.cmd, amplitude, effort_limits=limits)
        except ValueError as e:
            raise Refused(str(e)) from None
        try:
            d = pe.sweep(model, Q, pe.wrist_joints(model, link, ctrl.cmd))
        except ValueError as e:
            raise Refused(str(e)) from None
        for a, b in zip(Q[:-1], list(Q[1:])):       # at rest through the poses
            self._feasible(ctrl, a, b)
        start = Q[-1]
        for q in Q:                                 # then each swept
            self._feasible(ctrl, start, q - d)
            self._feasible(ctrl, q - d, q + d, pe.SWEEP_TIME)
            self._feasible(ctrl, q + d, q - d, pe.SWEEP_TIME)
            start = q - d
        self._feasible(ctrl, start, q0)
        return link, amplitude, Q, q0, d

    @staticmethod
    def _last_link(ctrl):
        """Return the deepest link the last commanded joint carries (the flange, or the tool)."""
        body = int(ctrl.cmd.max())
        links = [k for k in ctrl.model.link_names if ctrl.model.link_frame(k)[0] == body]
        return links[-1]

    @staticmethod
    def _move(ctrl, target, duration):
        """Return a rest-to-rest quintic of the commanded joints to ``target`` (model order)."""
        k = len(ctrl.joints)
        return (list(ctrl.joints), [duration], [target[ctrl.cmd].tolist()], [[0.0] * k],
                [[0.0] * k])

    def _feasible(self, ctrl, q_from, q_to, duration=None):
        if duration is None:
            duration = pe.move_time(q_from, q_to, ctrl.cmd)
        names, times, *tables = self._move(ctrl, q_to, duration)
        result = ctrl.check_trajectory(names, times, *tables, q=q_from)
        if not result.feasible:
            raise Refused(f'a move of the sequence is beyond the limits: {result.message()}')

    # ---- the sequence ------------------------------------------------------------------------
    def _sequence(self, link, Q, q0, d):
        """
        Visit the poses, sweep each, return to q0; return (fit, missed).

        With the service's gains (``pe.take_over``) throughout. First at rest at each pose: a
        preliminary fit, which the controller then computes with (``pe.carry``: a light wrist
        carrying an unmodelled tool follows the sweeps only then). Then each pose swept by +-d,
        forwards and backwards; the fit from those. missed: the largest friction (N m) the
        model missed in the passes.
        """
        node = self.node
        ctrl = node.ctrl
        rows = pe.wrist_joints(ctrl.model, link, ctrl.cmd)
        model = ctrl.model
        period = self._period()
        with node.lock:
            saved = self.saved = pe.take_over(ctrl, period, rows)
            gains = self._gains(ctrl, rows)
        node.get_logger().info(f'estimate_payload on {link}: {len(Q)} poses, at rest then swept; '
                               f'the service\'s kp {gains} (for a loop period of '
                               f'{period * 1e3:.2f} ms)')
        at, estimates, missed = [], [], 0.0
        try:
            for k, q in enumerate(Q):
                def at_rest(k=k, q=q):
                    if k:
                        self._go(ctrl, q)
                    else:
                        self._settle(ctrl)  # where it was called: at rest for SETTLE first
                    return self._collect(ctrl)
                q_mean, r_mean = self._again_after_stalls(ctrl, at_rest)
                at.append(q_mean)
                estimates.append(r_mean)
            try:
                first = pe.fit(model, link, np.array(at), np.array(estimates), rows)
            except ValueError as e:
                raise Refused(str(e)) from None
            with node.lock:
                self._check(ctrl)
                carried = pe.carry(ctrl, saved, first, Q, d)
                gains = self._gains(ctrl, rows)
            node.get_logger().info(
                f'estimate_payload: at rest {first.mass:.3g} kg at '
                f'{np.round(first.com, 3).tolist()} m, '
                + ('computed with' if carried else
                   f'not computed with (none, below zero, beyond {pe.CARRY_REACH:g} m of the '
                   f'link, or its weight beyond the effort limits)')
                + f'; the sweeps\' kp {gains}')
            try:
                at, estimates, A, missed = self._sweeps(ctrl, link, Q, d, rows)
            except pe.Refusal as e:
                with node.lock:
                    again = pe.compensate(ctrl, rows)
                if not again:
                    raise Refused(str(e)) from None
                node.get_logger().info(f'estimate_payload: {e}; sweeping again with the model\'s '
                                       f'friction compensated')
                try:
                    at, estimates, A, missed = self._sweeps(ctrl, link, Q, d, rows)
                except pe.Refusal as e:
                    raise Refused(f'{e} (also with the model\'s friction compensated)') from None
        finally:
            if self.runaways.interrupted is not None:   # held where it is: at rest, then back
                try:
                    self._settle(ctrl, resuming=True)
                except Refused:
                    pass                        # the next _check says why
                with node.lock:
                    self.runaways.resumed()
            if (self.stopped is None and node.ctrl is ctrl and ctrl.ref.reaction is None
                    and node.context.ok()):
                try:
                    self._go(ctrl, q0)
                except Refused as e:
                    node.get_logger().warning(f'estimate_payload: back to the start: {e}')
            with node.lock:
                self.saved = None
                pe.hand_back(ctrl, saved)
        try:
            return pe.fit(model, link, np.array(at), np.array(estimates), rows,
                          A=np.array(A)), missed
        except ValueError as e:
            raise Refused(str(e)) from None

    @staticmethod
    def _gains(ctrl, rows):
        """Return the kp of the joints ``rows`` as text, in the model's order."""
        names = ctrl.model.joint_names
        return ', '.join(f'{names[j]} {ctrl.gains.kp[j]:.4g}' for j in sorted(rows))

    def _sweeps(self, ctrl, link, Q, d, rows):
        """
        Sweep each pose of Q by +-d, forwards and backwards; return (q, r, A, missed).

        The fit's rows (``pe.combine``) and the largest friction (N m) the model missed in the
        passes. pe.Refusal when a joint of ``rows`` did not follow a pass, unless a state came
        later meanwhile than the gains hold through (``pe.delay_tolerance``, at most LATE): then
        that pose is swept again (up to pe.STALL_RETRIES times).
        """
        at, estimates, A, missed = [], [], [], 0.0
        loop = self.node.loop
        # a state later than the sweeps' gains hold through (5 ms at 50 rad/s: beside busy
        # cores a wrist then overshot its pass, "did not follow a sweep steadily") is a stall
        tolerance = min(LATE, pe.delay_tolerance(ctrl.gains.kp, rows))

        def again(e):
            if isinstance(e, Interrupted):
                self._resume(ctrl, e)
                return
            self.node.get_logger().info(
                f'estimate_payload: {e}; joint_states came over {tolerance * 1e3:.3g} ms late '
                f'meanwhile (a stalled process; the sweeps\' gains hold through less): that '
                f'pose swept again')
        with self.node.lock:
            loop.count_late_after(tolerance)
        try:
            for q in Q:
                forward, backward = pe.retried_after_stalls(
                    functools.partial(self._passes, ctrl, link, q, d, rows), lambda: loop.late,
                    again)
                q_mean, r_mean, friction, rows_A = pe.combine(forward, backward)
                missed = max(missed, float(np.abs(friction[rows]).max()))
                at.append(q_mean)
                estimates.append(r_mean)
                A.append(rows_A)
        finally:
            with self.node.lock:
                loop.count_late_after(None)
        return at, estimates, A, missed

    def _again_after_stalls(self, ctrl, step):
        """Return ``step()``, made again where ``watch`` held the arm after a stall."""
        for k in range(pe.STALL_RETRIES + 1):
            try:
                return step()
            except Interrupted as e:
                if k == pe.STALL_RETRIES:
                    raise Refused(f'{e} ({k + 1} times in a row)') from None
                self._resume(ctrl, e)

    def _resume(self, ctrl, e):
        """
        After ``watch`` held the arm (Interrupted ``e``): at rest again, then go on.

        ``interrupted`` stays set until then: the arm comes from over ABORT_SPEED, and ``watch``
        would take the braking for another runaway.
        """
        self.node.get_logger().info(f'estimate_payload: {e}: held, and that step made again')
        self._settle(ctrl, resuming=True)
        with self.node.lock:
            self.runaways.resumed()

    def _passes(self, ctrl, link, q, d, rows):
        """Sweep pose ``q`` by +-d forwards and backwards; return the two passes (``_sweep``)."""
        self._go(ctrl, q - d)
        forward = self._sweep(ctrl, link, q + d, d, rows)
        backward = self._sweep(ctrl, link, q - d, d, rows)
        pe.check_mirrored(ctrl.model, forward[3], backward[3], rows)
        return forward, backward

    def _period(self):
        """Return the loop's period (s): ``ControlLoop.period``, else 1 ms."""
        period = self.node.loop.period()
        return 1e-3 if period is None else period

    def _start(self, ctrl, target, duration=None):
        """Start a quintic to ``target`` (a move's duration by default); (it, its start time)."""
        node = self.node
        with node.lock:
            self._check(ctrl)
            if duration is None:
                duration = pe.move_time(ctrl.q, target, ctrl.cmd)
            now = node.loop.trajectory_time(node.clock())
            names, times, *tables = self._move(ctrl, target, duration)
            ctrl.set_trajectory(names, times, *tables, start_time=now, now=now, q=ctrl.q,
                                qd=ctrl.qd)
            return ctrl.ref.trajectory, now

    def _ours(self, ctrl, ours):
        if ctrl.ref.trajectory is not ours:
            raise Refused('another trajectory arrived during the estimate')

    def _go(self, ctrl, target, duration=None, started=None):
        """Move to ``target`` along a quintic and wait until the arm is there and at rest."""
        node = self.node
        ours, t0 = started or self._start(ctrl, target, duration)
        duration = ours[0].end_time - t0

        def there():
            self._ours(ctrl, ours)
            return (node.loop.trajectory_time(node.clock()) >= ours[0].end_time + SETTLE
                    and _speed(ctrl) <= pe.AT_REST)
        self._wait(ctrl, there, 'the arm did not come to rest at a pose of the sequence (held '
                                'back, or touched?)', duration + 5.0)

    def _sweep(self, ctrl, link, target, d, rows):
        """
        One slow pass to ``target``; return the means (q, r, A, |qd|) over its middle (pe.WINDOW).

        Every joint of ``rows`` must follow it through the window (``pe.check_followed``), else
        pe.Refusal (held back, touched, or held by its friction).
        """
        node = self.node
        ours, t0 = started = self._start(ctrl, target, pe.SWEEP_TIME)
        a, b = (t0 + f * pe.SWEEP_TIME for f in pe.WINDOW)

        def at(t):
            def reached():
                self._ours(ctrl, ours)
                return node.loop.trajectory_time(node.clock()) >= t
            return reached
        why = 'the arm did not follow the sweep (held back, or touched?)'
        with node.lock:     # the states of the window, however late this thread polls
            self.samples, self.window = [], (a, b)
        try:
            self._wait(ctrl, at(b), why, pe.SWEEP_TIME + 5.0)
        finally:
            with node.lock:
                samples, self.samples, self.window = self.samples, None, None
        self._go(ctrl, target, pe.SWEEP_TIME, started)
        if len(samples) < 5:
            raise Refused(f'{len(samples)} observer estimates in a sweep\'s window: '
                          f'joint_states too slow, or the observer is holding its estimate')
        q, qd, r = (np.array([s[k] for s in samples]) for k in range(3))
        pe.check_followed(ctrl, q, qd, d, rows)
        # the rows are of the kinematics alone: the same with any of this arm's models
        return (q.mean(axis=0), r.mean(axis=0), pe.pass_rows(ctrl.base_model, link, q, qd),
                np.abs(qd.mean(axis=0)))

    def _settle(self, ctrl, resuming=False):
        """
        Wait until the arm has been at rest for SETTLE s (node time), as after a move.

        ``resuming``: while ``interrupted`` (``_check``).
        """
        node = self.node
        since = None

        def rested():
            nonlocal since
            now = node.loop.trajectory_time(node.clock())
            if _speed(ctrl) > pe.AT_REST:
                since = None
            elif since is None:
                since = now
            return since is not None and now - since >= SETTLE
        self._wait(ctrl, rested, 'the arm did not come to rest where the estimate was called '
                                 '(held back, or touched?)', resuming=resuming)

    def _timer(self, timeout):
        """
        Return a callable: whether ``timeout`` s of the node's time have passed since now.

        The node's time (simulated with use_sim_time) is the one the arm moves in, however
        slowly the machine runs a simulation; BACKSTOP times as long in wall time as well, for a
        simulated time that stopped.
        """
        clock = self.node.clock
        end, wall = clock() + timeout, time.monotonic() + BACKSTOP * timeout
        return lambda: clock() > end or time.monotonic() > wall

    def _wait(self, ctrl, ready, why, timeout=MOVE_TIME + 5.0, resuming=False):
        """
        Poll ``ready()`` every 10 ms under the node's lock until it is true.

        Each poll first checks that the estimate can go on (``_check``; ``resuming``: while
        ``interrupted``); Refused(why) after ``timeout`` s (``_timer``).
        """
        node = self.node
        expired = self._timer(timeout)
        while True:
            with node.lock:
                self._check(ctrl, resuming)
                if ready():
                    return
            if expired():
                raise Refused(why)
            time.sleep(0.01)

    def _collect(self, ctrl):
        """
        Average the observer's estimate (and q) over WINDOW s at rest, once it is steady.

        Steady: the means of the window's two halves agree within STEADY N m plus three
        standard errors of their difference. After a move the estimate converges with time
        constant 1/K_O in the intervals the observer takes; where joint_states come late and
        irregular (a starved machine: every 3 ms with gaps of 0.16 s, measured) it holds over
        them and converges later: a window taken then gave centres of mass 1-7 cm off. So the
        window is taken again until steady, for up to MOVE_TIME + 5 s, else refused.
        """
        node = self.node
        expired = self._timer(MOVE_TIME + 5.0)
        while True:
            with node.lock:
                self.samples = []
            ended = self._timer(WINDOW)
            while not ended():
                time.sleep(0.01)
                with node.lock:
                    self._check(ctrl)
            with node.lock:
                samples, self.samples = self.samples, None
            if len(samples) < 5:
                raise Refused(f'{len(samples)} observer estimates in {WINDOW} s: joint_states '
                              f'too slow, or the observer is holding its estimate')
            q = np.array([s[0] for s in samples])
            if np.abs(np.diff(q, axis=0)).max(initial=0.0) > pe.AT_REST * WINDOW:
                raise Refused('the arm moved while it should have been at rest (touched?)')
            r = np.array([s[2] for s in samples])
            drift, allowed, k, mean = _drift(r)
            if drift <= allowed:
                return q.mean(axis=0), r.mean(axis=0)
            if expired():
                raise Refused(f'the external-torque estimate did not settle at a pose (on '
                              f'{ctrl.model.joint_names[k]} it drifts {drift:.3g} N m over '
                              f'{WINDOW} s, of {mean:.3g}; allowed {allowed:.3g}): joint_states '
                              f'too late or irregular for an estimate, or the arm disturbed')

    def _check(self, ctrl, resuming=False):
        """
        Raise Refused when the estimate cannot go on (under the node's lock).

        Interrupted when ``watch`` held the arm after a stall, unless ``resuming`` from that.
        """
        node = self.node
        if self.stopped is not None:
            raise Refused(self.stopped)
        if self.runaways.interrupted is not None and not resuming:
            raise Interrupted(self.runaways.interrupted)
        if not node.context.ok():
            raise Refused('shutting down')
        if node.ctrl is not ctrl:
            raise Refused('the model or the parameters changed during the estimate')
        if ctrl.ref.reaction is not None:
            raise Refused('a collision was detected during the estimate (touched?)')
        stale = node.loop.stale_joints(time.monotonic())
        if stale:
            raise Refused(f'joint_states of {stale} went stale during the estimate')

    def watch(self, ctrl):
        """
        Stop the sequence at the first state of a joint running away.

        The node calls this each turn of its loop, under its lock: on that state, not at the
        sequence's next poll up to 10 ms later (ur10's wrist was at 14.4 rad/s when a poll saw
        it over DDS). The node's gains back, the arm held where it is; ``_check`` then refuses
        with why. Within pe.STALL_AFTERMATH of a late state (the loop's ``late_at``) the
        runaway is the stall's: the arm held where it is with the service's gains, and
        ``_check`` interrupts the step, which is made again (``_again_after_stalls``); a joint
        still over ABORT_SPEED pe.BRAKING s after that is stopped as above (``pe.Runaways``).
        """
        if self.saved is None or self.stopped is not None or ctrl is not self.node.ctrl:
            return
        loop = self.node.loop
        verdict = self.runaways.see(ctrl.model, ctrl.qd, ctrl.cmd, time.monotonic(),
                                    loop.late_at, loop.late_gap)
        if verdict is None:
            return
        if verdict is not pe.HELD:
            self.stopped = verdict
            pe.hand_back(ctrl, self.saved)
        ctrl.hold_here()

    def take(self, q, qd, r):
        """Take an estimate of the node's observer (it calls this under the node's lock)."""
        if self.samples is None:
            return
        if self.window is not None:
            loop = self.node.loop
            t = loop.trajectory_time(self.node.turn.seconds())
            if not self.window[0] <= t <= self.window[1]:
                return
        self.samples.append((q.copy(), qd.copy(), r.copy()))

    # ---- after -------------------------------------------------------------------------------
    def _judge(self, fit):
        # the estimate is on top of the configured payload: below zero is right when that one
        # is too heavy, wrong only when the two together weigh nothing or less
        v = self.node.values
        configured = float(v['payload.mass']) if v['payload.link'] == fit.link else 0.0
        if not configured + fit.mass > 0:
            on_top = f' on top of the configured {configured:.3g} kg' if configured else ''
            raise Refused(f'the fit gives {fit.mass:.3g} kg{on_top}: no payload, a description '
                          f'heavier than the arm around {fit.link}, or the arm was disturbed '
                          f'(touched?) during the estimate')
        if fit.residual > 0.05 + DISTURBED * fit.torque:
            raise Refused(f'the fit leaves {fit.residual:.3g} N m RMS of the {fit.torque:.3g} N m '
                          f'it explains: the arm was disturbed (touched?) during the estimate, '
                          f'or the load is not rigid; not applied')

    def _apply(self, fit):
        """Set payload.* to the configured payload plus this one; return what was done."""
        node = self.node
        v = node.values
        m0, c0 = float(v['payload.mass']), np.asarray(v['payload.com'], dtype=float)
        if m0 > 0 and v['payload.link'] not in ('', fit.link):
            raise Refused(f'not applied: payload.link is {v["payload.link"]}, the estimate is on '
                          f'{fit.link} (one payload link): set payload.mass to 0 first')
        I0 = inertia_matrix(v['payload.inertia'] if m0 > 0 else np.zeros(6))
        # the two rigid bodies together (the estimate a point mass), in the link's frame
        m, c, Ic = com_inertia(mcI(m0, c0, I0) + mcI(fit.mass, fit.com, np.zeros((3, 3))))
        kept = ''
        if np.linalg.eigvalsh(Ic)[0] < 0:
            # an estimate below zero (the configured payload too heavy) is not a body: with it
            # the sum's inertia can be negative; at rest no inertia shows, so the configured
            # one (about its centre of mass) is kept, at the new centre of mass
            Ic, kept = I0, ' (payload.inertia kept: the estimate does not see it)'
        # under the node's lock throughout: no command of the new model may go out before the
        # fade from the last one of the old model is set up (the control loop waits meanwhile)
        with node.lock:
            last = node.out.command.copy() if node.out is not None else None
            results = node.set_parameters([
                Parameter('payload.link', value=fit.link),
                Parameter('payload.mass', value=float(m)),
                Parameter('payload.com', value=[float(x) for x in c]),
                Parameter('payload.inertia', value=inertia_six(Ic).tolist())])
            failed = [r.reason for r in results if not r.successful]
            if failed:
                raise Refused(f'not applied: {failed[0]}')
            if last is not None and node.out is not None and len(last) == len(node.out.command):
                node.loop.fade_from(last)        # the efforts fade into the new model's
        return f'applied: payload.mass {m:.4g} kg on {fit.link}{kept}'
