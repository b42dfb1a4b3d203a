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
FollowJointTrajectory goals without ROS: control.trajectory_goal and ControlLoop.follow.

joint_trajectory_controller's contract, one rule a test, on the 2R arm with the tests' own
time: each refusal's code and reason, the tolerances' 0 / -1 / default meanings, how a goal
ends (reached, path or goal tolerance, replaced, canceled, a topic trajectory, a collision, a
mode change, stale states) and what the arm does then (holds here, bumpless; success holds the
last point).
"""
import numpy as np
import pytest

from test_control_loop import JOINTS, Log, make, feed, clock_at, observing
from robot_dynamics_ros.control import Controller
from robot_dynamics_ros.control.shaping import BUMPLESS
from robot_dynamics_ros.control.trajectory_goal import (
    ABORTED, CANCELED, GOAL_TOLERANCE_VIOLATED, INVALID_GOAL, INVALID_JOINTS,
    OLD_HEADER_TIMESTAMP, PATH_TOLERANCE_VIOLATED, SUCCEEDED, SUCCESSFUL, Refused, Request,
    resolve)
from robot_dynamics_ros.dynamics import RobotModel, example_urdf, rnea

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

GOAL_VALUES = dict(allow_partial_joints_goal=False, allow_nonzero_velocity_at_trajectory_end=False,
                   constraints__goal_time=0.0, constraints__stopped_velocity_tolerance=0.01,
                   action_monitor_rate=20.0)


@pytest.fixture
def arm():
    return RobotModel.from_urdf_file(example_urdf('planar_2r'))


def loop_at(arm, q=(0.0, 0.0), t=10.0, **values):
    """Return a computed-torque loop that has taken a joint state at q at time t."""
    loop = make(arm, observer=False, **dict(GOAL_VALUES, **values))
    feed(loop, t, q)
    return loop


def point(t, q, v=(), a=(), e=()):
    return (t, list(q), list(v), list(a), list(e))


def follow(loop, request, t=10.0):
    ended = []
    goal = loop.follow(request, t, clock_at(t), lambda: ended.append(True))
    goal.ended = ended
    return goal


def refused(loop, request, t=10.0):
    with pytest.raises(Refused) as e:
        loop.follow(request, t, clock_at(t))
    assert loop.ctrl.ref.trajectory is None and loop.goal is None     # nothing moves
    return e.value.code, str(e.value)


# ---- refusals: code and reason --------------------------------------------------------------
@pytest.mark.parametrize('names, points, code, words', [
    (['joint1', 'nope'], [point(1, [0, 0])], INVALID_JOINTS, "['nope'], which this controller"),
    (['joint1', 'joint1'], [point(1, [0, 0])], INVALID_JOINTS, "['joint1'] twice"),
    (['joint1'], [point(1, [0])], INVALID_JOINTS, "lacks ['joint2']"),
    ([], [point(1, [])], INVALID_JOINTS, 'names no joint'),
    (JOINTS, [], INVALID_GOAL, 'no point'),
    (JOINTS, [point(1, [0, 0]), point(1, [1, 1])], INVALID_GOAL, 'point 1: time_from_start 1 s '
                                                                 'is not after point 0'),
    (JOINTS, [point(1, [0, 0]), point(2, [1])], INVALID_GOAL, 'point 1 has 1 positions for 2'),
    (JOINTS, [point(1, [0, 0], v=[0, 0, 0])], INVALID_GOAL, 'point 0 has 3 velocities for 2'),
    (JOINTS, [point(1, [0, float('nan')])], INVALID_GOAL, "point 0: positions of ['joint2'] "
                                                          'not finite'),
    (JOINTS, [point(1, [0, 0], e=[float('inf'), 0])], INVALID_GOAL, "effort"),
    (JOINTS, [point(1, [0, 0], v=[0, 0]), point(2, [1, 1])], INVALID_GOAL,
     'velocities given for some points and not others (point 1)'),
    (JOINTS, [point(1, [0, 0], v=[0, 0.5])], INVALID_GOAL, 'the last point moves joint2 at 0.5'),
])
def test_a_bad_goal_is_refused_with_its_code_and_reason(arm, names, points, code, words):
    loop = loop_at(arm)
    got, reason = refused(loop, Request(names, points))
    assert got == code and words in reason, reason
    assert any(words in m for m in loop.log.text().splitlines())


def test_refused_before_it_could_run(arm):
    goal = Request(JOINTS, [point(1, [0.1, 0.1])])
    gravity = make(arm, observer=False, mode='gravity', **GOAL_VALUES)
    feed(gravity, 10.0)
    assert refused(gravity, goal)[0] == INVALID_GOAL
    loop = make(arm, observer=False, **GOAL_VALUES)
    assert 'no fresh joint_states' in refused(loop, goal)[1]
    feed(loop, 10.0)
    assert 'no fresh joint_states' in refused(loop, goal, t=10.5)[1]      # stale
    loop.ctrl.react('hold', loop.ctrl.q)
    assert 'collision reaction (hold)' in refused(loop, goal)[1]
    loop = loop_at(arm)
    assert 'multi_dof_trajectory' in refused(loop, Request(JOINTS, [point(1, [0, 0])],
                                                           multi_dof='multi_dof_trajectory'))[1]
    code, reason = refused(loop, Request(JOINTS, [point(1, [0, 0])],
                                         path_tolerance=[('joint1', -0.5, 0, 0)]))
    assert code == INVALID_GOAL and 'path_tolerance of joint1: position -0.5' in reason
    code, reason = refused(loop, Request(JOINTS, [point(1, [0, 0])],
                                         goal_tolerance=[('joint9', 0.1, 0, 0)]))
    assert code == INVALID_JOINTS and 'goal_tolerance names joint9' in reason


def test_a_stamp_whose_trajectory_has_ended_is_an_old_header_timestamp(arm):
    loop = loop_at(arm, t=10.0)
    code, reason = refused(loop, Request(JOINTS, [point(1.0, [0, 0])], stamp=8.5))
    assert code == OLD_HEADER_TIMESTAMP and 'ended 0.500 s ago' in reason
    goal = follow(loop, Request(JOINTS, [point(1.0, [0.2, 0])], stamp=9.5))   # half done: runs
    assert goal.start == 9.5 and goal.end_time == 10.5
    goal = follow(loop, Request(JOINTS, [point(1.0, [0.2, 0])], stamp=0.0))   # zero: now
    assert goal.start == 10.0


def test_trajectory_scaling_applies_to_goals(arm):
    fast = Request(JOINTS, [point(0.05, [1.5, -1.5], v=[0, 0], a=[0, 0])])
    loop = loop_at(arm, trajectory_scaling='reject')
    code, reason = refused(loop, fast)
    assert code == INVALID_GOAL and 'trajectory_scaling reject' in reason and 'joint' in reason
    loop = loop_at(arm, trajectory_scaling='scale')
    goal = follow(loop, fast)
    assert goal.scale > 1 and goal.end_time == pytest.approx(10.0 + 0.05 * goal.scale)


# ---- tolerances -----------------------------------------------------------------------------
def test_tolerance_values_mean_what_control_msgs_says():
    assert resolve(0.2, 0.05) == 0.05          # > 0: the bound
    assert resolve(0.2, 0.0) == 0.2            # 0: the default
    assert resolve(0.2, -1.0) == 0.0           # -1: none
    with pytest.raises(ValueError):
        resolve(0.2, -0.5)


def test_path_tolerance_aborts_at_once_and_the_arm_holds_here_bumpless(arm):
    loop = loop_at(arm, constraints__joint1__trajectory=0.05)   # the parameter's default
    loop.values['constraints.joint1.trajectory'] = 0.05
    goal = follow(loop, Request(JOINTS, [point(2.0, [1.0, 0.0], v=[0, 0])]))
    assert goal.path[0, 0] == 0.05 and goal.path[1, 0] == 0.0    # joint2: not checked
    before = feed(loop, 10.2, q=(0.0, 0.0)).command.copy()      # 0.028 behind: within
    assert goal.running and not goal.ended
    desired = loop.ctrl.desired(10.3, None)
    reply = feed(loop, 10.3, q=(0.0, 0.0))                      # 0.061 behind: over
    status, code, reason = goal.outcome
    assert (status, code) == (ABORTED, PATH_TOLERANCE_VIOLATED) and goal.ended == [True]
    assert 'joint1 position error' in reason and 'tolerance 0.05' in reason
    assert desired[0][0] > 0.05
    assert loop.ctrl.ref.trajectory is None and np.allclose(loop.ctrl.ref.hold, [0.0, 0.0])
    np.testing.assert_allclose(reply.command, before, atol=1e-12)   # the first: unchanged
    hold = rnea(loop.ctrl.model, np.zeros(2), np.zeros(2), np.zeros(2))   # g at the held pose
    after = feed(loop, 10.3 + BUMPLESS, q=(0.0, 0.0)).command
    np.testing.assert_allclose(after, hold, atol=1e-9)           # faded into the hold


def test_goal_tolerances_from_the_goal_then_success_and_the_last_point_held(arm):
    loop = loop_at(arm)
    goal = follow(loop, Request(JOINTS, [point(1.0, [0.5, -0.5])],
                                goal_tolerance=[('joint1', 0.01, 0, 0), ('joint2', 0.02, 0.5, 0)]))
    np.testing.assert_allclose(goal.goal, [[0.01, 0.01, 0], [0.02, 0.5, 0]])
    feed(loop, 11.0, q=(0.45, -0.5))                # at the end time, 0.05 short: waits
    assert goal.running
    feed(loop, 11.1, q=(0.495, -0.49), qd=(0.005, 0.3))
    status, code, reason = goal.outcome
    assert (status, code) == (SUCCEEDED, SUCCESSFUL) and 'goal reached' in reason
    assert loop.ctrl.ref.trajectory is not None        # the last point held, as JTC does
    np.testing.assert_allclose(loop.ctrl.desired(20.0, None)[0], [0.5, -0.5])


def test_the_goal_time_ends_a_goal_that_does_not_arrive(arm):
    loop = loop_at(arm, constraints__goal_time=0.5)
    loop.values['constraints.joint1.goal'] = 0.01
    goal = follow(loop, Request(JOINTS, [point(1.0, [0.5, 0.0])]))
    feed(loop, 11.4, q=(0.3, 0.0))                  # 0.4 s late: still waiting
    assert goal.running
    feed(loop, 11.6, q=(0.3, 0.0))
    status, code, reason = goal.outcome
    assert (status, code) == (ABORTED, GOAL_TOLERANCE_VIOLATED), reason
    assert 'joint1 position error +0.2' in reason and 'goal time tolerance 0.5 s' in reason
    np.testing.assert_allclose(loop.ctrl.ref.hold, [0.3, 0.0])
    # the goal's own goal_time_tolerance wins; without a limit it waits
    loop = loop_at(arm, constraints__goal_time=0.5)
    loop.values['constraints.joint1.goal'] = 0.01
    goal = follow(loop, Request(JOINTS, [point(1.0, [0.5, 0.0])], goal_time=-1.0))
    feed(loop, 100.0, q=(0.3, 0.0))
    assert goal.running and goal.goal_time == 0.0


def test_the_reason_names_the_bound_exceeded_most():
    from robot_dynamics_ros.control.trajectory_goal import violation
    errors = np.array([[0.02, 0.0, 0.0], [0.5, 0.0, 0.0]])
    bounds = np.array([[0.01, 0.0, 0.0], [0.1, 0.0, 0.0]])
    assert violation(errors, bounds, JOINTS) == 'joint2 position error +0.5, tolerance 0.1'
    assert violation(errors, np.zeros((2, 3)), JOINTS) == ''     # 0: not checked


def test_partial_goals_hold_the_other_joints(arm):
    loop = loop_at(arm, q=(0.1, -0.3), allow_partial_joints_goal=True)
    goal = follow(loop, Request(['joint2'], [point(1.0, [0.4])]))
    q_d = loop.ctrl.desired(10.5, None)[0]
    assert q_d[0] == pytest.approx(0.1) and -0.3 < q_d[1] < 0.4
    assert goal.joints == tuple(JOINTS)             # feedback and tolerances: every joint


# ---- what else ends a goal --------------------------------------------------------------------
def test_a_new_goal_replaces_the_running_one(arm):
    loop = loop_at(arm)
    first = follow(loop, Request(JOINTS, [point(2.0, [0.5, 0.0])]))
    feed(loop, 10.5)
    second = follow(loop, Request(JOINTS, [point(1.0, [0.0, 0.5])]), t=10.5)
    assert first.outcome[:2] == (ABORTED, INVALID_GOAL) and 'replaced by a new goal' in \
        first.outcome[2] and first.ended == [True]
    assert second.running and loop.goal is second
    # a bad goal leaves the running one alone
    with pytest.raises(Refused):
        loop.follow(Request(['x'], [point(1, [0])]), 10.6, clock_at(10.6))
    assert second.running and loop.ctrl.ref.trajectory is second.trajectory


def test_cancel_holds_here_and_answers_canceled(arm):
    loop = loop_at(arm)
    goal = follow(loop, Request(JOINTS, [point(2.0, [0.5, 0.0])]))
    feed(loop, 10.5, q=(0.1, 0.0))
    assert loop.cancel(goal) and goal.outcome[:2] == (CANCELED, SUCCESSFUL)
    np.testing.assert_allclose(loop.ctrl.ref.hold, [0.1, 0.0])
    assert not loop.cancel(goal)                    # once


def test_topic_trajectories_collisions_modes_and_stale_states_end_a_goal(arm):
    loop = loop_at(arm)
    goal = follow(loop, Request(JOINTS, [point(2.0, [0.5, 0.0])]))
    tables = (JOINTS, [1.0], [[0.0, 0.5]], None, None, None)
    assert loop.trajectory(lambda: tables, 1, 0.0, clock_at(10.2), '~/target_pose')
    assert goal.outcome[:2] == (ABORTED, INVALID_GOAL) and 'joint_trajectory topic' in \
        goal.outcome[2]

    loop = loop_at(arm)
    goal = follow(loop, Request(JOINTS, [point(2.0, [0.5, 0.0])]))
    ctrl = Controller(arm, mode='feedforward')
    loop.use_parameters(ctrl, None, observing(2), loop.values, '~/target_pose')
    assert goal.outcome[:2] == (ABORTED, INVALID_GOAL) and 'from computed_torque to ' \
        'feedforward' in goal.outcome[2]
    assert loop.ctrl.ref.trajectory is None

    loop = loop_at(arm)
    goal = follow(loop, Request(JOINTS, [point(2.0, [0.5, 0.0])]))
    loop.watchdog(10.5)                              # no state for 0.5 s (state_timeout 0.1)
    assert goal.outcome[:2] == (ABORTED, PATH_TOLERANCE_VIOLATED) and 'stale' in goal.outcome[2]
    ref = loop.ctrl.ref
    assert ref.trajectory is None and ref.hold is None      # holds where it is back

    loop = make(arm, thresholds=0.5, **GOAL_VALUES)
    for k in range(400):                             # the estimate settles: detection armed
        feed(loop, 10.0 + k * 1e-3)
    goal = follow(loop, Request(JOINTS, [point(2.0, [0.5, 0.0])]), t=10.4)
    for k in range(200):                             # 5 N m more than the model: a push
        loop.joint_states(JOINTS, [0.0, 0.0], [0.0, 0.0], list(loop.motor + 5.0), 10.4 + k * 1e-3,
                          10.4 + k * 1e-3, clock_at(10.4 + k * 1e-3))
        if not goal.running:
            break
    assert goal.outcome[:2] == (ABORTED, PATH_TOLERANCE_VIOLATED) and 'collision' in \
        goal.outcome[2], loop.log.text()[-500:]
    assert loop.ctrl.ref.reaction == 'hold'


def test_the_points_effort_is_a_feedforward(arm):
    base, pushed = loop_at(arm), loop_at(arm)
    for loop in (base, pushed):      # sampled far apart: no torque rate limit
        loop.ctrl.set_limits(dict(max_torque_rate=(np.inf,)))
    follow(base, Request(JOINTS, [point(1.0, [0.2, 0.0])]))
    follow(pushed, Request(JOINTS, [point(1.0, [0.2, 0.0], e=[2.0, -1.0])]))
    for t, share in ((10.5, 0.5), (12.0, 1.0)):     # linear from 0 at arrival, then held
        diff = feed(pushed, t).command - feed(base, t).command
        np.testing.assert_allclose(diff, share * np.array([2.0, -1.0]), atol=1e-9)


def test_a_success_far_from_the_goal_without_a_goal_tolerance_warns(arm):
    loop = loop_at(arm)                             # JTC's defaults: no goal tolerance
    goal = follow(loop, Request(JOINTS, [point(1.0, [0.5, 0.0])]))
    feed(loop, 11.0, q=(0.3, 0.0))                  # stopped, 0.2 short
    assert goal.outcome[0] == SUCCEEDED
    assert '+0.2 (joint1, no goal tolerance: not checked)' in goal.outcome[2]
    assert 'unchecked' in loop.log.keys('warning')
    assert 'set constraints.joint1.goal' in loop.log.text()


def test_log_lines_name_how_goals_end(arm):
    loop = loop_at(arm)
    assert isinstance(loop.log, Log)
    goal = follow(loop, Request(JOINTS, [point(1.0, [0.0, 0.0])]))
    feed(loop, 11.0)
    assert goal.outcome[0] == SUCCEEDED
    assert 'goal succeeded (SUCCESSFUL): goal reached' in loop.log.text()
