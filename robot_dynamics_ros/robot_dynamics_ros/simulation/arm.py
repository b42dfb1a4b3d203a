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
The simulated arm as its driver runs it, without ROS: what simulator_node does between messages.

``SimulatedArm`` wraps a ``Simulator`` and its ``Sensors``: it takes effort commands in the
commanded joints' order (refusing wrong ones, the first releasing the brakes of an arm that
starts braked), steps with the last command (zero torque once it is older than a timeout;
clamped at every step as ros2_control's enforce_command_limits does, if asked),
matches a controller's stamped answers to the state they answer (lockstep), ends pushes at their
simulated time and says what a joint_states message reports. The caller gives the time
(``now``: its monotonic clock, s), so each rule is tested without a clock (test_simulated_arm.py).
"""
import numpy as np

from .command_limits import CommandLimiter
from .simulator import SimulationDiverged


class SimulatedArm:
    """A Simulator, its sensors and the commands it runs on, for the joints ``joints``."""

    def __init__(self, sim, joints, sensors, braked=False, enforce_command_limits=False):
        model = sim.model
        self.sim, self.sensors, self.joints = sim, sensors, tuple(joints)
        self.cmd_idx = np.array([model.index(j) for j in self.joints], dtype=np.int64)
        # ros2_control's enforce_command_limits: the command clamped at each step's state
        self.limiter = CommandLimiter(model, self.cmd_idx) if enforce_command_limits else None
        self.command = None             # the last effort command, in joints order
        self.last_command = None        # when it came (the caller's clock, s)
        self.braked = braked            # holding the pose until the first command
        self.wrench_end = {}            # link -> simulated time its push ends
        self.latest_stamp = None        # (sec, nanosec) of the latest state reported
        # the torques applied since the last report, summed per step: the report's effort is
        # their mean over that interval (see report)
        self.applied_sum, self.applied_steps = np.zeros(model.n), 0
        self.qdd = np.zeros(model.n)    # the last step's accelerations (an F/T sensor's)
        self._answer_idx = {}           # an answer's joint names -> where each joint is in it

    def take_over(self, old):
        """
        Go on from ``old``, an arm of the description before it changed.

        Simulated time goes on (stamps, /clock, the latest state an answer must answer) and the
        brakes stay as they were; the last command still counts when the commanded joints are
        the same (another order: it does not). Pushes end with the old model (a link may be
        gone).
        """
        self.sim.t = old.sim.t
        self.braked, self.latest_stamp = old.braked, old.latest_stamp
        if self.joints == old.joints:
            self.command, self.last_command = old.command, old.last_command

    def take(self, efforts, now):
        """
        Take an effort command in joints order at ``now``; return why it is refused, or None.

        A refused command changes nothing. The first taken releases the brakes.
        """
        data = np.asarray(efforts, dtype=float)
        if data.shape != (len(self.joints),):
            return f'{data.size} values for {len(self.joints)} joints {list(self.joints)}'
        if not np.all(np.isfinite(data)):
            return 'NaN or Inf'
        self.command, self.last_command, self.braked = data, now, False
        return None

    def answers_latest(self, stamp):
        """
        Whether an answer stamped ``stamp`` (sec, nanosec) answers the latest state reported.

        Only that answer advances a lockstep simulation: one to an older state moves nothing.
        The first state is stamped 0, which a controller answers on its own clock: any answer.
        """
        return self.latest_stamp is not None and (self.latest_stamp == (0, 0)
                                                  or tuple(stamp) == self.latest_stamp)

    def take_answer(self, names, efforts, now):
        """
        Take a controller's answer (a JointState's names and efforts, any order) as a command.

        Return why it is refused, or None. Each commanded joint needs its effort; other joints
        are ignored.
        """
        names = tuple(names)
        if len(efforts) != len(names):
            return f'{len(efforts)} efforts for {len(names)} names'
        idx = self._answer_idx.get(names)
        if idx is None:
            where = {n: i for i, n in enumerate(names)}
            missing = [j for j in self.joints if j not in where]
            if missing:
                return f'no effort for {missing} (names {list(names)})'
            idx = self._answer_idx[names] = np.array([where[j] for j in self.joints],
                                                     dtype=np.int64)
        return self.take(np.asarray(efforts, dtype=float)[idx], now)

    def fresh(self, now, timeout):
        """Whether the last command is at most ``timeout`` s old at ``now``."""
        return self.last_command is not None and now - self.last_command <= timeout

    def advance(self, steps, now, stale_after):
        """
        Step ``steps`` times with the last command; return (steps done, why it diverged or None).

        ``stale_after``: seconds after which a command no longer counts (zero torque then), or
        None to apply the last command whatever its age (lockstep, a step while paused). Braked,
        the pose is held while simulated time runs on. A push ends at its simulated time. With
        ``enforce_command_limits`` the command is clamped at each step's state, as ros2_control
        does every cycle (a stale command's zero torque is the drive's, after it: not clamped).
        """
        sim = self.sim
        tau = np.zeros(sim.model.n)
        live = self.command is not None and (stale_after is None or self.fresh(now, stale_after))
        if live:
            tau[self.cmd_idx] = self.command
        idx, limiter = self.cmd_idx, self.limiter if live else None
        for k in range(steps):
            if self.braked:
                sim.t += sim.dt
                continue
            qd = sim.qd
            if limiter is not None:
                tau[idx] = limiter(sim.q[idx], qd[idx], self.command)
            try:
                sim.step(tau)
            except SimulationDiverged as e:
                return k, str(e)
            self.qdd = (sim.qd - qd) / sim.dt
            self.applied_sum += sim.applied
            self.applied_steps += 1
            for link, end in list(self.wrench_end.items()):
                if sim.t >= end - 1e-9:
                    sim.set_wrench(link, None)
                    del self.wrench_end[link]
        return steps, None

    def push(self, link, wrench, duration):
        """
        Push ``link`` with ``wrench`` (in its frame) for ``duration`` s (0: until replaced).

        Zeros remove the push. Return why it is refused, or None.
        """
        wrench = np.asarray(wrench, dtype=float)
        model = self.sim.model
        if link not in model.link_names:
            return f'unknown link "{link}" (links of {model.name}: {list(model.link_names)})'
        if not np.all(np.isfinite(wrench)) or not np.isfinite(duration):
            return 'the wrench or duration is not finite'
        if duration < 0:
            return f'duration must be >= 0 s, got {duration}'
        self.sim.set_wrench(link, wrench)
        self.wrench_end.pop(link, None)
        if np.any(wrench) and duration > 0:
            self.wrench_end[link] = self.sim.t + duration
        return None

    def reset(self, q0, braked):
        """Back to ``q0`` at rest at t = 0: no push, no command, the brakes on if ``braked``."""
        self.sim.reset(q0)
        for link in list(self.sim.wrenches):
            self.sim.set_wrench(link, None)
        self.wrench_end = {}
        self.command, self.last_command, self.braked = None, None, braked

    def report(self, held=False):
        """
        Return (position, velocity, effort) for a joint_states message now, as the sensors read.

        The effort is the mean torque applied over the steps since the previous report: what a
        momentum observer integrates over that interval (the last step's alone was off by a
        changed command's share at 250 and 500 Hz, where a state covers 4 and 2 steps); with no
        step since, the last step's. ``held`` (halted): at rest, no effort.
        """
        sim = self.sim
        zeros = np.zeros(sim.model.n)
        applied = (self.applied_sum / self.applied_steps if self.applied_steps
                   else sim.applied)
        self.applied_sum[:] = 0.0
        self.applied_steps = 0
        return self.sensors.read(sim.q, zeros if held else sim.qd, zeros if held else applied)
