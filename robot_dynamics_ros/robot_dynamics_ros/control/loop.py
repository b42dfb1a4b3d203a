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
The feedforward controller's loop without ROS.

Joint states, targets and time in; commands, estimates and events out.

``ControlLoop`` holds every rule of feedforward_node between a message's contents and what goes
out: joint states merged per joint, stale and missing joints (the ``on_timeout`` command), the
time a trajectory is at, FollowJointTrajectory goals (``follow``: accepted or refused, checked
against their tolerances on every command, ended by whatever takes the arm from them), the
observer's torque source and its gaps, collision detection and the reaction, the bumpless change
of model, the task-space targets' stream and timeout, the bandwidth warning. It never reads a
clock: every call takes ``now`` (monotonic seconds) and, where a trajectory is timed, ``clock``
(a callable returning the node's ROS time in seconds). It logs through ``log``: an object with
``warning(key, message, period)``, ``info(key, message, period)`` (throttled per key),
``error(message)`` and ``once(key, message, level)``.

The node owns parameters, subscriptions, publishers, services and threads; it calls the loop
with each message and publishes the ``Reply``.
"""
import collections
import math
import time

import numpy as np

from ..dynamics import frame_jacobian, gravity_torques
from .controller import JOINT_MODES, frame_joints
from .force import AXIS_NAMES, FRICTION_SHARE, REARM_PAUSE, friction_band
from .observer import over_threshold
from .shaping import CommandShaper
from .task_space import TASK_MODES, task_bandwidth
from .trajectory_goal import (ABORTED, CANCELED, CODE_NAMES as CODES, INVALID_GOAL,
                              OLD_HEADER_TIMESTAMP, PATH_TOLERANCE_VIOLATED, SUCCEEDED,
                              SUCCESSFUL, Goal, Refused, tables as goal_tables,
                              tolerances as goal_tolerances)

# A trajectory is sampled at the stamp of the joint state each command answers (what the arm did
# then), not at this node's clock when the command is computed: with simulated time the clock
# comes on /clock through another callback and can lag the states by tens of ms, then jump
# (measured: 80 ms, steps of 150 N m on the 2R arm in lockstep). A stamp further than this from
# the clock is of another time base (a driver on the system clock, a node on simulated time):
# the clock is taken then, with a warning.
STAMP_TOLERANCE = 0.5   # s
# A task stiffness K on an axis of task-space inertia Lambda has the natural frequency
# w = sqrt(K / Lambda) (of the coupled axes: task_bandwidth); with the loop's period T
# (joint_states to command, and the delay that comes with it) a w T above this is worth a
# warning: the critically damped loop's damping gain 2 w acts a period late (the case:
# a bare URDF wrist, 0.001 kg m^2 at 30 N m/rad, w T = 0.17-0.35 at 1-2 ms, oscillated).
BANDWIDTH_LIMIT = 0.1
# and a damping that takes more than this share of the velocity per period, a period late, rings
# (v' = -d v acting a period T late: complex roots above d T = 0.25, unstable above 1)
DAMPING_LIMIT = 0.25
# After a gap in the states (the observer's: it holds its estimate over one) the estimate's
# braking is not counted by the limits for this many of its time constants (see _observe)
TRUST_TIME_CONSTANTS = 3.0
# joint_states without a model for this long (s) is worth a warning; a healthy launch gets its
# description a little after the first joint_states (DDS matching), up to ~2.9 s measured
NO_MODEL_GRACE = 3.0
# A goal that succeeds (no goal tolerance: JTC's default) with a joint further than this (rad or
# m) from its last point is worth a warning: the result alone reads as reached
UNCHECKED_ERROR = 0.01
FOLLOWING_MODES = ('feedforward', 'computed_torque')     # the modes that take goals
# s: a commanded state received this long after the one before counts as late (the process or
# its peer stalled: a loaded machine; the drive held the last command meanwhile)
LATE = 0.02
# s: a commanded joint stale this long is a stalled stream, not a hiccup: an error names it once
# per stall (the on_timeout command goes on: see doc/concepts/controller.md, "Safe outputs")
STALLED = 1.0
# An arm whose commanded joints all moved slower than REST_SPEED (rad/s or m/s) for REST_TIME (s)
# is at rest: through a stall, on_timeout gravity commands the mean of what held it there
# (g(q) plus what the loop added for a load or friction the model lacks: xarm7 with a 1.5 kg tool
# its description lacks sagged 0.08 rad in a 0.3 s stall on g(q) alone, test_stalls.py)
REST_SPEED, REST_TIME = 0.02, 0.2
LIMITS_PERIOD = 0.05    # s: ~/active_limits at most this often (it changes within a millisecond)
LIMIT_TEXT = dict(position='the soft position limit', velocity='the velocity limit',
                  workspace='the workspace wall', tool_speed='the tool speed limit',
                  effort='the effort limit', torque_rate='the torque rate limit')


def over_bandwidth(law, period):
    """Return task_bandwidth's (w, d, axis) where ``law`` asks more than ``period`` (s) holds."""
    w, d, axis = task_bandwidth(law)
    return (w, d, axis) if w * period > BANDWIDTH_LIMIT or d * period > DAMPING_LIMIT else None


def crossed_text(c):
    """Return the warning for a joint past a limit the layer did not hold (a limits.Crossed)."""
    if c.kind in ('tool_speed', 'workspace'):
        what = (f'{c.name} at {c.at / c.limit:.2f} times the tool speed ({c.at:.3g} of '
                f'{c.limit:.3g} m/s)' if c.kind == 'tool_speed' else
                f'{c.name}: {1e3 * c.at:.3g} mm beyond the workspace wall')
        return (f'limit crossed: {what}; the observer reads {c.pushed:.3g} N there beyond the '
                f'model (the arm can exert {c.effort:.3g} N that way): a push quicker than the '
                f'estimate or more than the effort limits counter, joints pinned by their own '
                f'bounds, or commands arriving late')
    unit, speed, force = ('m', 'm/s', 'N') if c.prismatic else ('rad', 'rad/s', 'N m')
    what = (f'{c.name} at {c.at / c.limit:.2f} times its velocity limit ({c.at:.3g} of '
            f'{c.limit:.3g} {speed})' if c.kind == 'velocity' else
            f'{c.name} {abs(c.at - c.limit):.3g} {unit} past its hard position limit '
            f'({c.at:.4g} beyond {c.limit:.4g})')
    return (f'limit crossed: {what}; the observer reads {c.pushed:.3g} {force} on it beyond '
            f'the model (its effort limit {c.effort:.3g}): a push quicker than the estimate '
            f'or more than the effort limits counter, a load or friction the model lacks, or '
            f'commands arriving late')


class Reply:
    """
    What one turn of the loop asks the node to publish (None: nothing of that kind).

    ``command``: the efforts (commanded-joint order); ``desired``: (q_d, qd_d, qdd_d) of the
    trajectory in model order, or None; ``answers_state``: the outputs are stamped with the
    joint state they answer (else the node's clock); ``estimate``: the observer ran (its
    external torques are ``loop.estimate``), to be published when ``publish_estimate``;
    ``collision``: (joint indices, external torques, thresholds, reaction) of a new collision;
    ``pose``: the task frame's 4x4 pose at that state; ``limits``: what the limits layer did
    (a tuple of (name, kind)) when that is to be published.
    """

    __slots__ = ('command', 'desired', 'answers_state', 'estimate', 'publish_estimate',
                 'collision', 'pose', 'limits')

    def __init__(self):
        self.clear()

    def clear(self):
        self.command = self.desired = self.collision = self.pose = self.limits = None
        self.answers_state = self.estimate = self.publish_estimate = False
        return self


class ControlLoop:
    """The rules of feedforward_node, from a message's contents and the time to the outputs."""

    def __init__(self, log, plant_clock=None):
        self.log = log
        # the plant's time (s) when it is simulated (use_sim_time), else None: staleness is in it
        # too (JointStateStore.stale)
        self.plant_clock = plant_clock
        self.ctrl = self.observer = self.observing = None    # observing: its ObserverSettings
        self.values = {}
        self.observer_ready = False       # the observer's kernel is loaded (see the node)
        self.watched = False              # any collision threshold > 0
        self.collided = self.armed = False
        self.shaper = CommandShaper()     # every command's shaping; the fade after a change
        self.stamp = 0.0                  # the latest commanded-joint state's stamp (0: none)
        self.reported_stale = None        # the stale (or missing) commanded joints reported
        self.stall_said = False           # the error of this stall (over STALLED) was logged
        self.gaps = collections.deque(maxlen=20)   # recent intervals between commanded states
        self.steps = collections.deque(maxlen=20)  # ... in their stamps' time (see ``period``)
        self.late = 0                     # commanded states over late_after after the last
        self.late_after = LATE            # s (``count_late_after``)
        self.late_at = -np.inf            # when (monotonic s) the latest late state came
        self.late_gap = 0.0               # and how long after the one before it (s)
        self.last_update = None
        self.no_model_since = None        # when joint_states first came without a model
        self.model_time = None
        self.target_time = None           # arm_time of the last target pose or twist
        self._held_said = None            # the force hold a streamed wrench was told about
        self.target_streaming = False     # targets coming within task.target_timeout
        self.observed = None              # the time of the observer's last sample
        self.efforts = self.effort_seen = self.motor = self.estimate = None     # model order
        self.efforts_seen = False
        self.command = None               # the last command sent (commanded-joint order)
        self.goal = None                  # the running FollowJointTrajectory Goal
        self.active_limits = ()           # what the limits layer did to the last command
        self.published_limits = None      # ... as last published, and when (monotonic s)
        self.limits_published_at = -np.inf
        self.first_state_seen = False     # the first full state's checks made (box, resistance)
        self.commands = self.estimates = 0
        self.reply = Reply()
        self._defaults_noted = False

    # ---- configuration -----------------------------------------------------------------------
    def use_model(self, ctrl, observer, observing, values, now):
        """
        Run ``ctrl`` (a new robot description): state and motion carried over, bumpless.

        ``observer`` (None: off) runs with ``observing``, its ObserverSettings.

        The arm is where it is, and what it was doing goes on where the new model has its
        joints; the efforts move from the old model's to the new one's over BUMPLESS seconds.
        """
        old, n = self.ctrl, ctrl.base_model.n
        if old is not None:
            if ctrl.joints == old.joints and self.commands:
                self.fade_from(self.command)
            dropped = ctrl.take_over(old)           # its memory remapped by joint name
            if dropped:
                self.log.warning('dropped', f'the running trajectory is dropped: {dropped}; '
                                            f'holding position', 0.0)
            elif ctrl.ref.trajectory is not None:
                self.log.info('goes on', 'the running trajectory goes on with the new model',
                              0.0)
        goal = self.goal
        if goal is not None and (ctrl.ref.trajectory is None or ctrl.joints != goal.joints):
            self._end_goal(ABORTED, INVALID_GOAL, 'the robot_description changed and the '
                                                  'trajectory does not go on with the new model',
                           hold=False)
        elif goal is not None:
            goal.trajectory = ctrl.ref.trajectory   # the same motion, the new model's indices
        self.ctrl, self.values = ctrl, values
        self.first_state_seen = False
        self._set_observer(observer, observing)
        self.collided = self.armed = False
        self.efforts, self.effort_seen = np.zeros(n), np.zeros(n, dtype=bool)
        self.efforts_seen = False         # an effort seen for every joint (a cache)
        self._observed_tau = np.zeros((2, n))      # the observer's torques, friction
        self._pushed = np.zeros(n)      # the estimate less the friction (_pushing)
        self._brakes = np.zeros((3, n))     # _braking's: its answer, the other view, scratch
        self.motor, self.estimate = np.zeros(n), np.zeros(n)
        self.command = np.zeros(len(ctrl.joints))
        self.held, self.rest = np.zeros(len(ctrl.joints)), None    # see _note_rest
        self.reported_stale, self.last_update, self.stall_said = None, None, False
        self.gaps.clear()
        self.steps.clear()
        self.model_time = now
        self._defaults_noted = False
        self.commands = self.estimates = 0         # torques_every counts anew per controller

    def use_parameters(self, ctrl, observer, observing, values, target_topic):
        """
        Run ``ctrl`` (new parameters, the same model): state, reaction and motion carried over.

        A joint trajectory goes on when the commanded joints stay and the mode stays a joint
        mode; entering a task mode targets the frame's pose now.
        """
        old = self.ctrl
        if old is not None:
            if not ctrl.carry_on_from(old):
                self.log.info('mode', f'mode {ctrl.mode}: the running trajectory is dropped; '
                                      f'the task target is the frame\'s pose now', 0.0)
            if ctrl.mode in TASK_MODES and ctrl.mode != old.mode:
                self.log.info('mode', f'mode {ctrl.mode}: frame {ctrl.task.frame}, target '
                                      f'its pose now; targets on {target_topic}', 0.0)
        self.ctrl, self.values = ctrl, values
        self.first_state_seen = False
        if self.goal is not None and old is not None and ctrl.mode != old.mode:
            self._end_goal(ABORTED, INVALID_GOAL, f'the mode changed from {old.mode} to '
                                                  f'{ctrl.mode}', hold=ctrl.mode in JOINT_MODES)
        self._set_observer(observer, observing)
        if len(self.command) != len(ctrl.joints):
            self.command = np.zeros(len(ctrl.joints))
        self.commands = self.estimates = 0         # torques_every counts anew per controller

    def use_values(self, values):
        """Take new parameter values that leave the controller as it is (the loop's own)."""
        self.values = values

    def set_observer_ready(self, ready):
        """Say whether the observer's compiled kernel is loaded (the observer runs once it is)."""
        self.observer_ready = bool(ready)

    def fade_from(self, command):
        """Start the next command at ``command`` (commanded-joint order) and fade over BUMPLESS."""
        self.shaper.fade_from(command)

    def _set_observer(self, observer, observing):
        self.observer, self.observing = observer, observing
        # the estimate's time constant, 1 / K_O (the slowest joint's; 0: no observer)
        self.estimate_time = 0.0 if observer is None else 1.0 / float(np.min(observing.gain))
        self._trusted_from = -math.inf      # the estimate's braking counts from then (_observe)
        self.watched = bool((observing.thresholds > 0).any())

    # ---- joint states ------------------------------------------------------------------------
    def joint_states(self, names, positions, velocities, efforts, stamp, now, clock):
        """
        Take one joint_states message; return the Reply (None: nothing to publish).

        ``stamp``: its header stamp in seconds (0: unstamped); ``now``: monotonic seconds;
        ``clock``: a callable returning the node's ROS time (s), read only when needed.
        """
        ctrl = self.ctrl
        if ctrl is None:
            if self.no_model_since is None:
                self.no_model_since = now
            elif now - self.no_model_since >= NO_MODEL_GRACE:
                self.log.once('no-model', f'joint_states have arrived for {NO_MODEL_GRACE:g} s '
                                          f'but there is no valid robot_description yet: '
                                          f'publishing nothing')
            return None
        try:
            n_model, n_cmd = ctrl.state.merge(names, positions, velocities, now, stamp)
        except ValueError as e:
            self.log.warning(('state', str(e).split(' ')[0]), f'rejected joint_states: {e}')
            return None
        if n_model == 0:
            self.log.warning('foreign', f'joint_states names none of the model\'s joints '
                                        f'({list(names)[:4]}...): ignored')
            return None
        if self.observer is not None and len(efforts) == len(names):
            self._take_efforts(names, efforts)
        if n_cmd == 0:
            return None         # e.g. a gripper's own stream: state updated, no command of its own
        if self.last_update is not None:
            gap = now - self.last_update
            self.gaps.append(gap)
            if gap > self.late_after:
                self.late += 1
                self.late_at, self.late_gap = now, gap
            step = stamp - self.stamp if stamp > 0.0 and self.stamp > 0.0 else 0.0
            self.steps.append(step if step > 0.0 else gap)
        self.last_update = now
        self.stamp = stamp
        reply = self.reply.clear()
        if self.observer is not None and self.observer_ready and not ctrl.state.missing():
            # before the command (what acted up to this state is the last one sent): run after
            # it, the estimate competes for the CPU with the driver reading the command
            self._observe(stamp or clock(), reply)
        if self.values['rate'] == 0:
            self._command(now, clock, reply)
        return reply

    def _braking(self, raw, pushed):
        """
        Return what of the push ``pushed`` (_pushing's) the bounds may count where it brakes.

        Per joint the lesser of it and the raw estimate less the modelled friction at this
        state, where the two agree in sign, else nothing: a friction the arm lacks leaves in
        ``pushed`` a braking of the viscous part's lag while a joint slows down, and in the
        other while it speeds up (xarm7 without its URDF's damping, taken as a braking push:
        its tool at 1.86 of its speed).
        """
        ctrl = self.ctrl
        out, alt, tmp = self._brakes
        np.subtract(raw, ctrl.model_friction(ctrl.qd, out=tmp), out=alt)
        if ctrl.compensated is not None:
            alt += ctrl.compensated
        np.multiply(pushed, alt, out=tmp)
        np.abs(alt, out=alt)
        np.abs(pushed, out=out)
        np.minimum(out, alt, out=out)
        np.copysign(out, pushed, out=out)
        np.multiply(out, tmp > 0.0, out=out)        # where the two views agree in sign
        return out

    def _pushing(self, external):
        """
        Return the observer's estimate ``external`` less the joints' friction as modelled.

        The estimate is of what acts beyond the model, its friction included (``_observe``):
        on an arm with less friction than its description, the friction it lacks reads as a
        push along the motion. The limits layer predicts motion without friction (beyond the
        compensation in the command, ``ctrl.compensated``, which it takes as spent on it), so
        what acts beyond that is the estimate less the modelled friction plus that
        compensation (without either, the estimate as it is): counted as a push, the missing
        friction of a light wrist (xarm7's joint7, 1.4e-4 kg m^2) flipped its velocity bound
        with each reversal of its motion, and the arm, holding still, never came to rest.
        The caller passes the estimate as it is where the model has no friction, and while
        ``~/estimate_payload`` runs (``unknown_load``: the layer's bounds take none then, its
        ``crossed`` says it). The friction is as the estimate holds it, lagged alike
        (``MomentumObserver.followed``): less the friction at this state, a wrist holding still
        within its friction's smoothing velocity (xarm7's joint7 in a task mode, the target
        held) saw the estimate's steady part against a friction that changed sign with every
        reversal, and kicked itself to 0.3 rad/s every 11 ms.
        """
        ctrl, pushed = self.ctrl, self._pushed
        np.subtract(external, self.observer.followed, out=pushed)
        if ctrl.compensated is not None:
            # the layer takes the compensation in the command as spent on the friction (z1's
            # gripper: counted as acceleration, it held the joint still); so is it here
            pushed += ctrl.compensated
        return pushed

    def _take_efforts(self, names, efforts):
        model_idx, msg_idx, _ = self.ctrl.state.map(names)
        effort = np.asarray(efforts, dtype=float)[msg_idx]
        ok = np.isfinite(effort)
        self.efforts[model_idx[ok]] = effort[ok]
        self.effort_seen[model_idx[ok]] = True
        if not self.efforts_seen:
            self.efforts_seen = bool(self.effort_seen.all())

    # ---- the observer and collisions ---------------------------------------------------------
    def _observe(self, t, reply):
        """
        Update the external-torque estimate with the state at ``t`` (s); detect collisions.

        The torques that acted up to this state: the measured efforts (times effort_gain) or
        the last command (``self.motor``), less the joints' friction and offset as modelled. A
        reaction acts from the next command on.
        """
        ctrl, v = self.ctrl, self.values
        source = v['observer.torque_source']
        measured = self.efforts_seen
        if source == 'measured' and not measured:
            missing = [j for j, seen in zip(ctrl.base_model.joint_names, self.effort_seen)
                       if not seen]
            self.log.warning('effort', f'observer.torque_source is measured but joint_states '
                                       f'carry no effort for {missing}: no estimate')
            return
        # what moves the arm: the drives' torques less the joints' friction and offset as
        # modelled (identified: what an effort reads beyond the rigid-body torques)
        tau, friction = self._observed_tau
        if source == 'measured' or (source == 'auto' and measured):
            np.multiply(self.efforts, self.observing.effort_gain, out=tau)
        else:
            tau[:] = self.motor
        tau -= ctrl.model_friction(ctrl.qd, out=friction)
        skipped = self.observer.skipped
        r = self.observer.update(ctrl.q, ctrl.qd, tau, t,
                                 None if ctrl.frictionless else friction)
        if self.observer.skipped > skipped:
            # a gap: the observer held its estimate over it and starts again from this sample.
            # The bounds count no braking by it until it has followed for TRUST_TIME_CONSTANTS
            # of its time constant (kinova's shoulder after a 93 ms stall, braked by the stale
            # estimate: 1.25 v_max)
            self._trusted_from = t + TRUST_TIME_CONSTANTS * self.estimate_time
            gap = (t - (self.observed or t)) * 1e3
            what = (f'joint_states interval of {gap:.1f} ms, far above the recent ones' if gap > 0
                    else f'joint_states stamped {-gap:.1f} ms before the previous ones')
            self.log.info('observer gap', f'observer: {what}: estimate held over it '
                                          f'({self.observer.skipped} so far)', 30.0)
        self.observed = t
        self.estimate[:] = r
        self.estimates += 1
        every = v['external_torques_every']
        reply.estimate = True
        reply.publish_estimate = bool(every and not self.estimates % every)
        # detection is armed once the estimate has settled (5 / K_O of samples since it started)
        # under the thresholds: what held the arm until then (brakes, drives the commands do not
        # reach yet) shows as external torques and must not count as a collision
        over = self._detected(r) if self.watched else ()
        if len(over) and not self.collided:
            self.collided = True
            reaction = v['collision.reaction']
            reply.collision = (over, r[over].copy(), self.observing.thresholds[over].copy(),
                               reaction)
            if reaction != 'none':
                ctrl.react(reaction, ctrl.q)
                self._end_goal(ABORTED, PATH_TOLERANCE_VIOLATED, f'collision on '
                                                                 f'{self._names(over)}: '
                                                                 f'reaction {reaction}',
                               hold=False)
            names = self._names(over)
            limit = self.observing.thresholds[over].tolist()
            self.log.error(f'collision: external torques {np.round(r[over], 3).tolist()} N m on '
                           f'{names} over the thresholds {limit}; '
                           f'reaction {reaction}' +
                           (' until ~/reset_collision' if reaction != 'none' else ''))

    def _names(self, indices):
        return [self.ctrl.base_model.joint_names[i] for i in indices]

    def _detected(self, r):
        """Arm or disarm collision detection; return the joints over threshold that count."""
        if not self.observer.settled():
            self.armed = False
            return ()
        over = over_threshold(r, self.observing.thresholds)
        if self.armed:
            return over
        if len(over):
            names = [self.ctrl.base_model.joint_names[i] for i in over]
            self.log.warning('not armed', f'collision detection not armed yet: external '
                                          f'torques {np.round(r[over], 2).tolist()} N m on '
                                          f'{names} over the thresholds since the estimate '
                                          f'started (brakes on? commands not reaching the '
                                          f'drives?); it arms once they are under')
            return ()
        self.armed = True
        self.log.info('armed', 'collision detection armed: the external torque estimate has '
                               'settled under the thresholds', 0.0)
        return ()

    def reset_collision(self):
        """End the reaction to a collision; return (success, message)."""
        ctrl = self.ctrl
        if ctrl is None:
            return False, 'no robot_description yet'
        was = ctrl.ref.reaction
        ctrl.clear_reaction()
        self.collided = False
        message = ('collision reaction ended' if was else 'no collision reaction was '
                   'active') + ('; collision detection armed' if self.armed else
                                '; collision detection arms once the estimate has '
                                'settled under the thresholds')
        self.log.info('reset', message, 0.0)
        return True, message

    # ---- commands ----------------------------------------------------------------------------
    def _command(self, now, clock, reply):
        """Compute the command for the latest state into ``reply`` (or the on_timeout one)."""
        if self._timeout_if_stale(now, reply):
            return
        ctrl = self.ctrl
        # ROS time: for the trajectory, and the stamp when the state has none (or rate > 0)
        stamped = self.values['rate'] == 0 and self.stamp != 0.0
        following = ctrl.ref.trajectory is not None
        t = self.trajectory_time(clock()) if (following or not stamped) else 0.0
        des = ctrl.desired(t, ctrl.q) if ctrl.mode not in TASK_MODES else None
        if self.goal is not None and self._goal_ends(t, des):
            des = ctrl.desired(t, ctrl.q)           # the hold, from this command on
        # the state's time: the torque rate limit's clock and the task modes' stiffness ramp
        at = self.stamp if stamped else now
        external = self.estimate if self.observer is not None and self.estimates else None
        if ctrl.mode in TASK_MODES:
            self._target_timeout(now)
        full = ctrl.full_torque(ctrl.q, ctrl.qd, t, des, at, external)
        if ctrl.memory.force_event is not None:
            self.log.warning('force', f'force control: {ctrl.memory.take_force_event()}')
        if not self.first_state_seen:
            self.first_state_seen = True
            self._say_resistance()
            self._check_box()
        braking = external
        if external is not None and not (ctrl.frictionless or ctrl.limit_layer.unknown_load):
            raw = external
            external = self._pushing(external)
            braking = self._braking(raw, external)
        trusted = external is not None and not (self.observed is not None and
                                                self.observed < self._trusted_from)
        tau, clamped = self.shaper.shape(ctrl, full, at, now, external, braking,
                                         self.estimate_time if trusted else 0.0)
        if clamped is not None:
            names = [j for j, c in zip(ctrl.joints, clamped) if c]
            self.log.warning('clamp', f'effort clamped to the limits on {names}')
        self._limits_acted(ctrl.limit_layer, now, reply)
        self._note_rest(tau, now)
        self._sent(tau, reply)
        reply.desired = des
        reply.answers_state = stamped
        if ctrl.mode in TASK_MODES and ctrl.ref.reaction is None:
            reply.pose = ctrl.law.pose

    def _limits_acted(self, layer, now, reply):
        """
        Log what the limits layer did to this command (throttled per joint or frame).

        ``reply.limits`` says it when it differs from what was last published, at most every
        LIMITS_PERIOD (what held for a shorter while is published when it is next different).
        """
        active = self.active_limits = layer.active
        if active != self.published_limits and now - self.limits_published_at >= LIMITS_PERIOD:
            reply.limits = self.published_limits = active
            self.limits_published_at = now
        for name, kind in active:
            if kind != 'effort':             # the effort clamp has its own warning
                self.log.warning(('limit', name, kind), f'limit: {LIMIT_TEXT[kind]} of {name} '
                                                        f'shapes the command', 5.0)
        for c in layer.crossed:
            self.log.warning(('crossed', c.name, c.kind), crossed_text(c), 5.0)

    def _say_resistance(self):
        """
        On the first full state: say the push the arm resists there, once per model and frame.

        An arm that cannot hold its own weight there: an error instead.
        """
        layer = self.ctrl.limit_layer
        held = layer.resistance(self.ctrl.q)
        if held.force < 0:
            self.log.once(('resistance', self.ctrl.base_model.name, layer.frame),
                          f'limits: {held.joint} needs {abs(held.gravity):.3g} of gravity torque '
                          f'at this pose, beyond its effort limit {held.effort:.3g}: the arm '
                          f'cannot hold its own weight here', 'error')
        elif math.isfinite(held.force):
            self.log.once(('resistance', self.ctrl.base_model.name, layer.frame),
                          f'limits: at this pose {layer.frame} resists a push of '
                          f'{held.force:.3g} N in its weakest direction ({held.joint}: effort '
                          f'limit {held.effort:.3g} less {abs(held.gravity):.3g} of gravity); a '
                          f'larger push overpowers the arm, and no limit holds it', 'info')
        if self.observer is not None and held.force > 0:
            # a push the arm resists may still outrun its estimate, which the bounds count
            sudden = layer.sudden_push(self.ctrl.q, self.estimate_time)
            if sudden.force < held.force:
                self.log.once(('sudden push', self.ctrl.base_model.name, layer.frame),
                              f'limits: at this pose a push on {layer.frame} above '
                              f'{sudden.force:.3g} N, arriving at once, takes {sudden.joint} '
                              f'from rest to its velocity limit within '
                              f'{sudden.within * 1e3:.3g} ms, the time constant of the '
                              f'observer (1 / observer.gain), whose estimate the bounds '
                              f'count pushes by: such a push crosses that limit before they '
                              f'act (set armature if the URDF lacks the rotor inertia)',
                              'warning')

    def _check_box(self):
        """On the first full state: a workspace box the frame is outside of is not used."""
        layer = self.ctrl.limit_layer
        outside = layer.outside(self.ctrl.q)
        if outside:
            layer.drop_box()
            self.log.error(f'limits.workspace ignored: {outside}; a box must contain the frame '
                           f'where the arm is (its walls would push it there): move the arm '
                           f'in, or set a box around it')

    def limits_refusal(self, ctrl):
        """Return why ``ctrl``'s limits cannot be taken now (None: they can), from the state."""
        if self.ctrl is None or self.ctrl.state.missing():
            return None
        # the state now, the candidate's defaults where none came (its own store is not
        # taken: the candidate may be refused)
        live = self.ctrl
        outside = ctrl.limit_layer.outside(np.where(live.received, live.q, ctrl.default_q))
        return outside and f'{outside}: a box must contain the frame where the arm is'

    def rate_tick(self, now, clock):
        """Run the rate timer (rate > 0): a command for the latest state; the Reply (or None)."""
        if self.ctrl is None:
            return None
        reply = self.reply.clear()
        self._command(now, clock, reply)
        return reply

    def _note_rest(self, tau, now):
        """
        Follow whether the arm is at rest and the mean command holding it (``held``).

        ``rest``: [since, last]: the time the commanded joints came under REST_SPEED and of the
        latest command averaged (a first-order mean over REST_TIME); None while moving.
        """
        if self.ctrl.limit_layer.top_speed > REST_SPEED:     # of the commanded joints
            self.rest = None
        elif self.rest is None:
            self.rest = [now, now]
            self.held[:] = tau
        else:
            self.held += min(1.0, (now - self.rest[1]) / REST_TIME) * (tau - self.held)
            self.rest[1] = now

    def _timeout_torques(self):
        """Return the on_timeout command: gravity's is the held mean where the arm was at rest."""
        ctrl, rest = self.ctrl, self.rest
        if self.values['on_timeout'] == 'gravity' and rest is not None and \
                rest[1] - rest[0] >= REST_TIME:
            return self.held.copy()
        return ctrl.timeout_command(self.values['on_timeout'],
                                    ctrl.q if ctrl.received.any() else None)

    def _sent(self, tau, reply):
        """Note ``tau`` as the command going out (the observer's commanded torques)."""
        ctrl = self.ctrl
        self.command[:] = tau
        self.commands += 1
        reply.command = self.command
        if self.observer is not None and self.values['observer.torque_source'] != 'measured':
            # what the drives apply until the next command: the observer's commanded torques
            self.motor[:] = 0.0
            self.motor[ctrl.cmd] = tau
            if ctrl.hardware_compensates_gravity:
                self.motor += gravity_torques(ctrl.model, ctrl.q)

    def trajectory_time(self, clock):
        """
        Return the time (s) a trajectory is at: the latest joint state's stamp, else ``clock``.

        The stamp when commanding on every joint state (rate 0) and it lies within
        STAMP_TOLERANCE of the clock; else the clock (with a warning when the stamp is off).
        """
        if self.values['rate'] != 0 or self.stamp == 0.0:
            return clock
        if abs(self.stamp - clock) <= STAMP_TOLERANCE:
            return self.stamp
        self.log.warning('time base', f'joint_states stamps are {self.stamp - clock:+.3f} s from '
                                      f'this node\'s clock (use_sim_time?): timing the '
                                      f'trajectory by the clock')
        return clock

    # ---- joint trajectories ------------------------------------------------------------------
    def trajectory(self, tables, points, stamp, clock, target_topic):
        """
        Take a joint trajectory message; True when it runs (else it logged why not).

        ``tables``: a callable returning (names, times, positions, velocities, accelerations,
        efforts) (ValueError: malformed); ``points``: how many it has (0: stop and hold);
        ``stamp``: its header stamp (s; 0: start now); ``target_topic``: where the task modes
        take targets.
        """
        ctrl, log = self.ctrl, self.log
        if ctrl is not None and not points:
            self._end_goal(ABORTED, INVALID_GOAL, 'stopped by an empty trajectory on the '
                                                  'joint_trajectory topic', hold=False)
            ctrl.hold_at_next_command()
            log.info('empty', 'empty trajectory: stopping the current one and holding position',
                     0.0)
            return False
        if ctrl is not None and ctrl.mode in TASK_MODES:
            log.error(f'rejected trajectory: mode {ctrl.mode} follows {target_topic}, not joint '
                      f'trajectories (set mode to computed_torque or feedforward for those)')
            return False
        if ctrl is None or ctrl.state.missing():
            log.error('rejected trajectory: ' + (
                'no robot_description yet' if ctrl is None
                else f'no joint_states yet for {ctrl.state.missing()}'))
            return False
        now = self.trajectory_time(clock())       # where the arm is in time
        start = now if stamp == 0 else stamp
        try:
            *table, efforts = tables()
            (names, times, *rest), _ = self._scaled(table)
            traj = ctrl.set_trajectory(names, times, *rest, start_time=start, now=now, q=ctrl.q,
                                       qd=ctrl.qd, efforts=efforts)
        except ValueError as e:
            log.error(f'rejected trajectory: {e}; keeping the previous behaviour')
            return False
        self._end_goal(ABORTED, INVALID_GOAL, 'replaced by a trajectory on the joint_trajectory '
                                              'topic', hold=False)
        log.info('accepted', f'trajectory accepted: {len(times)} points ({traj.kind}) for '
                             f'{list(traj.joint_names)}, ends in {traj.end_time - now:.2f} s', 0.0)
        return True

    def _scaled(self, tables):
        """
        Apply trajectory_scaling to a trajectory arriving now (ValueError: refused).

        Returns the tables to run, stretched when needed, and the factor (1: as given).
        """
        mode, ctrl = self.values['trajectory_scaling'], self.ctrl
        if mode == 'off':
            return tables, 1.0
        t0 = time.perf_counter()
        result = ctrl.check_trajectory(*tables, q=ctrl.q, qd=ctrl.qd)
        took = (time.perf_counter() - t0) * 1e3
        k = result.min_time_scale
        if result.feasible:
            self.log.info('check', f'trajectory check ({took:.1f} ms): {result.message()}', 0.0)
            return tables, 1.0
        if mode == 'reject' or not np.isfinite(k):
            raise ValueError(f'{result.message()} (trajectory_scaling {mode})')
        names, times, positions, velocities, accelerations = tables
        stretched = (names, [x * k for x in times], positions,
                     None if velocities is None else (np.asarray(velocities) / k).tolist(),
                     None if accelerations is None else
                     (np.asarray(accelerations) / k**2).tolist())
        self.log.warning('stretched',
                         f'trajectory stretched by k* = {k:.4g} to {times[-1] * k:.3f} s (was '
                         f'{times[-1]:.3f} s): the {result.limiting_kind} limit of '
                         f'{result.limiting_joint} at t = {result.limiting_time:.3f} s (check '
                         f'{took:.1f} ms)', 0.0)
        return stretched, k

    def check(self, tables, start, period):
        """
        ~/check_trajectory: the feasibility of a trajectory from a start (ValueError: refused).

        ``start``: (names, positions, velocities) of the start state (velocities may be
        empty). The start is start's joints where it names them, else the first point (the
        trajectory's joints) or the latest joint_states / default_positions (the others).
        """
        ctrl = self.ctrl
        names, times, positions, velocities, accelerations = tables
        if not times:
            raise ValueError('the trajectory has no point')
        model = ctrl.base_model
        q, qd = ctrl.q.copy(), np.zeros(model.n)
        for j, name in enumerate(names):
            if model.has_joint(name):
                q[model.index(name)] = positions[0][j] if len(positions[0]) > j else 0.0
                if velocities is not None and len(velocities[0]) > j:
                    qd[model.index(name)] = velocities[0][j]
        s_names, s_positions, s_velocities = start
        if len(s_positions) != len(s_names) or len(s_velocities) not in (0, len(s_names)):
            raise ValueError(f'start_state has {len(s_names)} names, {len(s_positions)} '
                             f'positions and {len(s_velocities)} velocities')
        for k, name in enumerate(s_names):
            if not model.has_joint(name):
                raise ValueError(f'start_state names unknown joint {name}')
            v = s_velocities[k] if len(s_velocities) else 0.0
            if not (np.isfinite(s_positions[k]) and np.isfinite(v)):
                raise ValueError(f'start_state of {name} is not finite')
            q[model.index(name)] = s_positions[k]
            qd[model.index(name)] = v
        return ctrl.check_trajectory(names, times, positions, velocities, accelerations, q=q,
                                     qd=qd, sample_period=period)

    # ---- FollowJointTrajectory goals --------------------------------------------------------
    def follow(self, request, now, clock, notify=None):
        """
        Take a FollowJointTrajectory goal (a trajectory_goal.Request); return its running Goal.

        Refused (logged) when it cannot run: the result code and the reason. An accepted goal
        replaces the running one (which ends, replaced) and starts from the current state;
        ``notify`` is called once it has ended (``Goal.outcome``). ``now``: monotonic seconds;
        ``clock``: the node's ROS time.
        """
        try:
            goal = self._accept(request, now, clock, notify)
        except Refused as e:
            self.log.error(f'goal refused ({CODES[e.code]}): {e}')
            raise
        self.log.info('goal', f'goal accepted: {len(goal.times)} points for '
                              f'{list(request.names)}, ends in '
                              f'{goal.end_time - self.trajectory_time(clock()):.2f} s', 0.0)
        return goal

    def _accept(self, request, now, clock, notify):
        ctrl, v = self.ctrl, self.values
        if ctrl is None:
            raise Refused(INVALID_GOAL, 'no robot_description yet')
        if ctrl.mode not in FOLLOWING_MODES:
            raise Refused(INVALID_GOAL, f'mode {ctrl.mode} does not follow joint trajectories '
                                        f'(set mode to computed_torque or feedforward)')
        if ctrl.ref.reaction is not None:
            raise Refused(INVALID_GOAL, f'a collision reaction ({ctrl.ref.reaction}) is active: '
                                        f'call ~/reset_collision first')
        stale = ctrl.state.missing() or ctrl.state.stale(
            now, v['state_timeout'], self.plant_clock)
        if stale:
            raise Refused(INVALID_GOAL, f'no fresh joint_states for {stale} (state_timeout '
                                        f'{v["state_timeout"]} s)')
        names, times, *table, efforts = goal_tables(
            request, ctrl.joints, v['allow_partial_joints_goal'],
            v['allow_nonzero_velocity_at_trajectory_end'])
        path, goal_tol, goal_time = goal_tolerances(request, ctrl.joints, v)
        t = self.trajectory_time(clock())
        start = t if request.stamp == 0 else request.stamp
        if start + times[-1] < t:
            raise Refused(OLD_HEADER_TIMESTAMP, f'stamped {request.stamp:.3f} s, the trajectory '
                                                f'ended {t - start - times[-1]:.3f} s ago')
        try:
            (names, times, *table), scale = self._scaled((names, times, *table))
            ctrl.set_trajectory(names, times, *table, start_time=start, now=t, q=ctrl.q,
                                qd=ctrl.qd, efforts=efforts)
        except ValueError as e:
            raise Refused(INVALID_GOAL, str(e)) from None
        self._end_goal(ABORTED, INVALID_GOAL, 'replaced by a new goal', hold=False)
        self.goal = Goal(ctrl.joints, times, path, goal_tol, goal_time, start, scale, notify)
        self.goal.trajectory = ctrl.ref.trajectory
        return self.goal

    def cancel(self, goal):
        """Cancel ``goal``: hold the current position, bumpless. False when it is not running."""
        if goal is not self.goal or not goal.running:
            return False
        self._end_goal(CANCELED, SUCCESSFUL, 'canceled: holding the position')
        return True

    def end_goal(self, message):
        """End the running goal, if any (aborted, INVALID_GOAL), holding the position."""
        self._end_goal(ABORTED, INVALID_GOAL, message)

    def _goal_ends(self, t, des):
        """Check the running goal at trajectory time t; True when it ended holding here."""
        goal, ctrl = self.goal, self.ctrl
        if ctrl.ref.trajectory is not goal.trajectory:
            self._end_goal(ABORTED, INVALID_GOAL, 'its trajectory was replaced (the payload '
                                                  'service, or another trajectory)', hold=False)
            return False
        c = ctrl.cmd
        outcome = goal.check(t, (des[0][c], des[1][c], des[2][c]), ctrl.q[c], ctrl.qd[c])
        if outcome is None:
            return False
        self.goal = None
        self._log_end(outcome)
        unchecked = sorted(((j, float(des[0][i] - ctrl.q[i])) for j, i, tol in
                            zip(goal.joints, c, goal.goal[:, 0]) if tol == 0 and
                            abs(des[0][i] - ctrl.q[i]) > UNCHECKED_ERROR),
                           key=lambda je: -abs(je[1]))      # the largest first
        if unchecked and outcome[0] == SUCCEEDED:
            self.log.warning('unchecked', f'goal reached with {unchecked[0][0]} '
                                          f'{unchecked[0][1]:+.3g} from its last point and no '
                                          f'goal tolerance to say so: set '
                                          f'constraints.{unchecked[0][0]}.goal (or send '
                                          f'goal_tolerance) to have positions checked; an '
                                          f'arm whose joints have friction needs '
                                          f'friction_compensation or higher gains', 30.0)
        if outcome[0] != SUCCEEDED:         # success holds the last point, as JTC does
            self._hold()
        return True

    def _end_goal(self, status, code, message, hold=True):
        """End the running goal (if any) with this outcome; ``hold``: here, bumpless."""
        goal = self.goal
        if goal is None:
            return
        self.goal = None
        self._log_end(goal.end(status, code, message))
        if hold:
            self._hold()

    def _log_end(self, outcome):
        status, code, message = outcome
        line = f'goal {status} ({CODES[code]}): {message}'
        if status == ABORTED:
            self.log.warning(('goal end', code), line, 0.0)
        else:
            self.log.info(('goal end', status), line, 0.0)

    def _hold(self):
        """Hold the current position from the next command on; the efforts fade over BUMPLESS."""
        self.ctrl.hold_here()
        if self.commands:
            self.fade_from(self.command)

    # ---- stale state -------------------------------------------------------------------------
    def _timeout_if_stale(self, now, reply):
        """
        Put the on_timeout command in ``reply`` when commanded joints are missing or stale.

        On_timeout gravity: the mean command that held the arm at rest (``_note_rest``), else
        g(q) at the last known q; before any joint state, no command at all (``reply.command``
        None): g(q) needs the pose, and a zero would release brakes that hold the arm until a
        first command (the simulator's, a drive's) and drop it.
        """
        stale = self.stale_joints(now)
        if not stale:
            return False
        ctrl = self.ctrl
        if self._nothing_to_hold():
            return True
        if self.goal is not None:
            self._end_goal(ABORTED, PATH_TOLERANCE_VIOLATED, f'joint_states of {stale} are stale '
                                                             f'(state_timeout): commanding '
                                                             f'{self.values["on_timeout"]} '
                                                             f'torque', hold=False)
            ctrl.hold_at_next_command()     # when they are back: hold where it is then
        tau = self.shaper.timeout(ctrl, self._timeout_torques(), now)
        self._sent(tau, reply)
        return True

    def _nothing_to_hold(self):
        """on_timeout gravity before any joint state (the drives not compensating gravity)."""
        ctrl = self.ctrl
        return (self.values['on_timeout'] == 'gravity' and not ctrl.received.any()
                and not ctrl.hardware_compensates_gravity)

    def stale_joints(self, now):
        """Commanded joints that are missing or stale now (empty when fresh); logs changes."""
        ctrl, v = self.ctrl, self.values
        missing = ctrl.state.missing()
        timeout = v['state_timeout']
        if missing:
            if now - self.model_time > timeout:     # not the first few ms of two streams
                self.log.once(('missing', ctrl.base_model.name),
                              f'no joint_states yet for {missing}: ' + (
                                  'commanding nothing until the first (gravity needs the pose)'
                                  if self._nothing_to_hold() else
                                  f'commanding {v["on_timeout"]} torque until every commanded '
                                  f'joint has been received once'), 'info')
            return missing
        stale = ctrl.state.stale(now, timeout, self.plant_clock)
        if stale:
            age = now - ctrl.updated[[ctrl.base_model.index(j) for j in stale]].max()
            if self.reported_stale != stale:
                self.log.warning(('stale', tuple(stale)),
                                 f'joint_states of {stale} are {age:.3f} s old (state_timeout '
                                 f'{timeout} s): commanding {v["on_timeout"]} torque')
                self._slow_warning(timeout)
            if age > STALLED and not self.stall_said:
                self.stall_said = True
                held = ('what held the arm at rest (else g(q) at the last known position; '
                        'nothing damps a moving arm)' if v['on_timeout'] == 'gravity'
                        else 'zero torque')
                self.log.error(f'joint_states of {stale} stalled for over {STALLED:.1f} s: the '
                               f'arm is not under feedback; commanding {held} until they are '
                               f'back. Check the joint state publisher (the driver, '
                               f'joint_state_broadcaster)')
        elif self.reported_stale:
            self.log.info('back', 'joint_states are back: commanding again')
            self.stall_said = False
        self.reported_stale = stale
        return stale

    def count_late_after(self, seconds=None):
        """Count a commanded state as late (``late``) ``seconds`` after the last; None: LATE."""
        self.late_after = LATE if seconds is None else float(seconds)

    def period(self):
        """
        Return the median interval (s) of recent commanded states, the loop's; or None.

        In the states' own time, their stamps (the time of receipt where unstamped or stamped
        alike). A simulation in lockstep acts one step after each state however slowly the
        machine runs it: timed by receipt, beside two busy cores the payload estimate gave
        xarm7's wrist the softer gains of a slower loop, and it stuck in its friction.
        Read at each state, the node's simulated time (/clock) lags some states by a step
        (xarm7 in lockstep: a median of 2 ms). On a loaded machine states arrive in bursts,
        the median interval of receipt a third of their period (0.3-0.4 ms at 1 kHz beside busy
        cores). None before 5 intervals.
        """
        return float(np.median(self.steps)) if len(self.steps) >= 5 else None

    def _slow_warning(self, timeout):
        """joint_states that arrive slower than 1/state_timeout go stale between messages."""
        if len(self.gaps) < 5:
            return
        gap = float(np.median(self.gaps))
        if gap > timeout:
            self.log.warning(
                'slow', f'joint_states arrive at {1 / gap:.1f} Hz (every {gap * 1e3:.0f} ms), '
                        f'slower than 1/state_timeout = {1 / timeout:.1f} Hz: the state goes '
                        f'stale between messages; raise the state_timeout parameter above '
                        f'{2 * gap:.2f} s or publish joint_states faster', 30.0)

    def watchdog(self, now):
        """
        Run the watchdog timer: the on_timeout command when the state is stale (Reply, or None).

        Also notes once per model the joints no joint_states names (they stay at
        default_positions), and in the task modes times out a silent target stream and checks
        the loop's bandwidth.
        """
        ctrl = self.ctrl
        if ctrl is None:
            return None
        if not self._defaults_noted and ctrl.received.any() and \
                now - self.model_time > self.values['state_timeout']:
            unseen = [j for j, seen in zip(ctrl.base_model.joint_names, ctrl.received)
                      if not seen and j not in ctrl.joints]     # missing commanded: stale_joints
            if unseen:
                defaults = [float(ctrl.default_q[ctrl.base_model.index(j)]) for j in unseen]
                self.log.info('defaults', f'no joint_states for {unseen}: they stay at '
                                          f'default_positions {defaults}', 0.0)
            self._defaults_noted = True      # checked once per model
        reply = self.reply.clear()
        if self._timeout_if_stale(now, reply):
            return reply
        if ctrl.mode in TASK_MODES:
            self._target_timeout(now)
            self._bandwidth()
        return None

    # ---- task-space targets ------------------------------------------------------------------
    def target_accepted(self, topic, frame):
        """Whether a target message on ``~/<topic>`` in ``frame`` can be taken now (else logs)."""
        ctrl = self.ctrl
        if ctrl is None:
            self.log.warning(('target', topic), f'ignored ~/{topic}: no robot_description yet')
            return False
        if ctrl.mode not in TASK_MODES:
            self.log.warning(('target', topic), f'ignored ~/{topic}: mode {ctrl.mode} takes '
                                                f'joint trajectories; targets need mode '
                                                f'cartesian_impedance or operational_space')
            return False
        if frame not in ('', ctrl.base_model.root_link):
            self.log.warning(('target frame', topic, frame),
                             f'refused ~/{topic} in frame "{frame}": targets are in the root '
                             f'link "{ctrl.base_model.root_link}" (or an empty frame_id)')
            return False
        if ctrl.state.missing():
            self.log.warning(('target', topic), f'ignored ~/{topic}: no joint_states yet for '
                                                f'{ctrl.state.missing()}')
            return False
        return True

    def target_pose(self, position, orientation, now, stamp=None):
        """
        Take a target pose (root link frame, quaternion x y z w); False when refused.

        ``stamp``: the time the pose is for, in the joint states' clock (its header's), or None.
        """
        ctrl = self.ctrl
        try:
            norm = ctrl.set_task_pose(position, orientation, stamp)
        except ValueError as e:
            self.log.warning(('target value', str(e)[:24]), f'refused ~/target_pose: {e}; '
                                                            f'keeping the previous target')
            return False
        if abs(norm - 1.0) > 1e-3:
            self.log.warning('quaternion', f'~/target_pose: quaternion of norm {norm:.4g} '
                                           f'normalised')
        far = np.linalg.norm(ctrl.task_pose()[:3, 3] - ctrl.ref.task_target.position)
        if far > ctrl.task.max_error[0]:
            self.log.info('far', f'~/target_pose is {far:.3f} m away: the error is clipped to '
                                 f'task.max_error {ctrl.task.max_error[0]} m')
        self._target_arrived(self.arm_time(now))
        return True

    def arm_time(self, now):
        """
        Return the time the targets' stream is timed in: the plant's when it is simulated.

        ``now``: monotonic s, the time otherwise. In simulated time a process streaming
        targets beside a lockstep simulator (one that waits for it: the demos' paced stream)
        may be starved for longer than task.target_timeout or the force re-arm pause of wall
        time while the arm stands still: not a stream that stopped (it held the target, then
        re-armed the force axes: a paced press read 9.50-10.45 N while sliding after this
        process stalled 0.5 s, 9.81-10.10 N without); and a twist's change over wall time is
        not the target's acceleration.
        """
        plant = self.plant_clock() if self.plant_clock is not None else None
        return now if plant is None else plant

    def target_twist(self, twist, now):
        """Take a target twist (v, w in root axes); False when refused."""
        now = self.arm_time(now)
        try:
            self.ctrl.set_task_twist(twist, now)
        except ValueError as e:
            self.log.warning('twist value', f'refused ~/target_twist: {e}')
            return False
        self._target_arrived(now, twist=True)
        return True

    def target_wrench(self, wrench, now=None):
        """
        Take a target wrench (force, torque in root axes); False when refused.

        ``now``: its arrival (monotonic s; timed in ``arm_time``). One of a stream does not
        re-arm force axes that hold (``control.force``): said once per hold.
        """
        ctrl = self.ctrl
        try:
            taken = ctrl.set_task_wrench(wrench, None if now is None else self.arm_time(now))
        except ValueError as e:
            self.log.warning('wrench value', f'refused ~/target_wrench: {e}')
            return False
        force = ctrl.memory.force
        if taken:
            self._held_said = None          # (a hold after this one is told about again)
            if force.active and ctrl.received.any():
                self._warn_friction(np.asarray(wrench, dtype=float))
        elif force.holding != self._held_said:
            self._held_said = force.holding
            self.log.warning('rearm', f'force control: the force axes hold ({force.holding})'
                                      f'; a target wrench streamed without a pause of '
                                      f'{REARM_PAUSE} s does not re-arm them: stop the stream '
                                      f'and send the wrench again', period=0.0)
        return True

    def _warn_friction(self, wrench):
        """Warn, with the figure, where the joints' friction rivals the force asked."""
        ctrl = self.ctrl
        fc = ctrl.friction.fc[ctrl.cmd]
        if not np.any(fc):
            return
        J = frame_jacobian(ctrl.model, ctrl.q, ctrl.task.frame)[:, ctrl.cmd]
        axes = ctrl.force_settings.axes
        band = friction_band(J, fc, axes)
        asked = np.abs(wrench)
        over = axes & (band > FRICTION_SHARE * asked) & (asked > 0)
        if np.any(over):
            which = ', '.join(f'{AXIS_NAMES[k]} {band[k]:.3g} against {asked[k]:.3g} asked'
                              for k in np.flatnonzero(over))
            self.log.warning('force friction', (
                f'force control: at this pose the joints\' Coulomb friction (the description\'s) '
                f'can hold up to {which} (N, N m) at {ctrl.task.frame}, and it is not '
                f'compensated along the force axes: the force may stop short of the surface or '
                f'settle off what is asked (the observer reads that friction as contact force)'))

    def _target_arrived(self, now, twist=False):
        """
        Note a target's arrival: poses coming within task.target_timeout are a stream.

        A twist is a stream by itself: a velocity holds until the next one, so a lone twist (or
        the last of a stream whose messages came late) times out too (before, a twist after a
        silence set a target velocity that never expired: the hand stood 9.5 mm off its target,
        damping against it, seen in CI under load).
        """
        timeout = self.values['task.target_timeout']
        self.target_streaming = twist or (self.target_time is not None and
                                          now - self.target_time <= timeout)
        self.target_time = now

    def _target_timeout(self, now):
        """Hold the target when its stream was silent for task.target_timeout (one warning)."""
        timeout = self.values['task.target_timeout']
        if not (timeout and self.target_streaming):
            return
        now = self.arm_time(now)        # (the plant's clock read only while a stream runs)
        if not now - self.target_time > timeout:
            return
        self.target_streaming = False
        self.ctrl.hold_task_target()
        self.log.warning('target stopped', f'the target stream stopped '
                                           f'({now - self.target_time:.2f} s without '
                                           f'~/target_pose or ~/target_twist, '
                                           f'task.target_timeout {timeout} s): holding the '
                                           f'target where it got to', 0.0)

    def _bandwidth(self):
        """
        Warn when the task law asks a bandwidth the loop's period cannot hold.

        And, first, when fewer commanded joints move the frame than task.stiffness holds axes
        (so101: 5 joints, its jaw no longer the sixth): some direction is then out of the arm's
        reach at every pose, its task-space inertia is 1 / SINGULARITY_DAMPING, and the damping
        the law sets from it is far beyond what the loop follows.
        """
        ctrl = self.ctrl
        law, period = ctrl.law, self.period()
        if law is None or period is None:
            return
        moving = frame_joints(ctrl.base_model, ctrl.cmd, ctrl.task.frame)
        held = int(np.count_nonzero(law.stiffness))
        if len(moving) < held:
            self.log.warning(
                'axes', f'task.frame {ctrl.task.frame} moves with {len(moving)} commanded joints '
                f'({", ".join(moving)}), fewer than the {held} axes task.stiffness holds: some '
                f'direction is out of the arm\'s reach at every pose and the law cannot hold '
                f'it; give task.stiffness 0 on the axes the arm cannot move along, or use a '
                f'joint mode', 30.0)
        over = over_bandwidth(law, period)
        if over is not None:
            w, d, axis = over
            names = ('x', 'y', 'z', 'rotation x', 'rotation y', 'rotation z')
            self.log.warning(
                'bandwidth', f'the task law\'s fastest mode, mostly along {names[axis]} '
                f'(task.stiffness {law.stiffness[axis]:g} there), has a natural frequency of '
                f'{w:.0f} rad/s: {w * period:.2f} rad per loop period ({period * 1e3:.1f} ms), '
                f'and its damping a rate of {d:.0f} 1/s: {d * period:.2f} per period (above '
                f'{BANDWIDTH_LIMIT} and {DAMPING_LIMIT} the loop may oscillate); lower the '
                f'stiffness, or set armature (the rotor inertia) if the URDF lacks it', 30.0)
