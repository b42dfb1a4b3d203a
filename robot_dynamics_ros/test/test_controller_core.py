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

"""The controller without ROS: state mapping, modes, limits, timeout, payload, service split."""
import dataclasses

import numpy as np
import pytest

from robot_dynamics_ros.control import Controller, JointGains
from robot_dynamics_ros.dynamics import (RobotModel, bias_torques, crba, example_urdf,
                                         gravity_torques, rnea)

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO


@pytest.fixture
def arm():
    return RobotModel.from_urdf_file(example_urdf('planar_2r'))


def test_state_mapping_merges_per_joint(arm):
    c = Controller(arm, default_positions={'joint2': 0.25})
    assert c.state.missing() == ['joint1', 'joint2']
    assert c.state.merge(['other', 'joint1'], [9.0, 0.5], [], now=1.0) == (1, 1)
    assert c.q.tolist() == [0.5, 0.25] and c.qd.tolist() == [0.0, 0.0]
    assert c.state.missing() == ['joint2']
    c.state.merge(['joint2', 'joint1'], [1.0, 2.0], [3.0, 4.0], now=2.0)
    assert c.q.tolist() == [2.0, 1.0] and c.qd.tolist() == [4.0, 3.0]
    # a message naming only joint2 leaves joint1 as it was
    c.state.merge(['joint2'], [-1.0], [0.5], now=3.0)
    assert c.q.tolist() == [2.0, -1.0] and c.qd.tolist() == [4.0, 0.5]
    # freshness per commanded joint: joint1 last came at 2.0, joint2 at 3.0
    assert c.state.stale(now=2.05, timeout=0.1) == []
    assert c.state.stale(now=3.05, timeout=0.1) == ['joint1']
    assert c.state.stale(now=3.5, timeout=0.1) == ['joint1', 'joint2']
    # in simulated time (a plant clock), stale also in the plant's time: joint1's state stamped
    # 20.0, joint2's 21.0; unstamped states (0) and stamps of another clock go by receipt alone
    c.state.merge(['joint1'], [2.0], [], now=2.0, stamp=20.0)
    c.state.merge(['joint2'], [-1.0], [], now=3.0, stamp=21.0)
    assert c.state.stale(now=9.0, timeout=0.1, plant_clock=lambda: 21.05) == ['joint1']
    assert c.state.stale(now=9.0, timeout=0.1, plant_clock=lambda: 20.05) == ['joint2']
    assert c.state.stale(now=9.0, timeout=0.1, plant_clock=lambda: 25.0) == ['joint1', 'joint2']
    assert c.state.stale(now=9.0, timeout=0.1, plant_clock=lambda: None) == ['joint1', 'joint2']
    c.state.merge(['joint2'], [-1.0], [], now=3.0, stamp=0.0)
    assert c.state.stale(now=9.0, timeout=0.1, plant_clock=lambda: 0.0) == ['joint1', 'joint2']
    # names that are not in the model update nothing
    assert c.state.merge(['gripper'], [0.1], [], now=4.0) == (0, 0)
    for names, pos, vel, match in [(['joint1', 'joint2'], [1.0], [], 'position has 1'),
                                   (['joint1', 'joint2'], [1.0, 2.0], [1.0], 'velocity has 1'),
                                   (['joint1'], [np.nan], [], 'NaN'),
                                   (['joint1'], [0.0], [np.inf], 'NaN'),
                                   (['joint1', 'joint1'], [0.0, 1.0], [], 'twice')]:
        with pytest.raises(ValueError, match=match):
            c.state.merge(names, pos, vel, now=5.0)
    assert c.q.tolist() == [2.0, -1.0]        # a refused message changes nothing


