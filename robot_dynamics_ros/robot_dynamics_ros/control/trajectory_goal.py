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
FollowJointTrajectory goals without ROS: joint_trajectory_controller's contract.

``validate`` checks what a goal asks (its joints, points and tolerances) and answers a refusal
with the action's result code and a reason naming the joint or point (``Refused``). An accepted
goal is a ``Goal``: on every command the control loop (``ControlLoop.follow``) calls ``check``
with the desired and measured state, which ends it with PATH_TOLERANCE_VIOLATED while the
trajectory runs, with SUCCESSFUL once every joint is within its goal tolerance and stopped after
the last point, or with GOAL_TOLERANCE_VIOLATED when that has not happened within the goal time.
Other events end it too (``end``): a new goal, a cancel, a trajectory on the topic, a collision
reaction, a mode or description change, stale joint states. ``notify`` is called once it ended.

Tolerances follow control_msgs' JointTolerance: > 0 a bound, 0 the controller's default
(``constraints.<joint>.trajectory`` / ``.goal``, ``constraints.stopped_velocity_tolerance``,
``constraints.goal_time``), -1 none. A default of 0 checks nothing (JTC's meaning too); so
does a goal time of 0: the goal waits for its tolerance however long it takes.
"""
import math

import numpy as np

# control_msgs/action/FollowJointTrajectory's result codes
SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4
GOAL_TOLERANCE_VIOLATED = -5
CODE_NAMES = {SUCCESSFUL: 'SUCCESSFUL', INVALID_GOAL: 'INVALID_GOAL',
              INVALID_JOINTS: 'INVALID_JOINTS', OLD_HEADER_TIMESTAMP: 'OLD_HEADER_TIMESTAMP',
              PATH_TOLERANCE_VIOLATED: 'PATH_TOLERANCE_VIOLATED',
              GOAL_TOLERANCE_VIOLATED: 'GOAL_TOLERANCE_VIOLATED'}
# the action's terminal states
SUCCEEDED, ABORTED, CANCELED = 'succeeded', 'aborted', 'canceled'
ERASE = -1.0                # a tolerance of -1: none
ERASE_EPS = 1.1920929e-07   # float epsilon, the closeness to -1 JTC accepts
# (position, velocity, acceleration): the columns of a tolerance table
KINDS = ('position', 'velocity', 'acceleration')


class Refused(ValueError):
    """A goal that cannot run: ``code`` (a result code) and the reason."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class Request:
    """
    What a FollowJointTrajectory goal asks, as plain values (the node fills it from the message).

    ``points``: (time_from_start s, positions, velocities, accelerations, efforts) per point,
    each array as given (possibly empty); ``stamp``: the trajectory's header stamp (s; 0: now);
    ``path_tolerance``, ``goal_tolerance``: (name, position, velocity, acceleration) each;
    ``goal_time``: goal_time_tolerance (s); ``multi_dof``: what the goal asks of multi-DOF
    joints, in words (empty: nothing).
    """

    def __init__(self, names, points, stamp=0.0, path_tolerance=(), goal_tolerance=(),
                 goal_time=0.0, multi_dof=''):
        self.names, self.points, self.stamp = list(names), list(points), float(stamp)
        self.path_tolerance, self.goal_tolerance = list(path_tolerance), list(goal_tolerance)
        self.goal_time, self.multi_dof = float(goal_time), multi_dof


def resolve(default, given):
    """Return a tolerance from the goal's value: > 0 it, -1 none (0), 0 ``default``."""
    if given > 0:
        return float(given)
    if abs(given - ERASE) < ERASE_EPS:
        return 0.0
    if given == 0:
        return float(default)
    raise ValueError(given)


def tables(request, joints, allow_partial, allow_nonzero_end_velocity):
    """
    Check a goal's joints and points; return them as the controller takes a trajectory.

    (names, times, positions, velocities, accelerations, efforts): velocities, accelerations
    and efforts None where no point has them. ``joints``: the controller's commanded joints.
    Refused with INVALID_JOINTS (a joint unknown, named twice or missing) or INVALID_GOAL (the
    points), naming the joint or the point.
    """
    names = request.names
    if request.multi_dof:
        raise Refused(INVALID_GOAL, f'{request.multi_dof}: this controller commands single-DOF '
                                    f'joints only')
    if not names:
        raise Refused(INVALID_JOINTS, 'the trajectory names no joint')
    twice = sorted({j for j in names if names.count(j) > 1})
    if twice:
        raise Refused(INVALID_JOINTS, f'the trajectory names {twice} twice')
    unknown = [j for j in names if j not in joints]
    if unknown:
        raise Refused(INVALID_JOINTS, f'the trajectory names {unknown}, which this controller '
                                      f'does not command (its joints: {list(joints)})')
    missing = [j for j in joints if j not in names]
    if missing and not allow_partial:
        raise Refused(INVALID_JOINTS, f'the trajectory lacks {missing} (allow_partial_joints_goal '
                                      f'is false: a goal names every joint of {list(joints)})')
    if not request.points:
        raise Refused(INVALID_GOAL, 'the trajectory has no point')
    k = len(names)
    times, fields = [], {'positions': [], 'velocities': [], 'accelerations': [], 'efforts': []}
    for i, (t, *arrays) in enumerate(request.points):
        if not math.isfinite(t) or t < 0:
            raise Refused(INVALID_GOAL, f'point {i}: time_from_start {t} s')
        if times and t <= times[-1]:
            raise Refused(INVALID_GOAL, f'point {i}: time_from_start {t:.6g} s is not after point '
                                        f'{i - 1}\'s {times[-1]:.6g} s (it must increase)')
        times.append(t)
        for (field, rows), values in zip(fields.items(), arrays):
            values = list(values)
            if len(values) not in ((k,) if field == 'positions' else (0, k)):
                raise Refused(INVALID_GOAL, f'point {i} has {len(values)} {field} for {k} joints')
            bad = [j for j, x in zip(names, values) if not math.isfinite(x)]
            if bad:
                raise Refused(INVALID_GOAL, f'point {i}: {field} of {bad} not finite')
            rows.append(values)
    out = [names, times]
    for field, rows in fields.items():
        given = {len(r) > 0 for r in rows}
        if len(given) > 1:
            first = next(i for i, r in enumerate(rows) if len(r) != len(rows[0]))
            raise Refused(INVALID_GOAL, f'{field} given for some points and not others (point '
                                        f'{first}): every point or none')
        out.append(rows if True in given else None)
    velocities = out[3]
    if velocities is not None and not allow_nonzero_end_velocity:
        moving = [(j, v) for j, v in zip(names, velocities[-1]) if abs(v) > ERASE_EPS]
        if moving:
            raise Refused(INVALID_GOAL, f'the last point moves {moving[0][0]} at '
                                        f'{moving[0][1]:.6g} (allow_nonzero_velocity_at_'
                                        f'trajectory_end is false)')
    return tuple(out)


def tolerances(request, joints, values):
    """
    Return a goal's (path, goal, goal_time) tolerances, the parameters' where it gives none.

    path, goal: per commanded joint (position, velocity, acceleration) arrays (0: not checked);
    goal_time: s (0: no limit). ``values``: the parameters (constraints.*). Refused for a joint
    not commanded or a negative value other than -1.
    """
    k = len(joints)
    path, goal = np.zeros((k, 3)), np.zeros((k, 3))
    for i, j in enumerate(joints):
        path[i, 0] = values.get(f'constraints.{j}.trajectory', 0.0)
        goal[i, 0] = values.get(f'constraints.{j}.goal', 0.0)
        goal[i, 1] = values['constraints.stopped_velocity_tolerance']
    for what, table in (('path_tolerance', path), ('goal_tolerance', goal)):
        for name, *given in getattr(request, what):
            if name not in joints:
                raise Refused(INVALID_JOINTS, f'{what} names {name}, which this controller does '
                                              f'not command (its joints: {list(joints)})')
            i = list(joints).index(name)
            for c, x in enumerate(given):
                try:
                    table[i, c] = resolve(table[i, c], x)
                except ValueError:
                    raise Refused(INVALID_GOAL, f'{what} of {name}: {KINDS[c]} {x} (> 0: a bound, '
                                                f'0: the default, -1: none)') from None
    try:
        goal_time = resolve(values['constraints.goal_time'], request.goal_time)
    except ValueError:
        raise Refused(INVALID_GOAL, f'goal_time_tolerance {request.goal_time} s is negative') \
            from None
    return path, goal, goal_time


def violation(errors, bounds, joints):
    """Return the bound exceeded most (for its size), in words ('' when none); arrays (k, 3)."""
    over = (bounds > 0) & (np.abs(errors) > bounds)
    if not over.any():
        return ''
    ratio = np.where(over, np.abs(errors) / np.where(over, bounds, 1.0), 0.0)
    i, c = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    return f'{joints[i]} {KINDS[c]} error {errors[i, c]:+.4g}, tolerance {bounds[i, c]:g}'


class Goal:
    """
    One accepted goal: its joints, tolerances and timing, and how it ended.

    ``joints``: the commanded joints (the feedback's order); ``start``, ``end``: the
    trajectory's absolute start and end times (s, the loop's trajectory clock); ``scale``: the
    factor trajectory_scaling stretched it by (1: none). ``outcome``: None while it runs, then
    (status, code, message). ``sample``: the latest (t, point index, desired (q, qd, qdd),
    actual (q, qd)) of the commanded joints, for the feedback.
    """

    def __init__(self, joints, times, path, goal, goal_time, start, scale=1.0, notify=None):
        self.joints, self.times = tuple(joints), np.asarray(times, dtype=float)
        self.path, self.goal, self.goal_time = path, goal, goal_time
        self.start, self.end_time, self.scale = start, start + float(times[-1]), scale
        self.notify = notify
        self.trajectory = None      # the controller's trajectory it runs (the loop sets it)
        self.outcome = None
        self.sample = None
        self._errors = np.zeros((len(joints), 3))

    @property
    def running(self):
        return self.outcome is None

    def check(self, t, desired, q, qd):
        """
        Check the state at time t against the tolerances; return the outcome (None: running).

        ``desired``: (q, qd, qdd) and ``q``, ``qd``: the commanded joints' arrays.
        """
        index = min(int(np.searchsorted(self.times, t - self.start, side='right')),
                    len(self.times) - 1)
        self.sample = (t, index, desired, (q, qd))
        e = self._errors
        e[:, 0], e[:, 1] = desired[0] - q, desired[1] - qd      # no measured acceleration
        if t < self.end_time:
            why = violation(e, self.path, self.joints)
            if why:
                return self.end(ABORTED, PATH_TOLERANCE_VIOLATED,
                                f'path tolerance violated {t - self.start:.3f} s into the '
                                f'trajectory: {why}; holding the position')
            return None
        why = violation(e, self.goal, self.joints)
        if not why:
            worst = int(np.argmax(np.abs(e[:, 0])))
            return self.end(SUCCEEDED, SUCCESSFUL, 'goal reached' + (
                f' (the trajectory stretched by {self.scale:.4g}: trajectory_scaling)'
                if self.scale != 1.0 else '') + f': largest position error '
                f'{e[worst, 0]:+.3g} ({self.joints[worst]}'
                + ('' if self.goal[worst, 0] > 0 else ', no goal tolerance: not checked')
                + f'), {t - self.end_time:.3f} s after the last point')
        if self.goal_time > 0 and t - self.end_time > self.goal_time:
            return self.end(ABORTED, GOAL_TOLERANCE_VIOLATED,
                            f'not within the goal tolerance {t - self.end_time:.3f} s after the '
                            f'last point (goal time tolerance {self.goal_time:g} s): {why}; '
                            f'holding the position')
        return None

    def end(self, status, code, message):
        """End the goal (once); return its outcome."""
        if self.outcome is None:
            self.outcome = (status, code, message)
            if self.notify is not None:
                self.notify()
        return self.outcome
