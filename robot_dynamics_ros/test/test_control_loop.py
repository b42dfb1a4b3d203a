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
feedforward_node's rules without ROS or DDS: control.loop.ControlLoop, one rule a test.

Time is the tests' own (``now`` and ``clock`` are arguments), so each rule is checked at the
instants that matter, in milliseconds of wall time.
"""
import os

import numpy as np
import pytest

from conftest import ROBOTS, erd_root
from robot_dynamics_ros.control import Controller, MomentumObserver
from robot_dynamics_ros.control.observer import check as check_observer
from robot_dynamics_ros.control.loop import (BANDWIDTH_LIMIT, NO_MODEL_GRACE, STAMP_TOLERANCE,
                                             ControlLoop)
from robot_dynamics_ros.control.shaping import BUMPLESS
from robot_dynamics_ros.dynamics import RobotModel, example_urdf, gravity_torques, rnea

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

VALUES = {'rate': 0.0, 'state_timeout': 0.1, 'on_timeout': 'zero',
          'observer.torque_source': 'auto', 'external_torques_every': 1,
          'collision.reaction': 'hold', 'trajectory_scaling': 'off',
          'task.target_timeout': 0.5}
JOINTS = ['joint1', 'joint2']


class Log:
    """The loop's log, recorded: (level, key, message); throttling is the node's."""

    def __init__(self):
        self.lines = []

    def warning(self, key, message, period=5.0):
        self.lines.append(('warning', key, message))

    def info(self, key, message, period=5.0):
        self.lines.append(('info', key, message))

    def error(self, message):
        self.lines.append(('error', None, message))

    def once(self, key, message, level='warning'):
        if not any(k == key for _, k, _ in self.lines):
            self.lines.append((level, key, message))

    def keys(self, level=None):
        return [k for lv, k, _ in self.lines if level in (None, lv)]

    def text(self):
        return '\n'.join(m for _, _, m in self.lines)


@pytest.fixture
def arm():
    return RobotModel.from_urdf_file(example_urdf('planar_2r'))


NO_RATE_LIMIT = dict(max_torque_rate=(np.inf,))


def observing(n, thresholds=0.0, enabled=False, max_interval=np.inf):
    """Return the ObserverSettings of an arm of ``n`` joints (gain 50, effort_gain 1)."""
    return check_observer(n, enabled, [50.0], [thresholds], [1.0], max_interval)


def make(model, observer=True, thresholds=0.0, now=0.0, **values):
    """Return a loop running a Controller of ``model`` (values over VALUES)."""
    v = dict(VALUES, **{k.replace('__', '.'): x for k, x in values.items()})
    mode = v.pop('mode', 'computed_torque')
    ctrl = Controller(model, mode=mode)
    obs = MomentumObserver(ctrl.model, np.full(model.n, 50.0), max_interval=v['state_timeout']) \
        if observer else None
    loop = ControlLoop(Log())
    loop.set_observer_ready(True)
    loop.use_model(ctrl, obs, observing(model.n, thresholds, observer, v['state_timeout']), v,
                   now)
    return loop


def clock_at(t):
    return lambda: t


def feed(loop, t, q=(0.0, 0.0), qd=(0.0, 0.0), effort=(), names=JOINTS, stamp=None):
    """One joint state at monotonic time and stamp ``t`` (stamp 0: unstamped)."""
    return loop.joint_states(names, list(q), list(qd), list(effort),
                             t if stamp is None else stamp, t, clock_at(t))


# ---- joint states ---------------------------------------------------------------------------
def test_without_a_model_nothing_goes_out_and_one_warning_after_the_grace(arm):
    loop = ControlLoop(Log())
    assert loop.joint_states(JOINTS, [0, 0], [], [], 1.0, 1.0, clock_at(1.0)) is None
    loop.joint_states(JOINTS, [0, 0], [], [], 1.0, 1.0 + NO_MODEL_GRACE / 2, clock_at(1.0))
    assert loop.log.lines == []
    for t in (1.0 + NO_MODEL_GRACE, 2.0 + NO_MODEL_GRACE):
        loop.joint_states(JOINTS, [0, 0], [], [], 1.0, t, clock_at(1.0))
    assert loop.log.keys() == ['no-model']
    assert loop.watchdog(10.0) is None and loop.rate_tick(10.0, clock_at(10.0)) is None


def test_each_state_gets_its_command_stamped_with_it(arm):
    loop = make(arm)
    q, qd = [0.3, -0.2], [0.1, 0.4]
    reply = feed(loop, 5.0, q, qd)
    # computed torque holding the pose it found: M (-kd qd) + C qd + g
    assert np.allclose(reply.command, rnea(arm, q, qd, -loop.ctrl.gains.kd * np.array(qd)))
    assert reply.answers_state and loop.commands == 1
    # unstamped: answered with the clock
    assert not feed(loop, 5.001, q, qd, stamp=0.0).answers_state


def test_refused_and_foreign_states_command_nothing(arm):
    loop = make(arm)
    assert feed(loop, 1.0, q=[np.nan, 0.0]) is None
    assert feed(loop, 1.0, names=['gripper', 'finger'], q=[0.0, 0.0]) is None
    state, foreign = loop.log.keys('warning')
    assert state[0] == 'state' and foreign == 'foreign'
    assert 'NaN' in loop.log.text() and 'none of the model' in loop.log.text()
    assert loop.commands == 0


def test_a_stream_without_commanded_joints_updates_the_state_only(arm):
    model = arm
    ctrl = Controller(model, joints=['joint1'])
    loop = ControlLoop(Log())
    loop.use_model(ctrl, None, observing(2), dict(VALUES), 0.0)
    assert feed(loop, 1.0, names=['joint2'], q=[0.7], qd=[0.0]) is None
    assert loop.ctrl.q[1] == 0.7 and loop.commands == 0
    assert feed(loop, 1.001, names=['joint1'], q=[0.1], qd=[0.0]).command is not None


# ---- stale and missing joints ---------------------------------------------------------------
def test_missing_joints_command_on_timeout_and_say_so_once(arm):
    loop = make(arm, on_timeout='gravity')
    # no q yet: nothing (a zero would release a braked arm and drop it)
    assert loop.watchdog(0.05).command is None
    assert loop.log.lines == []                  # the first few ms of two streams: quiet
    loop.watchdog(0.2)
    assert loop.watchdog(0.3).command is None
    assert loop.log.keys('info') == [('missing', arm.name)]
    assert 'commanding nothing until the first' in loop.log.text()
    # joint1 alone: gravity at the last known q (joint2 at its default)
    feed(loop, 0.31, names=['joint1'], q=[0.5], qd=[0.0])
    assert np.allclose(loop.watchdog(0.32).command, gravity_torques(arm, [0.5, 0.0]))


def test_before_any_state_on_timeout_zero_commands_zero(arm):
    loop = make(arm, on_timeout='zero')
    assert loop.watchdog(0.05).command.tolist() == [0.0, 0.0]
    loop.watchdog(0.3)
    assert 'commanding zero torque until every commanded joint' in loop.log.text()


def test_a_stale_state_commands_on_timeout_until_it_is_back(arm):
    loop = make(arm)
    for k in range(10):                     # 100 Hz: fresh
        assert feed(loop, 1.0 + 0.01 * k).command is not None
    assert loop.watchdog(1.1) is None
    reply = loop.watchdog(1.2)              # 0.11 s old: over state_timeout 0.1
    assert reply.command.tolist() == [0.0, 0.0]
    assert loop.watchdog(1.25).command.tolist() == [0.0, 0.0]
    assert loop.log.keys('warning') == [('stale', ('joint1', 'joint2'))]
    feed(loop, 1.3)
    # commanding again; the observer held its estimate over the 0.21 s gap
    assert loop.watchdog(1.31) is None and loop.log.keys('info') == [
        ('resistance', arm.name, 'tool0'), 'observer gap', 'back']     # (the first: start-up's)


def test_in_simulated_time_a_starved_lockstep_is_not_a_stale_state(arm):
    """A simulator in lockstep waits for each command: a pause in wall time moves no plant."""
    plant = [1.0]
    loop = make(arm)
    loop.plant_clock = lambda: plant[0]
    for k in range(10):                     # states stamped in simulated time, 1 kHz
        plant[0] = 1.0 + 0.001 * k
        assert feed(loop, 5.0 + 0.001 * k, stamp=plant[0]).command is not None
    # the machine starved both nodes for 0.5 s of wall time: the plant's clock stood still
    assert loop.watchdog(5.5) is None and loop.log.keys('warning') == []
    # the plant's clock went on without states (a relay held them back): stale
    plant[0] += 0.2
    assert loop.watchdog(5.6).command.tolist() == [0.0, 0.0]
    assert loop.log.keys('warning') == [('stale', ('joint1', 'joint2'))]
    # no plant clock (use_sim_time off): by receipt alone, as before
    loop = make(arm)
    feed(loop, 5.0, stamp=1.0)
    assert loop.watchdog(5.5).command.tolist() == [0.0, 0.0]


def test_a_stalled_stream_is_an_error_once_per_stall_and_gravity_goes_on(arm):
    loop = make(arm, on_timeout='gravity')
    q = (0.4, -0.3)
    feed(loop, 1.0, q, (0.0, 0.0))
    for t in (1.2, 1.9, 2.0):                     # stale, not yet stalled (STALLED: 1 s)
        assert np.allclose(loop.watchdog(t).command, gravity_torques(arm, q))
    assert loop.log.keys('error') == []
    for t in (2.01, 2.5, 4.0):                    # stalled: one error, gravity goes on
        assert np.allclose(loop.watchdog(t).command, gravity_torques(arm, q))
    assert loop.log.keys('error') == [None]
    assert "joint_states of ['joint1', 'joint2'] stalled for over 1.0 s" in loop.log.text()
    assert 'what held the arm at rest' in loop.log.text()
    feed(loop, 4.1, q, (0.0, 0.0))                # back; a second stall: said again
    assert loop.watchdog(4.11) is None
    loop.watchdog(5.5)
    assert loop.log.keys('error') == [None, None]


def test_states_slower_than_the_timeout_are_named(arm):
    loop = make(arm, state_timeout=0.05)
    for k in range(8):                      # every 80 ms: stale between messages
        feed(loop, 0.08 * k)
        loop.watchdog(0.08 * k + 0.06)
    assert 'slow' in loop.log.keys('warning')
    assert 'arrive at 12.5 Hz' in loop.log.text()


def test_states_later_than_the_set_gap_are_counted_late(arm):
    loop = make(arm)
    t = 0.0
    for gap in (0.001, 0.006, 0.001, 0.021, 0.001):     # LATE (20 ms) by default
        t += gap
        feed(loop, t)
    assert loop.late == 1 and loop.late_at == t - 0.001
    assert loop.late_gap == pytest.approx(0.021)     # what the payload service's text says
    loop.count_late_after(0.005)            # what the payload service's gains hold through
    for gap in (0.001, 0.006, 0.001, 0.021, 0.001):
        t += gap
        feed(loop, t)
    assert loop.late == 3
    loop.count_late_after(None)
    for gap in (0.006, 0.001):
        t += gap
        feed(loop, t)
    assert loop.late == 3


# ---- time ---------------------------------------------------------------------------------
def test_a_trajectory_is_timed_by_the_state_stamp_near_the_clock(arm):
    loop = make(arm)
    feed(loop, 1.0, stamp=100.0)
    assert loop.trajectory_time(100.0 + STAMP_TOLERANCE / 2) == 100.0
    assert loop.trajectory_time(100.0 + 2 * STAMP_TOLERANCE) == 100.0 + 2 * STAMP_TOLERANCE
    assert loop.log.keys('warning') == ['time base']
    loop.values['rate'] = 500.0             # commands on a timer: the clock
    assert loop.trajectory_time(100.1) == 100.1


# ---- the observer and collisions ------------------------------------------------------------
def hold(loop, t0, seconds, dt=0.002, effort=None, q=(0.3, -0.2)):
    """States at rest at q every dt; efforts given or none. The last Reply."""
    reply = None
    for k in range(int(round(seconds / dt))):
        t = t0 + k * dt
        e = () if effort is None else effort(t)
        reply = feed(loop, t, q, (0.0, 0.0), e)
    return reply


def test_the_observer_takes_measured_efforts_when_every_joint_has_one(arm):
    q = (0.3, -0.2)
    g = gravity_torques(arm, q)
    loop = make(arm)
    hold(loop, 0.0, 0.3, effort=lambda t: g + [0.0, 2.0])      # 2 N m held up by someone
    assert np.allclose(loop.estimate, [0.0, -2.0], atol=1e-3)
    # commanded: the last command (the computed-torque hold: g), no external torque
    loop = make(arm, observer__torque_source='commanded')
    hold(loop, 0.0, 0.3, effort=lambda t: g + [0.0, 2.0])
    assert np.allclose(loop.estimate, 0.0, atol=1e-3)


def test_measured_without_efforts_gives_no_estimate(arm):
    loop = make(arm, observer__torque_source='measured')
    reply = hold(loop, 0.0, 0.02)
    assert not reply.estimate and loop.estimates == 0
    assert loop.log.keys('warning')[0] == 'effort'


def test_external_torques_every_nth_estimate(arm):
    loop = make(arm, external_torques_every=3)
    published = [feed(loop, 0.002 * k).publish_estimate for k in range(9)]
    assert published == [False, False, True] * 3


def test_a_collision_is_raised_once_after_arming_and_reset_by_the_service(arm):
    q = (0.3, -0.2)
    g = gravity_torques(arm, q)
    push = {'on': False}
    loop = make(arm, thresholds=1.0)
    reply = hold(loop, 0.0, 0.3, effort=lambda t: g + ([0.0, 5.0] if push['on'] else 0.0))
    assert loop.armed and reply.collision is None
    assert loop.log.keys('info') == [('resistance', arm.name, 'tool0'), 'armed']
    push['on'] = True
    events = []
    for k in range(100):
        r = feed(loop, 0.3 + 0.002 * k, q, (0, 0), g + [0.0, 5.0])
        events += [r.collision] if r.collision is not None else []
    assert len(events) == 1
    over, torques, thresholds, reaction = events[0]
    assert list(over) == [1] and torques[0] < -1.0 and thresholds.tolist() == [1.0]
    assert reaction == 'hold' and loop.ctrl.ref.reaction == 'hold'
    ok, message = loop.reset_collision()
    assert ok and message.startswith('collision reaction ended')
    assert loop.ctrl.ref.reaction is None and not loop.collided


def test_detection_is_not_armed_while_the_estimate_starts_over_threshold(arm):
    """A braked arm: what held it shows from the start; no collision, a warning instead."""
    loop = make(arm, thresholds=1.0)
    reply = hold(loop, 0.0, 0.5, effort=lambda t: np.zeros(2))    # the brakes hold it all
    assert reply.collision is None and not loop.armed
    assert 'not armed' in loop.log.keys('warning')
    assert 'brakes on?' in loop.log.text()


# ---- model changes: bumpless ----------------------------------------------------------------
def heavier_model(arm, q):
    """
    Return (loop, its command at ``q`` at 1.0 s, the new Controller) after a heavier model.

    The 2R arm's links three times heavier, taken at 1.0 s, without a torque rate limit: the
    fade alone, sampled far apart (the rate limit would bound each step).
    """
    loop = make(arm)
    old = feed(loop, 1.0, q).command.copy()
    heavier = RobotModel.from_urdf(open(example_urdf('planar_2r')).read().replace(
        'mass value="1', 'mass value="3'))
    new_ctrl = Controller(heavier, mode='computed_torque', limits=NO_RATE_LIMIT)
    loop.use_model(new_ctrl, None, observing(2), loop.values, 1.0)
    return loop, old, new_ctrl


def test_a_new_model_fades_in_over_bumpless(arm):
    q = (0.3, -0.2)
    loop, old, new_ctrl = heavier_model(arm, q)
    first = feed(loop, 1.001, q).command.copy()
    assert np.allclose(first, old)                      # no step
    target = new_ctrl.command(new_ctrl.q, new_ctrl.qd, 0.0)[0]
    assert not np.allclose(target, old)
    half = feed(loop, 1.001 + BUMPLESS / 2, q).command.copy()
    assert np.allclose(half, (old + target) / 2, atol=1e-9)
    assert np.allclose(feed(loop, 1.001 + BUMPLESS + 1e-9, q).command, target)
    assert loop.shaper.fade is None


@pytest.mark.parametrize('sim_per_wall', [5.0, 0.2])
def test_the_fade_ends_after_bumpless_of_the_states_time_or_the_wall_clock(arm, sim_per_wall):
    """
    A simulation in lockstep runs faster (5) or slower (0.2) than the wall clock.

    The fade ends after BUMPLESS of whichever passes first: of the states' time in the fast
    lockstep (in wall time alone it took 1 s of the arm's time there, and a cancelled goal's
    hold still coasted 1 mm a second later: fresh-clone CI), of the wall clock in the slow one.
    """
    q = (0.3, -0.2)
    loop, old, new_ctrl = heavier_model(arm, q)

    def at(stamp):      # a state stamped ``stamp`` (the arm's time), seen at its wall time
        return loop.joint_states(JOINTS, list(q), [0.0, 0.0], [], stamp,
                                 1.0 + (stamp - 1.0) / sim_per_wall, clock_at(stamp)).command
    assert np.allclose(at(1.001), old)                  # no step
    target = new_ctrl.command(new_ctrl.q, new_ctrl.qd, 0.0)[0]
    per = min(1.0, sim_per_wall)        # of the states' time, per s of the first clock to pass
    half = at(1.001 + per * BUMPLESS / 2)
    assert np.allclose(half, (old + target) / 2, atol=1e-9)
    assert np.allclose(at(1.001 + per * BUMPLESS + 1e-9), target)
    assert loop.shaper.fade is None


def test_a_new_model_keeps_the_task_target_and_the_held_position(arm):
    # what the arm was told to hold goes on with the new model: in a task mode the target (the
    # pose it started at), in computed torque the held position (matched by joint name)
    for mode in ('cartesian_impedance', 'computed_torque'):
        loop = make(arm, mode=mode)
        feed(loop, 1.0, (0.3, -0.2))
        held = loop.ctrl.ref.task_target if mode == 'cartesian_impedance' else loop.ctrl.ref.hold
        assert held is not None
        heavier = RobotModel.from_urdf(open(example_urdf('planar_2r')).read().replace(
            'mass value="1', 'mass value="3'))
        loop.use_model(Controller(heavier, mode=mode), None, observing(2),
                       loop.values, 1.0)
        feed(loop, 1.001, (0.35, -0.2))           # moved: the target stays where it was
        if mode == 'cartesian_impedance':
            assert loop.ctrl.ref.task_target is held
        else:
            assert loop.ctrl.ref.hold.tolist() == [0.3, -0.2]


# ---- joint trajectories ---------------------------------------------------------------------
def tables(times, positions):
    return lambda: (JOINTS, times, positions, None, None, None)    # no velocities, ..., efforts


def test_trajectories_are_taken_refused_or_stopped(arm):
    loop = make(arm)
    assert not loop.trajectory(tables([1.0], [[0.5, 0.5]]), 1, 0.0, clock_at(1.0), '/t')
    assert 'no joint_states yet' in loop.log.text()
    feed(loop, 1.0)
    assert loop.trajectory(tables([1.0], [[0.5, 0.5]]), 1, 0.0, clock_at(1.0), '/t')
    assert loop.ctrl.ref.trajectory is not None

    # malformed: refused, the running one kept
    def bad():
        raise ValueError('velocities must be given for every point or for none')
    assert not loop.trajectory(bad, 2, 0.0, clock_at(1.0), '/t')
    assert loop.ctrl.ref.trajectory is not None and 'keeping the previous' in loop.log.text()
    # empty: stop and hold
    assert not loop.trajectory(tables([], []), 0, 0.0, clock_at(1.0), '/t')
    assert loop.ctrl.ref.trajectory is None and 'holding position' in loop.log.text()


def test_trajectory_scaling_rejects_or_stretches_what_the_arm_cannot(arm):
    fast = tables([0.05], [[2.0, 2.0]])          # 2 rad in 50 ms: over the effort limits
    loop = make(arm, trajectory_scaling='reject')
    feed(loop, 1.0)
    assert not loop.trajectory(fast, 1, 0.0, clock_at(1.0), '/t')
    assert 'trajectory_scaling reject' in loop.log.text()
    loop = make(arm, trajectory_scaling='scale')
    feed(loop, 1.0)
    assert loop.trajectory(fast, 1, 0.0, clock_at(1.0), '/t')
    assert loop.ctrl.ref.trajectory.path.end_time - 1.0 > 0.05 * 1.5
    assert 'stretched by k*' in loop.log.text()


def test_check_names_a_bad_start_state(arm):
    loop = make(arm)
    t = tables([1.0], [[0.5, 0.5]])()[:5]          # the check takes no efforts
    for start, match in [((['joint1'], [0.0, 1.0], []), 'start_state has 1 names'),
                         ((['elbow'], [0.0], []), 'unknown joint elbow'),
                         ((['joint1'], [np.inf], []), 'not finite')]:
        with pytest.raises(ValueError, match=match):
            loop.check(t, start, 1e-3)
    with pytest.raises(ValueError, match='no point'):
        loop.check((JOINTS, [], [], None, None), ([], [], []), 1e-3)
    assert loop.check(t, (['joint1'], [0.2], [0.0]), 1e-3).feasible


# ---- task space -----------------------------------------------------------------------------
@pytest.fixture
def ur5():
    return RobotModel.from_urdf_file(os.path.join(erd_root(), ROBOTS['ur5']))


UR5_Q = [0.0, -1.2, 1.0, -1.4, -1.57, 0.0]


def test_targets_are_refused_with_the_reason(arm, ur5):
    loop = ControlLoop(Log())
    assert not loop.target_accepted('target_pose', '')
    loop = make(arm)
    assert not loop.target_accepted('target_pose', '')
    assert 'takes joint trajectories' in loop.log.text()
    loop = make(ur5, observer=False, mode='cartesian_impedance')
    assert not loop.target_accepted('target_pose', '')
    assert 'no joint_states yet' in loop.log.text()
    names = list(loop.ctrl.joints)
    loop.joint_states(names, UR5_Q, [0.0] * 6, [], 1.0, 1.0, clock_at(1.0))
    assert not loop.target_accepted('target_pose', 'tool0')
    assert 'targets are in the root link' in loop.log.text()
    assert loop.target_accepted('target_pose', '') and loop.target_accepted('target_pose',
                                                                            ur5.root_link)


def test_a_lone_twist_times_out_and_the_target_holds(ur5):
    loop = make(ur5, observer=False, mode='cartesian_impedance')
    names = list(loop.ctrl.joints)

    def run(t0, t1):
        """States every 10 ms from t0 to t1 (the command checks the target's timeout)."""
        for t in np.arange(t0, t1, 0.01):
            loop.joint_states(names, UR5_Q, [0.0] * 6, [], t, t, clock_at(t))
    run(1.0, 1.001)
    assert loop.target_twist([0.05, 0, 0, 0, 0, 0], 1.0)
    assert loop.target_streaming
    run(1.01, 1.45)
    assert loop.target_streaming                # within task.target_timeout 0.5 s
    run(1.45, 1.6)
    assert not loop.target_streaming and 'the target stream stopped' in loop.log.text()
    # the watchdog times it out too, when the states are fresh
    assert loop.target_twist([0.05, 0, 0, 0, 0, 0], 1.6)
    run(1.61, 2.095)                        # the last state at 2.09: 0.49 s after the twist
    assert loop.target_streaming
    assert loop.watchdog(2.105) is None         # fresh state, 0.505 s after the twist

    assert not loop.target_streaming
    # a lone pose is not a stream; two within the timeout are
    pose = loop.ctrl.task_pose()
    position, orientation = pose[:3, 3].tolist(), [0.0, 0.0, 0.0, 1.0]
    assert loop.target_pose(position, orientation, 3.0) and not loop.target_streaming
    assert loop.target_pose(position, orientation, 3.1) and loop.target_streaming
    assert not loop.target_pose([np.nan, 0, 0], orientation, 3.2)
    assert 'refused ~/target_pose' in loop.log.text()


def test_in_simulated_time_a_starved_target_stream_goes_on(ur5):
    """
    Beside a lockstep simulator the target stream is timed in the plant's time, not wall time.

    The streaming process starved for 0.6 s of wall time while the simulation waited for it:
    the stream did not stop (no hold), the twist's change is over simulated time (a_d), and
    a target wrench after it does not re-arm held force axes. The plant's time going on
    without targets still stops the stream.
    """
    plant = [1.0]
    loop = make(ur5, observer=False, mode='cartesian_impedance')
    loop.plant_clock = lambda: plant[0]
    names = list(loop.ctrl.joints)

    def run(wall, n):
        """Feed ``n`` states 1 ms apart in the plant's time, received from ``wall`` on."""
        for k in range(n):
            plant[0] += 0.001
            loop.joint_states(names, UR5_Q, [0.0] * 6, [], plant[0], wall + 0.001 * k,
                              clock_at(plant[0]))
    run(5.0, 1)
    assert loop.target_twist([0.05, 0, 0, 0, 0, 0], 5.0)
    run(5.0, 10)
    assert loop.target_twist([0.05, 0.01, 0, 0, 0, 0], 5.6)    # starved: 0.6 s of wall time
    assert loop.target_streaming
    # a_d from the 10 ms of simulated time between the twists, not the 0.6 s of wall time
    np.testing.assert_allclose(loop.ctrl.ref.task_target.acceleration[:3], [0.0, 1.0, 0.0])
    run(5.6, 10)
    assert loop.watchdog(6.3) is None
    assert loop.target_streaming and 'the target stream stopped' not in loop.log.text()
    run(6.3, 600)                           # 0.6 s of the plant's time without targets
    assert not loop.target_streaming and 'the target stream stopped' in loop.log.text()
    # the force axes' re-arm pause too: a wrench 0.6 s of wall time after a hold, none of
    # simulated time, is one of a stream (the hold stays)
    force = loop.ctrl.memory.force
    force.asked(plant[0])
    force.hold('a test')
    assert loop.target_wrench([0, 0, -5.0, 0, 0, 0], 7.0) and force.holding == 'a test'
    plant[0] += 0.6
    loop.target_wrench([0, 0, -5.0, 0, 0, 0], 7.01)
    assert force.holding is None        # after a pause of the plant's time: re-armed


def test_a_stiffness_the_loop_period_cannot_hold_is_warned(ur5):
    loop = make(ur5, observer=False, mode='cartesian_impedance')
    names = list(loop.ctrl.joints)
    law = None
    for k in range(10):                     # 100 Hz: a 10 ms period
        t = 1.0 + 0.01 * k
        loop.joint_states(names, UR5_Q, [0.0] * 6, [], t, t, clock_at(t))
        law = loop.ctrl.law
    w = np.sqrt(law.stiffness / np.maximum(np.diag(law.lambda_), 1e-12))
    assert w.max() * 0.01 > BANDWIDTH_LIMIT       # the default stiffness at 100 Hz
    loop.watchdog(1.095)
    assert 'bandwidth' in loop.log.keys('warning')


def test_a_frame_fewer_joints_move_than_the_stiff_axes_is_warned():
    """
    so101 in cartesian_impedance: 5 joints move its default frame (its jaw no longer the sixth).

    Some direction is out of reach at every pose; the warning names the joints and the remedy.
    ur5 (6 joints) is not warned, nor so101 with stiffness on 5 axes.
    """
    model = RobotModel.from_urdf_file(os.path.join(erd_root(), ROBOTS['so101']))
    q = [0.0, -0.6, 0.8, 0.6, 0.0, 0.5]

    def warned(model, q, stiffness=None):
        loop = make(model, observer=False, mode='cartesian_impedance')
        if stiffness is not None:
            loop.ctrl.set_task(dict(stiffness=stiffness))
        names = list(loop.ctrl.joints)
        for k in range(10):
            t = 1.0 + 0.001 * k
            loop.joint_states(names, q, [0.0] * len(q), [], t, t, clock_at(t))
        loop.watchdog(1.0095)
        return loop.log.text() if 'axes' in loop.log.keys('warning') else None
    said = warned(model, q)
    assert said is not None and ('task.frame gripper_frame_link moves with 5 commanded joints '
                                 '(shoulder_pan, shoulder_lift, elbow_flex, wrist_flex, '
                                 'wrist_roll), fewer than the 6 axes') in said, said
    assert warned(model, q, [500.0, 500.0, 500.0, 0.0, 20.0, 20.0]) is None
    ur5 = RobotModel.from_urdf_file(os.path.join(erd_root(), ROBOTS['ur5']))
    assert warned(ur5, UR5_Q) is None


def test_the_loop_period_is_in_the_states_own_time(arm):
    # lockstep on a slow machine: states 1 ms apart in their stamps, received 2.5 ms apart
    loop = make(arm, observer=False)
    assert loop.period() is None
    for k in range(10):
        feed(loop, 1.0 + 0.0025 * k, stamp=100.0 + 0.001 * k)
    assert loop.period() == pytest.approx(0.001)
    assert np.median(loop.gaps) == pytest.approx(0.0025)    # staleness stays in wall time
    # unstamped, or stamped alike: the time of receipt
    for stamps in ([0.0] * 10, [100.0] * 10):
        loop = make(arm, observer=False)
        for k, stamp in enumerate(stamps):
            feed(loop, 1.0 + 0.0025 * k, stamp=stamp)
        assert loop.period() == pytest.approx(0.0025)


# ---- commanding on a timer, parameter changes -----------------------------------------------
def test_with_a_rate_the_states_only_update_and_the_timer_commands(arm):
    loop = make(arm, rate=500.0)
    reply = feed(loop, 1.0, (0.3, -0.2))
    assert reply.command is None and reply.estimate      # the observer still runs per state
    reply = loop.rate_tick(1.001, clock_at(7.0))
    assert reply.command is not None and not reply.answers_state   # stamped by the clock
    assert loop.commands == 1


def test_the_commanded_torques_the_observer_takes_include_what_the_hardware_adds(arm):
    q = (0.3, -0.2)
    loop = make(arm, observer__torque_source='commanded')
    loop.ctrl.hardware_compensates_gravity = True
    reply = feed(loop, 1.0, q)
    # the command leaves gravity to the hardware; the drives apply both
    assert np.allclose(reply.command + gravity_torques(arm, q), loop.motor)


def test_new_parameters_keep_the_trajectory_where_the_joints_and_mode_stay(arm, ur5):
    loop = make(arm)
    feed(loop, 1.0)
    assert loop.trajectory(tables([2.0], [[0.5, 0.5]]), 1, 0.0, clock_at(1.0), '/t')
    same = Controller(arm, mode='feedforward')
    loop.use_parameters(same, None, observing(2), loop.values, '/t')
    assert loop.ctrl is same and same.ref.trajectory is not None
    assert loop.commands == 0                   # torques_every counts anew
    # into a task mode: the trajectory is dropped, the target is the frame's pose
    loop = make(ur5, observer=False)
    names = list(loop.ctrl.joints)
    loop.joint_states(names, UR5_Q, [0.0] * 6, [], 1.0, 1.0, clock_at(1.0))
    assert loop.trajectory(lambda: (names, [2.0], [UR5_Q], None, None, None), 1, 0.0,
                           clock_at(1.0), '/t')
    task = Controller(ur5, mode='cartesian_impedance')
    loop.use_parameters(task, None, observing(6), loop.values, '/target_pose')
    assert task.ref.trajectory is None
    assert 'target its pose now; targets on /target_pose' in loop.log.text()


def test_on_timeout_gravity_holds_the_arm_at_its_last_known_pose(arm):
    loop = make(arm, on_timeout='gravity')
    q = (0.4, -0.3)
    feed(loop, 1.0, q, (0.5, 0.5))
    assert np.allclose(loop.watchdog(1.2).command, gravity_torques(arm, q))