def test_new_parameters_take_the_reference_itself_and_keep_what_carries_over(arm):
    # the trajectory, the held position and the reaction are one Reference: taken, never
    # copied; what the new parameters do not go on with is dropped from it
    def follow(c):
        c.state.merge(['joint1', 'joint2'], [0.0, 0.0], [0.0, 0.0], now=0.0)
        c.set_trajectory(['joint1', 'joint2'], [1.0], [[0.5, -0.5]], None, None, start_time=0.0,
                         now=0.0, q=c.q.copy(), qd=c.qd.copy())
    c = Controller(arm, mode='computed_torque')
    follow(c)
    followed = c.ref.trajectory
    assert followed.joints.tolist() == [0, 1] and followed.path.end_time == 1.0
    d = Controller(arm, mode='computed_torque', kp=[50.0])      # new gains: goes on
    assert d.carry_on_from(c) and d.ref is c.ref and d.ref.trajectory is followed
    d.hold_here()
    e = Controller(arm, mode='computed_torque', kd=[5.0])        # the same mode: the hold stays
    e.carry_on_from(d)
    assert e.ref is d.ref and e.ref.hold.tolist() == [0.0, 0.0] and e.ref.trajectory is None
    f = Controller(arm, mode='feedforward')                       # another mode: not the hold
    f.carry_on_from(e)
    assert f.ref is e.ref and f.ref.hold is None
    follow(f)
    g = Controller(arm, mode='cartesian_impedance')               # a task mode: not the path
    assert not g.carry_on_from(f) and g.ref is f.ref and g.ref.trajectory is None
    # a collision reaction goes on whatever the parameters; its end holds where the arm is
    g.react('hold', [0.1, 0.2])
    h = Controller(arm, mode='gravity')
    h.carry_on_from(g)
    assert h.ref.reaction == 'hold' and h.ref.reaction_q.tolist() == [0.1, 0.2]
    h.clear_reaction()
    assert h.ref.reaction is None and h.ref.hold is None


def test_a_new_model_takes_the_reference_remapped_by_joint_name(arm):
    c = Controller(arm, mode='computed_torque')
    c.state.merge(['joint1', 'joint2'], [0.2, 0.3], [0.0, 0.0], now=0.0)
    c.set_trajectory(['joint1'], [1.0], [[0.5]], None, None, start_time=0.0, now=0.0,
                     q=c.q.copy(), qd=c.qd.copy())
    xml = open(example_urdf('planar_2r'), encoding='utf-8').read()
    other = Controller(RobotModel.from_urdf(xml.replace('"joint2"', '"elbow"')),
                       mode='computed_torque', default_positions={'elbow': -1.0})
    assert other.take_motion(c) is None and other.ref is not c.ref
    assert other.ref.trajectory.path is c.ref.trajectory.path
    assert other.ref.trajectory.arrival.tolist() == [0.2, -1.0]     # elbow: its default
    c.hold_here()
    gone = Controller(RobotModel.from_urdf(xml.replace('"joint1"', '"shoulder"')),
                      mode='computed_torque')
    c.set_trajectory(['joint1'], [1.0], [[0.5]], None, None, start_time=0.0, now=0.0,
                     q=c.q.copy(), qd=c.qd.copy())
    assert gone.take_motion(c) == ("it moves joints ['joint1'], which the new model does not "
                                   "have") and gone.ref.trajectory is None


def test_the_task_target_goes_on_in_the_task_modes_and_is_dropped_outside_them():
    # the task target and posture are the reference's: taken with it between task modes of
    # one frame, dropped for a joint mode; a new model (the same frame) takes them too
    from conftest import robot_urdf
    ur5 = RobotModel.from_urdf(robot_urdf('ur5'))
    q = np.array([0.0, -1.2, 1.5, -1.9, -1.57, 0.0])

    def run(c):
        c.state.merge(list(ur5.joint_names), q, np.zeros(6), now=0.0)
        c.command(c.q, c.qd, 0.0, now=0.0)
    c = Controller(ur5, mode='cartesian_impedance')
    run(c)
    target, posture = c.ref.task_target, c.ref.posture
    assert target is not None and posture.tolist() == q.tolist()
    d = Controller(ur5, mode='operational_space')
    d.carry_on_from(c)
    assert d.ref.task_target is target and d.ref.posture is posture
    e = Controller(ur5, mode='cartesian_impedance', task=dict(posture=[0.0] * 6))
    e.carry_on_from(d)                  # a posture given: not the one taken at activation
    assert e.ref.task_target is target and e.ref.posture is None
    f = Controller(ur5, mode='computed_torque')
    f.carry_on_from(e)
    assert f.ref.task_target is None and f.ref is e.ref
    h = Controller(ur5, mode='cartesian_impedance')
    run(h)
    g = Controller(RobotModel.from_urdf(robot_urdf('ur5')), mode='cartesian_impedance')
    g.take_motion(h)
    g.take_task(h)
    assert g.ref is not h.ref and g.ref.task_target is h.ref.task_target
    assert g.ref.posture is h.ref.posture


