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
Force control without ROS: the loop's rules, and closed loops with the simulator's table.

The closed loops are bench/bench_contact.py's (feedforward_node's ControlLoop and the simulator
in process at 1 kHz, each command one step late, a probe on a force/torque sensor pressing a
table): 10 N down settles within 0.3 N (sensor) or 1 N (observer) within 1 s of contact,
sliding 0.2 m at 5 cm/s keeps it within 1.5 N, the table taken away leaves the probe under
force.max_speed and at rest, on ur5 and panda with either source. (xarm7, ur10 and z1 are the
bench's arms the tests do not use.)
"""
import dataclasses
import os
import sys

import numpy as np
import pytest

from robot_dynamics_ros.control import configuration
from robot_dynamics_ros.control import force
from robot_dynamics_ros.control.force import (APPROACH_RAMP, CONTACT_TIME, FORCE_DEFAULTS,
                                              LOST_TIME, REARM_PAUSE, SPEED_MARGIN, ForceLoop,
                                              ForceSettings, SensorInput, check, friction_band)
from robot_dynamics_ros.dynamics import RobotModel, frame_jacobian, frame_placement
from robot_dynamics_ros.dynamics.values import same_settings
from robot_dynamics_ros.dynamics.transmitted import ChildSide
from robot_dynamics_ros.nodes.feedforward_declarations import PARAMETERS

from conftest import robot_urdf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'bench'))
import bench_contact  # noqa: E402

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

DOWN = np.array([0, 0, -10.0, 0, 0, 0])


def loop_z(**settings):
    return ForceLoop(check(dict({'axes': [0, 0, 1, 0, 0, 0]}, **settings)))


def test_in_free_space_the_force_axis_moves_under_the_speed_limit_without_winding_up():
    fl = loop_z()
    limit = SPEED_MARGIN * FORCE_DEFAULTS['max_speed'][0]
    for k in range(2000):                           # 2 s of nothing to press on
        v_ref, damping = fl.update(np.zeros(6), DOWN, 1e-3 * k)
    assert v_ref[2] == pytest.approx(-limit) and not np.any(v_ref[[0, 1, 3, 4, 5]])
    assert damping[2] >= 2 * 10.0 / FORCE_DEFAULTS['max_speed'][0]    # F_d / D inside it
    # anti-windup: the integral did not grow while saturated, so touching stops it at once
    assert abs(fl.integral[2]) <= 2 * limit
    v_ref, _ = fl.update(-DOWN * -1.0, DOWN, 2.0)   # the force asked, reached
    assert abs(v_ref[2] - (-10.0 / damping[2] + fl.integral[2])) < 1e-12


def test_the_approach_speeds_up_over_the_ramp_and_slows_at_once():
    # set off in one period, the step D v_ref of the force axis's wrench (20 N: D 800 N s/m)
    # flung ur3's 0.1 kg probe sideways at 1.29 times force.max_speed (bench_contact)
    fl = loop_z()
    limit = SPEED_MARGIN * FORCE_DEFAULTS['max_speed'][0]
    v = [fl.update(np.zeros(6), 2 * DOWN, 1e-3 * k)[0][2] for k in range(40)]
    assert v[0] == 0.0 and all(-limit <= b < a + 1e-15 for a, b in zip(v, v[1:]))
    assert abs(v[10]) == pytest.approx(limit * 0.01 / APPROACH_RAMP)
    assert v[-1] == pytest.approx(-limit)
    fl.rearm()          # a wrench streamed after a pause: the ramp goes on from where it is
    assert fl.update(np.zeros(6), 2 * DOWN, 0.04)[0][2] == pytest.approx(-limit)
    v_ref, damping = fl.update(-2 * DOWN * -1.0, 2 * DOWN, 0.041)    # a touch: at once
    assert v_ref[2] == pytest.approx(-20.0 / damping[2])
    fl.hold('no force/torque reading')      # held by the controller (a stale sensor), re-armed:
    fl.rearm()                              # the approach ramps from rest again
    fl.update(np.zeros(6), 2 * DOWN, 1.0)
    assert fl.update(np.zeros(6), 2 * DOWN, 1.001)[0][2] == pytest.approx(
        -limit * 0.001 / APPROACH_RAMP)


def test_a_lost_contact_holds_but_a_bounce_does_not_and_a_new_target_rearms():
    fl = loop_z()
    t = 0.0
    while t < CONTACT_TIME + 0.0015:                # in contact: 10 N reached
        fl.update(DOWN, DOWN, t)
        t += 0.001
    assert fl.contact
    while t < 0.6 * LOST_TIME:                      # a bounce: no force for a while
        fl.update(np.zeros(6), DOWN, t)
        t += 0.001
    fl.update(DOWN, DOWN, t)
    assert fl.holding is None
    t0 = t
    while t < t0 + LOST_TIME + 0.002:               # the table gone
        v_ref, _ = fl.update(np.zeros(6), DOWN, t)
        t += 0.001
    assert fl.holding is not None and 'the contact is lost' in fl.holding
    assert not np.any(v_ref)
    fl.rearm()
    assert fl.holding is None and not fl.contact and not np.any(fl.integral)


def rigid_surface(fl, delay, steps=400, dt=1e-3):
    """
    Press a rigid surface: the arm at rest, the force it applies D v_ref, ``delay`` periods late.

    Return the forces applied, one per period.
    """
    sent = [np.zeros(6)] * delay
    out = []
    for k in range(steps):
        applied = sent[-delay]
        out.append(-applied[2])
        v_ref, damping = fl.update(applied, DOWN, k * dt)
        sent.append(damping * v_ref)
    return np.array(out)


@pytest.mark.parametrize('delay', [1, 3])
def test_against_a_rigid_surface_the_loop_settles_with_commands_a_few_periods_late(
        delay, monkeypatch):
    # there F_a = D v_ref: the proportional term's loop gain is D k_p, 2 at 10 N with the
    # default gains (D 400, k_p 5e-3); capped at LOOP_GAIN it settles, 3 periods late too
    f = rigid_surface(loop_z(), delay)
    assert np.abs(f[-100:] - 10.0).max() < 0.05
    monkeypatch.setattr(force, 'LOOP_GAIN', 1e9)     # without the cap: it rings, then diverges
    f = rigid_surface(loop_z(), delay)
    assert np.abs(f[-100:] - 10.0).max() > 1.0


@pytest.mark.parametrize('source', ['sensor', 'observer'])
def test_a_force_counts_as_contact_only_once_it_lasts(source):
    # a force read for a few ms in free air must not make a contact that is then "lost" and
    # held there: the observer reads a command the arm applies late as a force for as long as it
    # is late (ur5 after a stall, 3 ms: 6 N of the 10 N asked); a sensor reads the tool's
    # inertia as the approach sets off (ur3 with a 1 kg probe: 5.4 N of 10 for 1 ms; counted,
    # it held the probe 2 cm over the table at 0 N: bench_contact --force-table)
    fl = loop_z(source=source)
    t = 0.0
    for _ in range(3):
        fl.update(0.6 * DOWN, DOWN, t)
        t += 1e-3
    for _ in range(200):
        fl.update(np.zeros(6), DOWN, t)
        t += 1e-3
    assert not fl.contact and fl.holding is None
    for _ in range(round(CONTACT_TIME / 1e-3) + 2):     # a force that lasts: contact
        fl.update(0.6 * DOWN, DOWN, t)
        t += 1e-3
    assert fl.contact


@pytest.mark.parametrize('source', ['sensor', 'observer'])
def test_pressing_and_sliding_hold_through_stalls_with_commands_three_periods_late(
        source, monkeypatch):
    # issue #52's stall pattern (the loop stalling 50-150 ms now and then, commands 3 ms late):
    # the sensor's slide read 0.00-28.22 N before LOOP_GAIN, and the observer's press never
    # made contact before CONTACT_TIME (its force after the first stall taken for a contact)
    monkeypatch.setitem(bench_contact.STALLED, 'on', True)
    f, rig = bench_contact.press('ur5', source)
    assert f['contact'] is not None, rig.loop.log.lines[-5:]
    assert abs(f['steady'] - 10.0) <= bench_contact.BAND[source]
    lo, hi, _ = bench_contact.slide(rig)
    assert 8.5 <= lo and hi <= 11.5, (lo, hi)


@pytest.mark.parametrize('settings, says', [
    ({'axes': [0, 0, 1, 0, 0]}, 'task.force_axes needs six 0/1 values'),
    ({'axes': [0, 0, 0.5, 0, 0, 0]}, 'task.force_axes needs six 0/1 values'),
    ({'source': 'camera'}, "force.source must be one of ('sensor', 'observer')"),
    ({'gain': [-1.0]}, 'force.gain needs one value or one per axis (6), each finite >= 0'),
    ({'axes': [0, 0, 1, 0, 0, 0], 'damping': [0.0]}, 'force.damping must be > 0'),
    ({'max_speed': [0.05]},
     'force.max_speed needs 2 values (one per bound: m/s, rad/s), each finite > 0'),
    ({'timeout': 0.0}, 'force.timeout must be > 0'),
])
def test_bad_force_settings_are_refused_naming_them(settings, says):
    with pytest.raises(ValueError) as e:
        check(settings)
    assert says in str(e.value)


def test_the_force_settings_are_checked_once_frozen_and_compared_by_value():
    s = check({'axes': [0, 0, 1, 0, 0, 0], 'gain': [1e-3]})
    assert isinstance(s, ForceSettings) and s.source == 'sensor' and s.timeout == 0.1
    assert s.axes.tolist() == [False, False, True, False, False, False]
    assert s.gain.tolist() == [1e-3] * 6 and s.max_speed.tolist() == [0.05] * 3 + [0.5] * 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.source = 'observer'
    with pytest.raises(ValueError, match='read-only'):
        s.damping[0] = 1.0
    # what decides whether new parameters keep the running force loop
    assert same_settings(s, check({'axes': [0, 0, 1, 0, 0, 0], 'gain': [1e-3] * 6}))
    assert not same_settings(s, check({'axes': [0, 0, 1, 0, 0, 0]}))


def test_force_axes_in_a_mode_without_task_control_are_refused():
    v = {name: d[1] for name, d in PARAMETERS.items()}
    v.update({'mode': 'computed_torque', 'task.force_axes': [0, 0, 1, 0, 0, 0]})
    assert 'has no task control' in configuration.problem(v)
    v['mode'] = 'operational_space'
    assert configuration.problem(v) is None


def test_the_sensor_input_takes_the_tools_weight_and_the_bias_out():
    xml = robot_urdf('panda')
    model = RobotModel.from_urdf(xml)
    side = ChildSide(model, xml, 'panda_hand')
    q = np.array([0.3, -0.5, 0.2, -2.0, 0.4, 1.8, 0.7, 0.02, 0.02])
    # a 0.5 kg payload 10 cm below the hand: the sensor reads the hand, fingers and payload
    payload = ('panda_hand', 0.5, np.array([0.0, 0.0, 0.1]))
    src = SensorInput(side, payload, model.gravity)
    R = frame_placement(model, q, 'panda_hand')[:3, :3]
    f_payload = R.T @ (0.5 * model.gravity)
    weight = side.wrench(q, np.zeros(model.n), np.zeros(model.n),
                         {'panda_hand': np.concatenate([f_payload,
                                                        np.cross([0, 0, 0.1], f_payload)])})
    bias = np.array([1.0, -2.0, 0.5, 0.1, 0.0, -0.1])
    assert src.take(weight + bias, 0.0) is None
    src.zero(q)
    assert np.allclose(src.bias, bias) and np.allclose(src.external(q), 0.0, atol=1e-12)
    push = np.array([0.0, 0.0, 7.0, 0.0, 0.0, 0.0])
    src.take(weight + bias + push, 0.01)
    assert np.allclose(src.external(q), push)
    assert src.fresh(0.05, 0.1) and not src.fresh(0.2, 0.1)
    assert 'six finite numbers' in src.take([np.nan] * 6, 0.3)


@pytest.mark.parametrize('change', [{'kp': [50.0]}, {'payload': {'link': 'tool0', 'mass': 0.5}}])
def test_new_parameters_keep_the_sensor_and_its_bias_while_pressing(change):
    # with armature set every controller has a model of its own: new parameters (a gain, a
    # payload) dropped the sensor, and the force axes held ("no force/torque reading") at
    # the next command that came before the next reading, the bias that ~/zero_ft_sensor set
    # lost with it
    from robot_dynamics_ros.control import Controller
    xml = robot_urdf('ur5')
    ur5 = RobotModel.from_urdf(xml)
    q = np.array([0.0, -1.2, 1.5, -1.9, -1.57, 0.0])
    given = dict(mode='cartesian_impedance', armature=[0.1] * 6,
                 force={'axes': [0, 0, 1, 0, 0, 0], 'source': 'sensor'})
    c = Controller(ur5, **given)
    c.state.merge(list(ur5.joint_names), q, np.zeros(6), now=1.0)
    src = c.use_sensor(ChildSide(c.model, xml, 'wrist_3_link'))
    src.take(np.zeros(6), 1.0)
    bias = src.zero(c.q)
    c.set_task_wrench(DOWN)
    c.command(c.q, c.qd, 1.0, now=1.0)
    assert c.memory.force.holding is None
    d = Controller(ur5, **given, **change)
    assert d.model is not c.model
    d.carry_on_from(c)
    d.command(d.q, d.qd, 1.001, now=1.001)      # before the next reading
    assert d.memory.force.holding is None and d.memory.sensor is src
    # the next reading's sensor input is made on the new model, with the bias kept
    again = d.use_sensor(ChildSide(d.model, xml, 'wrist_3_link'))
    assert again.side.model is d.model and np.array_equal(again.bias, bias)


def test_a_joint_held_by_stiction_gets_its_friction_compensated_once_the_target_moves():
    """
    Compensate friction on the joint velocity the target asks, never on the measured one.

    In the task modes, per joint: the velocity the target's twist asks (J^+ v_d, not along the
    force axes); the measured one would be negative damping where the model's friction exceeds
    the arm's (test_task_space's closed loop).
    """
    from robot_dynamics_ros.control import Controller
    from robot_dynamics_ros.dynamics import frame_jacobian
    xml = robot_urdf('xarm7')
    model = RobotModel.from_urdf(xml)
    assert np.all(model.friction > 0)               # 1 N m Coulomb per joint in its URDF
    c = Controller(model, mode='cartesian_impedance', friction_compensation=1.0,
                   force=dict(axes=[0, 0, 1, 0, 0, 0]))
    q = np.array([0.0, 0.55, 0.0, 1.0, 0.0, 0.45, 0.0])
    zero = np.zeros(7)
    c.q[:], c.received[:] = q, True
    c.command(q, zero, 0.0, None, 0.0)
    assert np.allclose(c.compensated, c.model_friction(zero))      # a still target: none
    v = np.array([0.05, 0.0, -0.03, 0.0, 0.0, 0.0])                # z: a force axis
    c.set_task_twist(v, 0.0)
    c.command(q, zero, 0.0, None, 0.001)
    J = frame_jacobian(model, q, c.task.frame)
    ask = np.linalg.lstsq(J, np.where([0, 0, 1, 0, 0, 0], 0.0, v), rcond=None)[0]
    assert np.allclose(c.compensated, c.model_friction(ask), rtol=1e-4, atol=1e-6)
    assert np.abs(c.compensated).max() > 0.5        # breaks stiction: tanh(ask / 0.01 rad/s)
    # a joint moving faster than asked, or the other way: still the ask
    qd = ask.copy()
    qd[0] = 3 * ask[0] + 0.1
    qd[1] = -0.2
    c.command(q, qd, 0.0, None, 0.002)
    assert np.allclose(c.compensated, c.model_friction(ask), rtol=1e-4, atol=1e-6)
    # the target still again: none, however the arm moves
    c.set_task_twist(np.zeros(6), 0.0)
    c.command(q, qd, 0.0, None, 0.003)
    assert np.allclose(c.compensated, c.model_friction(zero))


@pytest.mark.parametrize('arm, source', [('ur5', 'sensor'), ('ur5', 'observer'),
                                         ('panda', 'sensor'), ('panda', 'observer')])
def test_pressing_sliding_and_losing_the_table(arm, source):
    f, rig = bench_contact.press(arm, source)
    assert f['contact'] is not None, rig.loop.log.lines[-5:]
    assert abs(f['steady'] - 10.0) <= bench_contact.BAND[source]
    assert f['settle'] <= 1.0
    assert f['speed'] <= 1.0                    # the approach: under force.max_speed
    lo, hi, travelled = bench_contact.slide(rig)
    assert 8.5 <= lo and hi <= 11.5, (lo, hi)
    assert travelled == pytest.approx(0.2, abs=0.01)
    fastest, later = bench_contact.removed(rig)
    assert fastest <= 1.0 and later < 1e-3, (fastest, later)
    assert any('the contact is lost' in line for line in rig.loop.log.lines)


def test_a_streamed_wrench_does_not_defeat_the_lost_contact_hold():
    """
    A ~/target_wrench streamed at 10 Hz (``ros2 topic pub -r 10``) while pressing.

    Then the table goes: the hold comes as with one message, the probe stops within the speed
    limit's braking and stays; the stream goes on and is told once that it does not re-arm the
    axes. Stopped for REARM_PAUSE and sent again, the axes control force again: the probe goes
    down.

    Before: each message re-armed the axes (no contact yet, no hold), and the probe descended at
    full speed with no warning (74 mm over DDS, issue 53).
    """
    f, rig = bench_contact.press('ur5', 'sensor')
    assert abs(f['steady'] - 10.0) <= bench_contact.BAND['sensor'], f
    loop, down = rig.loop, [0, 0, -bench_contact.FORCE, 0, 0, 0]
    period = round(0.1 / rig.sim.dt)
    ticks = {'n': 0}

    def stream(r):
        if ticks['n'] % period == 0:
            assert loop.target_wrench(down, r.t)
        ticks['n'] += 1
    rig.run(1.0, each=stream)                       # pressing, streamed: still 10 N
    assert abs(rig.since(rig.t - 0.5)[:, 1].mean() - 10.0) <= bench_contact.BAND['sensor']
    assert rig.ctrl.memory.force.holding is None
    z0 = frame_placement(rig.model, rig.sim.q, 'probe')[2, 3]
    t0 = rig.t
    rig.sim.set_world(bench_contact.World())
    rig.run(2.0, each=stream)
    r = rig.since(t0)
    limit = rig.ctrl.force_settings.max_speed[0]
    assert r[:, 2].max() <= limit and r[-1, 2] < 1e-3, (r[:, 2].max(), r[-1, 2])
    fell = z0 - frame_placement(rig.model, rig.sim.q, 'probe')[2, 3]
    assert fell < 0.01, fell                        # m; 0.2 s at the speed limit: 10 mm
    assert 'the contact is lost' in str(rig.ctrl.memory.force.holding)
    told = [m for m in loop.log.lines if 'does not re-arm' in m]
    assert len(told) == 1 and 'stop the stream and send the wrench again' in told[0], told
    # the stream stopped for REARM_PAUSE, then one message: force control again (down)
    rig.run(REARM_PAUSE)
    z1 = frame_placement(rig.model, rig.sim.q, 'probe')[2, 3]
    assert loop.target_wrench(down, rig.t)
    assert rig.ctrl.memory.force.holding is None
    rig.run(0.5)
    assert frame_placement(rig.model, rig.sim.q, 'probe')[2, 3] < z1 - 0.005
    # a table again 2 cm below, pressed under the stream and taken away: a second hold for the
    # same reason, told about again (once)
    x, y, z = bench_contact.lowest(rig.model, rig.geometry, rig.sim.q, 'probe')
    rig.sim.set_world(bench_contact.table(x, y, z - 0.02, size=0.5))
    rig.run(1.5, each=stream)
    assert rig.ctrl.memory.force.holding is None and rig.ctrl.memory.force.contact
    rig.sim.set_world(bench_contact.World())
    rig.run(1.0, each=stream)
    assert 'the contact is lost' in str(rig.ctrl.memory.force.holding)
    told = [m for m in loop.log.lines if 'does not re-arm' in m]
    assert len(told) == 2, told


def test_a_hold_stays_where_the_arm_is_while_a_pose_and_twist_stream_runs():
    """
    The contact lost, the force axis holds where the probe stopped.

    Whatever height a target pose stream (and its twist) asks meanwhile; the other axes follow
    the stream.

    Before: the held axis followed the streamed pose's height (the probe lifted 40 mm when the
    sensor went stale mid-slide, issue 53).
    """
    f, rig = bench_contact.press('ur5', 'sensor')
    rig.sim.set_world(bench_contact.World())
    rig.run(1.0)
    assert 'the contact is lost' in str(rig.ctrl.memory.force.holding)
    T = frame_placement(rig.model, rig.sim.q, 'probe')
    z_held, x0 = T[2, 3], T[0, 3]
    quat = bench_contact.quaternion(np.vstack([np.column_stack([T[:3, :3], np.zeros(3)]),
                                               [0, 0, 0, 1]]))
    loop = rig.loop

    def stream(r):          # 4 cm higher, moving along x and up at 2 cm/s
        s = r.t - t0
        loop.target_pose([x0 + 0.02 * s, T[1, 3], z_held + 0.04 + 0.02 * s], quat, r.t)
        loop.target_twist([0.02, 0, 0.02, 0, 0, 0], r.t)
    t0 = rig.t
    rig.run(1.5, each=stream)
    T1 = frame_placement(rig.model, rig.sim.q, 'probe')
    assert abs(T1[2, 3] - z_held) < 2e-3, T1[2, 3] - z_held
    assert T1[0, 3] - x0 > 0.015, T1[0, 3] - x0         # x follows (0.03 m asked)


@pytest.mark.parametrize('arm, warned', [('z1', True), ('xarm7', True), ('ur5', False)])
def test_friction_that_rivals_the_force_asked_is_warned_about_with_the_figure(arm, warned):
    """
    Friction is not compensated along the force axes: where it could hold a fifth of the force.

    z1 (1-2 N m Coulomb per joint) stops short of the table at 5 N, xarm7's observer settles off
    (bench_contact --force-table): the target wrench gets a warning with the friction's figure
    at the frame, computed as friction_band from the description's friction. ur5's description
    has none: no warning.
    """
    rig = bench_contact.PressRig(arm, 'sensor')
    ctrl = rig.ctrl
    J = frame_jacobian(rig.model, ctrl.q, 'probe')[:, ctrl.cmd]
    band = friction_band(J, ctrl.friction.fc[ctrl.cmd], ctrl.force_settings.axes)
    # the figure: the friction torques that push hardest along z, through J's force map
    F = np.linalg.pinv(J @ J.T) @ J
    worst = F @ (np.sign(F[2]) * ctrl.friction.fc[ctrl.cmd])
    assert band[2] == pytest.approx(worst[2]) and not np.any(band[[0, 1, 3, 4, 5]])
    assert rig.loop.target_wrench([0, 0, -5.0, 0, 0, 0], rig.t)
    said = [m for m in rig.loop.log.lines if 'Coulomb friction' in m]
    assert bool(said) == warned, (band, said)
    if warned:
        assert f'z {band[2]:.3g} against 5 asked' in said[0], said


def test_an_angular_force_axis_turns_under_its_speed_limit_then_twists_a_spring():
    """
    A torque about root z: free for 0.2 rad, then a torsion spring (5 N m/rad) resists.

    The probe turns at most at force.max_speed[1], then comes to rest where the spring holds the
    0.5 N m asked (0.3 rad); the position axes stay where they are.
    """
    k, torque, free = 5.0, 0.5, 0.2
    rig = bench_contact.PressRig('ur5', 'sensor', task__force_axes=[0, 0, 0, 0, 0, 1])
    sim, model = rig.sim, rig.model
    R0 = frame_placement(model, sim.q, 'probe')
    contacts = sim.contact_wrenches
    spring = {}

    def twist_back():
        T = frame_placement(model, sim.q, 'probe')
        R = T[:3, :3] @ R0[:3, :3].T
        angle = np.arctan2(R[1, 0], R[0, 0])
        spring_torque = -k * np.sign(angle) * max(abs(angle) - free, 0.0)
        w = np.concatenate([np.zeros(3), T[:3, :3].T @ [0.0, 0.0, spring_torque]])
        sim.set_wrench('probe', w)
        spring.update(angle=angle)
        return dict(contacts(), probe=w)
    sim.contact_wrenches = twist_back
    sim.contact_wrenches()
    rig.ctrl.set_task_wrench([0, 0, 0, 0, 0, torque])
    turn = []
    for _ in range(10000):
        rig.step()
        turn.append((frame_jacobian(model, sim.q, 'probe') @ sim.qd)[3:])
    turn = np.array(turn)
    limit = FORCE_DEFAULTS['max_speed'][1]
    assert np.abs(turn[:, 2]).max() <= limit, np.abs(turn[:, 2]).max()
    # 0.5 N m within 1 % (0.5003 at 7.5 s; 11 % over on the way). With the first angular gains
    # (5e-3, 5e-2: the linear ones' scale, not the angular damping's) 0.516 after 10 s and
    # still turning, 37 % over on the way while the integral also ran before the contact
    assert spring['angle'] == pytest.approx(free + torque / k, abs=0.01 * torque / k)
    assert np.abs(turn[-500:]).max() < 1e-3                 # at rest
    moved = frame_placement(model, sim.q, 'probe')[:3, 3] - R0[:3, 3]
    assert np.linalg.norm(moved) < 1e-3, moved


def test_a_silent_sensor_holds_the_force_axis_and_the_arm_does_not_move_to_the_table():
    rig = bench_contact.PressRig('ur5', 'sensor')
    rig.sensor.read = lambda *a, **k: None          # the broadcaster stops publishing
    rig.ctrl.memory.sensor.take = lambda *a, **k: None
    t0 = rig.t
    rig.ctrl.set_task_wrench([0, 0, -10.0, 0, 0, 0])
    rig.run(1.0)
    # the last reading counts for force.timeout (0.1 s: the probe starts down), then the axis
    # holds: it never reaches the table 2 cm below and is at rest
    assert not np.any(rig.since(t0)[:, 1] > 0)
    assert np.max(np.abs(rig.since(t0 + 0.6)[:, 3])) < 1e-3
    assert any('no force/torque reading on force_torque_sensor_broadcaster/wrench' in line
               for line in rig.loop.log.lines)