def test_new_parameters_take_the_memory_itself_and_drop_what_they_do_not_go_on_with():
    # what changes while a controller runs is its ControlMemory: new parameters take it whole
    # (the last command the rate limit ramps from, the stiffness ramp, the force loop), never
    # a copy; a change that makes one part meaningless starts that part afresh
    from conftest import robot_urdf
    from robot_dynamics_ros.control.memory import ControlMemory
    ur5 = RobotModel.from_urdf(robot_urdf('ur5'))
    q = np.array([0.0, -1.2, 1.5, -1.9, -1.57, 0.0])
    force = dict(axes=[0, 0, 1, 0, 0, 0], source='observer')

    def run(c, now):
        c.state.merge(list(ur5.joint_names), q, np.zeros(6), now=now)
        return c.limit_layer.apply(c.command(c.q, c.qd, now, now=now)[0], c.q, c.qd, now)
    c = Controller(ur5, mode='cartesian_impedance', force=force)
    assert isinstance(c.memory, ControlMemory) and c.memory.sent.last is None
    sent = run(c, 1.0)
    memory, loop = c.memory, c.memory.force
    assert memory.sent.last[0] is sent and memory.ramp is not None
    stiff = dict(stiffness=[500.0] * 3 + [20.0] * 3)
    d = Controller(ur5, mode='cartesian_impedance', force=force, task=stiff)
    d.carry_on_from(c)
    assert d.memory is memory and d.state is c.state and d.ref is c.ref
    assert memory.force is loop                 # the same force settings: the loop goes on
    # the new stiffness ramps from the old one, at the last command's state time
    assert memory.ramp[0].tolist() == [1000.0] * 3 + [50.0] * 3
    assert memory.ramp[1] is d.task.stiffness and memory.ramp[2] == 1.0
    run(d, 1.25)                                # the new layer notes into the same memory
    assert memory.sent.last[1] == 1.25 and d.limit_layer.last is memory.sent.last
    assert memory.ramp[0] is not memory.ramp[1]     # half way: still ramping
    e = Controller(ur5, mode='cartesian_impedance', force=dict(force, gain=[1e-3]), task=stiff)
    e.carry_on_from(d)
    assert e.memory is memory and memory.force is not loop      # other force gains: anew
    f = Controller(ur5, mode='computed_torque', joints=list(ur5.joint_names[:3]))
    f.carry_on_from(e)                          # other joints, a joint mode
    assert f.memory is memory and memory.sent.last is None and memory.ramp is None
    assert memory.sent.names == f.joints and f.limit_layer.last is None


def test_defaults_follow_for_joints_never_received(arm):
    c = Controller(arm, joints=['joint1'])
    c.state.merge(['joint1'], [0.3], [], now=0.0)
    assert c.state.missing() == []           # joint2 is not commanded
    c.set_default_positions({'joint2': 0.7})
    assert c.q.tolist() == [0.3, 0.7]
    d = Controller(arm, joints=['joint1'], default_positions={'joint2': -0.2})
    d.take_state(c)
    assert d.q.tolist() == [0.3, -0.2] and d.updated[0] == 0.0


def test_new_parameters_take_the_state_itself_and_a_new_model_a_remapped_copy(arm):
    c = Controller(arm)
    c.state.merge(['joint1', 'joint2'], [0.3, -0.4], [0.1, 0.2], now=1.0, stamp=5.0)
    d = Controller(arm, kp=[50.0])                 # new parameters, the same model and joints
    d.take_state(c)
    assert d.state is c.state and d.q is c.q       # one store: nothing copied
    d.state.merge(['joint2'], [0.9], [], now=2.0)
    assert d.q.tolist() == [0.3, 0.9] and d.updated.tolist() == [1.0, 2.0]
    assert d.state.missing() == [] and d.state.stale(2.05, 0.1) == ['joint1']
    e = Controller(arm, joints=['joint1'])         # other commanded joints: a copy
    e.take_state(d)
    assert e.state is not d.state and e.q.tolist() == [0.3, 0.9]
    assert e.stamped.tolist() == [5.0, 0.0] and e.state.missing() == []
    xml = open(example_urdf('planar_2r'), encoding='utf-8').read()
    other = RobotModel.from_urdf(xml.replace('"joint2"', '"elbow"'))
    u = Controller(other)                          # another model: joints matched by name
    u.take_state(d)
    assert u.state is not d.state and u.q.tolist() == [0.3, 0.0]
    assert u.received.tolist() == [True, False] and u.state.missing() == ['elbow']


def test_modes(arm):
    q, qd = np.array([0.3, -0.4]), np.array([0.5, 1.5])
    c = Controller(arm, kp=[10.0, 20.0], kd=[1.0, 2.0])
    assert np.allclose(c.command(q, qd, 0.0)[0], gravity_torques(arm, q))
    c.set_mode('feedforward')
    assert np.allclose(c.command(q, qd, 0.0)[0], gravity_torques(arm, q))   # no trajectory
    c.set_trajectory(['joint1', 'joint2'], [1.0], [[1.0, 0.0]], None, None,
                     start_time=0.0, now=0.0, q=q, qd=qd)
    q_d, qd_d, qdd_d = c.desired(0.5, q)
    assert np.allclose(q_d, [0.65, -0.2]) and np.allclose(qd_d, [0.7, 0.4])
    assert np.allclose(c.command(q, qd, 0.5)[0], rnea(arm, q_d, qd_d, qdd_d))
    c.set_mode('computed_torque')
    e, ed = q_d - q, qd_d - qd
    v = qdd_d + np.array([10.0, 20.0]) * e + np.array([1.0, 2.0]) * ed
    expected = crba(arm, q) @ v + bias_torques(arm, q, qd)
    assert np.allclose(c.command(q, qd, 0.5)[0], expected)
    # without a trajectory computed torque holds where it started holding
    c.hold_at_next_command()
    c.command(q, qd, 1.0)
    q2 = q + 0.1
    expected = crba(arm, q2) @ (np.array([10.0, 20.0]) * (q - q2) - np.array([1.0, 2.0]) * qd) \
        + bias_torques(arm, q2, qd)
    assert np.allclose(c.command(q2, qd, 1.1)[0], expected)
    with pytest.raises(ValueError, match='mode must be one of'):
        c.set_mode('impedance')


def test_limits_hardware_gravity_and_joint_subset(arm):
    q = np.array([0.0, 0.0])   # horizontal: joint1 holds 98.1 + 19.62 N m
    c = Controller(arm, joints=['joint2', 'joint1'], effort_limits={'joint1': 50.0})
    tau, clamped = c.command(q, np.zeros(2), 0.0)
    g = gravity_torques(arm, q)
    assert tau.tolist() == [g[1], 50.0] and clamped.tolist() == [False, True]
    c = Controller(arm, hardware_compensates_gravity=True)
    assert np.allclose(c.command(q, np.zeros(2), 0.0)[0], 0.0)
    with pytest.raises(ValueError, match='not movable joints'):
        Controller(arm, joints=['joint1', 'elbow'])
    with pytest.raises(ValueError, match='kp needs'):
        Controller(arm, kp=[1.0, 2.0, 3.0])
    # what the user gave, not its broadcast to every joint
    with pytest.raises(ValueError, match=r'kd needs .*\(2\), each finite >= 0, got \[-1\.0\]$'):
        Controller(arm, kd=[-1.0])


def test_timeout_behaviours(arm):
    q = np.array([0.2, 0.1])
    c = Controller(arm)
    assert c.timeout_command('zero', q).tolist() == [0.0, 0.0]
    assert np.allclose(c.timeout_command('gravity', q), gravity_torques(arm, q))
    assert c.timeout_command('gravity', None).tolist() == [0.0, 0.0]


def test_payload_and_trajectory_rules(arm):
    q = np.array([0.0, 0.0])
    c = Controller(arm, payload={'link': 'tool0', 'mass': 2.0})
    # 2 kg at the tip (1.8 m from joint 1, 0.8 m from joint 2)
    extra = gravity_torques(c.model, q) - gravity_torques(arm, q)
    assert np.allclose(extra, [2.0 * 9.81 * 1.8, 2.0 * 9.81 * 0.8])
    with pytest.raises(ValueError, match='unknown joints'):
        c.set_trajectory(['joint9'], [1.0], [[0.0]], None, None, start_time=0, now=0, q=q, qd=q)
    with pytest.raises(ValueError, match='ended'):
        c.set_trajectory(['joint1'], [1.0], [[0.0]], None, None, start_time=0.0, now=5.0,
                         q=q, qd=q)


def test_inverse_dynamics_split(arm):
    c = Controller(arm, default_positions={'joint1': 0.4})
    effort, g, cor, inertial, friction = c.inverse_dynamics(['joint2'], [0.3], [1.0], [2.0])
    q, qd, qdd = np.array([0.4, 0.3]), np.array([0.0, 1.0]), np.array([0.0, 2.0])
    assert effort[0] == pytest.approx(rnea(arm, q, qd, qdd)[1])
    assert g[0] == pytest.approx(gravity_torques(arm, q)[1])
    assert effort[0] == pytest.approx(g[0] + cor[0] + inertial[0])
    for args, match in [((['joint1', 'x'], [0, 0]), 'unknown joints'),
                        ((['joint1'], [0, 0]), 'position needs 1'),
                        ((['joint1'], [np.nan]), 'NaN'),
                        (([], []), 'empty')]:
        with pytest.raises(ValueError, match=match):
            c.inverse_dynamics(*args)


def test_friction_compensation(arm):
    """Compensate b qd + fc tanh(qd / eps), scaled: in the service's split and every mode."""
    b, fc, eps = np.array([0.5, 0.2]), np.array([2.0, 1.0]), 0.05
    c = Controller(arm, friction_compensation=0.8, damping=b, friction=fc,
                   friction_velocity_epsilon=eps, default_positions={'joint1': 0.4})
    q, qd = np.array([0.4, 0.3]), np.array([-0.3, 1.0])
    expected = 0.8 * (b * qd + fc * np.tanh(qd / eps))
    effort, g, cor, inertial, friction = c.inverse_dynamics(['joint1', 'joint2'], q, qd, [0, 0])
    np.testing.assert_allclose(friction, expected, rtol=1e-12)
    np.testing.assert_allclose(effort, g + cor + inertial + friction, rtol=1e-12)
    # gravity mode, no trajectory: on the measured velocity
    c.state.merge(['joint1', 'joint2'], q, qd, 0.0)
    np.testing.assert_allclose(c.full_torque(q, qd, 0.0),
                               gravity_torques(arm, q) + expected, rtol=1e-12)
    # along a trajectory: on the desired velocity, not the measured one
    c.set_mode('feedforward')
    c.set_trajectory(['joint1', 'joint2'], [1.0], [[1.4, 1.3]], None, None, start_time=0.0,
                     now=0.0, q=q, qd=np.zeros(2))
    q_d, qd_d, qdd_d = c.desired(0.5, q)
    np.testing.assert_allclose(
        c.full_torque(q, qd, 0.5),
        rnea(arm, q_d, qd_d, qdd_d) + 0.8 * (b * qd_d + fc * np.tanh(qd_d / eps)), rtol=1e-12)
    # the URDF's <dynamics> by default; off by default
    assert np.all(Controller(arm).friction_torque(qd) == 0.0)
    with pytest.raises(ValueError, match='friction_compensation'):
        Controller(arm, friction_compensation=1.5)
    with pytest.raises(ValueError, match='damping needs'):
        Controller(arm, friction_compensation=1.0, damping=[1.0, 2.0, 3.0])


def test_the_torque_offset_is_friction_compensation_and_in_the_observers_model(arm):
    """Friction b qd + fc tanh + fo: scaled in the output and its split, whole in the observer."""
    b, fc, fo, eps = np.array([0.5, 0.2]), np.array([2.0, 1.0]), np.array([0.7, -0.4]), 0.05
    c = Controller(arm, friction_compensation=0.5, damping=b, friction=fc, torque_offset=fo,
                   friction_velocity_epsilon=eps)
    q, qd = np.array([0.4, 0.3]), np.array([-0.3, 1.0])
    whole = b * qd + fc * np.tanh(qd / eps) + fo
    np.testing.assert_allclose(c.model_friction(qd), whole, rtol=1e-12)
    friction = c.inverse_dynamics(['joint1', 'joint2'], q, qd, [0, 0])[4]
    np.testing.assert_allclose(friction, 0.5 * whole, rtol=1e-12)
    # off: nothing in the output, all of it in the observer's model; one value for all joints
    c = Controller(arm, torque_offset=[0.3])
    assert np.all(c.friction_torque(qd) == 0.0)
    np.testing.assert_allclose(c.model_friction(np.zeros(2)), [0.3, 0.3])
    with pytest.raises(ValueError, match='torque_offset needs'):
        Controller(arm, torque_offset=[1.0, np.nan])


def test_the_task_settings_are_checked_once_and_never_changed_after(arm):
    c = Controller(arm, task=dict(stiffness=[500.0, 500.0, 500.0, 20.0, 20.0, 20.0]))
    t = c.task
    assert t.frame and t.stiffness.tolist() == [500.0] * 3 + [20.0] * 3 and t.posture is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.frame = 'link1'
    with pytest.raises(ValueError, match='read-only'):
        t.stiffness[0] = 1.0
    c.set_task(dict(stiffness=[100.0] * 6))         # new settings: a new object, the old intact
    assert c.task is not t and t.stiffness[0] == 500.0 and c.task.stiffness[0] == 100.0


def test_the_gains_are_one_frozen_set_in_model_order_replaced_whole(arm):
    # the parameters' form (commanded joints) and the payload service's (model order) build the
    # same JointGains; a change is a new set, the old one intact (what hand_back restores)
    c = Controller(arm, joints=['joint2'], mode='computed_torque', kp=[50.0], kd=[7.0])
    g = c.gains
    assert g.kp.tolist() == [0.0, 50.0] and g.kd.tolist() == [0.0, 7.0] and c.gains.kp is g.kp
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.kp = np.ones(2)
    with pytest.raises(ValueError, match='read-only'):
        c.gains.kp[1] = 1.0
    stiffer = g.with_joints([1], [0.0, 400.0], [0.0, 40.0])
    c.set_gains(stiffer)
    assert c.gains.kp.tolist() == [0.0, 400.0] and g.kp.tolist() == [0.0, 50.0]
    c.set_gains(g)
    assert c.gains is g
    # each form refused naming the gain, the count and what came
    with pytest.raises(ValueError, match=r'kp needs one value or one per commanded joint \(1\)'):
        JointGains.commanded([1.0, 2.0], [1.0], 2, [1])
    with pytest.raises(ValueError, match=r'kd needs 2 values \(one per model joint\).*NaN'):
        JointGains.of_model([1.0, 2.0], [1.0, np.nan], 2)
    with pytest.raises(ValueError, match='gains for 3 joints, the model has 2'):
        c.set_gains(JointGains.of_model([1.0] * 3, [1.0] * 3, 3))


def test_the_friction_model_is_checked_once_and_never_changed_after(arm):
    c = Controller(arm, friction_compensation=0.5, damping=[0.1], friction=[0.2, 0.3])
    f = c.friction
    assert f.b.tolist() == [0.1, 0.1] and f.fc.tolist() == [0.2, 0.3] and f.epsilon == 0.01
    with pytest.raises(ValueError, match='read-only'):
        f.fc[0] = 0.0
    qd = np.array([0.5, -0.02])
    assert np.allclose(c.model_friction(qd), 0.1 * qd + [0.2, 0.3] * np.tanh(qd / 0.01))
    assert np.allclose(c.friction_torque(qd), 0.5 * c.model_friction(qd))
