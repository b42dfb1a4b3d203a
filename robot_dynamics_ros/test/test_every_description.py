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
Every URDF that example-robot-data ships and Pinocchio loads.

It loads here in Pinocchio's joint order and every algorithm agrees with Pinocchio, or it is
refused for a named reason. Plus a description written the way xacro output of a ros2_control stack
looks.
"""
import glob
import os
import re

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_ros.dynamics import (RobotModel, aba, bias_torques, coriolis_matrix, crba,
                                         example_urdf, frame_bias_acceleration, frame_jacobian,
                                         frame_placement, gravity_torques, momentum,
                                         momentum_and_beta, rnea)

from conftest import erd_root
from pinocchio_oracle import Oracle

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

RTOL = 1e-9
# The only files refused, and why (every other file Pinocchio loads must load).
REFUSED = {
    'hector_description/robots/quadrotor_base.urdf': 'has no movable joint',
    'iris_description/robots/iris_simple.urdf': 'has no movable joint',
    # an eigenvalue of -0.021 kg m^2 on a 1.6 kg body: non-physical, not rounding
    'romeo_description/urdf/romeo_laas_small.urdf':
        'link "body" has an <inertia> that is not positive semi-definite',
}


def erd_files():
    root = erd_root()
    return sorted(os.path.relpath(p, root)
                  for p in glob.glob(os.path.join(root, '**', '*.urdf'), recursive=True))


def pinocchio_loads(xml):
    try:
        return pin.buildModelFromXML(xml)
    except Exception:
        return None


def rel_err(ours, ref):
    return np.max(np.abs(ours - ref)) / max(np.max(np.abs(ref)), 1e-300)


@pytest.fixture(scope='module')
def files():
    out = erd_files()
    assert len(out) >= 60, 'example-robot-data ships fewer URDFs than expected'
    return out


def test_every_description_loads_or_is_refused_for_a_named_reason(files):
    loaded, refused, pin_fails = [], [], []
    for rel in files:
        with open(os.path.join(erd_root(), rel), encoding='utf-8') as f:
            xml = f.read()
        pm = pinocchio_loads(xml)
        if pm is None:
            pin_fails.append(rel)
            continue
        try:
            model = RobotModel.from_urdf(xml)
        except ValueError as e:
            assert rel in REFUSED, f'{rel} refused: {e}'
            assert REFUSED[rel] in str(e), f'{rel}: {e}'
            refused.append(rel)
            continue
        assert rel not in REFUSED, f'{rel} loads but is expected to be refused'
        # the standard joint order: Pinocchio's (urdfdom's depth-first, child joints by name)
        assert list(model.joint_names) == list(pm.names)[1:], rel
        loaded.append(rel)
    print(f'{len(loaded)} loaded, {len(refused)} refused {refused}, Pinocchio cannot load '
          f'{pin_fails}')
    assert len(refused) == len(REFUSED)
    assert len(loaded) >= 60


def robot_ids():
    try:
        return erd_files()
    except BaseException:           # pytest.skip inside erd_root at collection
        return []


@pytest.mark.parametrize('rel', [r for r in robot_ids() if r not in REFUSED])
def test_every_algorithm_matches_pinocchio(rel):
    with open(os.path.join(erd_root(), rel), encoding='utf-8') as f:
        xml = f.read()
    if pinocchio_loads(xml) is None:
        pytest.skip('Pinocchio cannot load it either')
    model = RobotModel.from_urdf(xml)
    oracle = Oracle(xml, model)
    rng = np.random.default_rng(len(rel))
    for _ in range(2):
        q, qd, qdd = rng.normal(size=(3, model.n))
        assert rel_err(rnea(model, q, qd, qdd), oracle.rnea(q, qd, qdd)) <= RTOL, 'rnea'
        assert rel_err(gravity_torques(model, q), oracle.gravity(q)) <= RTOL, 'gravity'
        assert rel_err(bias_torques(model, q, qd), oracle.bias(q, qd)) <= RTOL, 'bias'
        M = crba(model, q)
        assert rel_err(M, oracle.crba(q)) <= RTOL, 'crba'
        # relative to the size C has in general (|M| |qd|): iris's rotors spin about their own
        # symmetry axes, so its C is 1e-20 of rounding on both sides
        C, C_ref = coriolis_matrix(model, q, qd), oracle.coriolis(q, qd)
        scale = max(np.abs(C_ref).max(), np.abs(M).max() * np.abs(qd).max())
        assert np.abs(C - C_ref).max() <= RTOL * scale, 'C'
        assert rel_err(momentum(model, q, qd), M @ qd) <= RTOL, 'momentum'
        # the observer's O(n) terms: p = M qd and beta = g - C^T qd with Pinocchio's C and g
        p, beta = momentum_and_beta(model, q, qd)
        assert rel_err(p, M @ qd) <= RTOL, 'momentum_and_beta p'
        beta_ref = oracle.gravity(q) - C_ref.T @ qd
        assert np.abs(beta - beta_ref).max() <= RTOL * max(np.abs(beta_ref).max(), scale), 'beta'
        frames_match_pinocchio(model, oracle, q, qd)
        tau = rng.normal(size=model.n)
        ref = oracle.aba(q, qd, tau)
        if model.massless_joints:
            # a singular mass matrix: Pinocchio returns NaN, we refuse naming the joints
            assert not np.all(np.isfinite(ref))
            with pytest.raises(ValueError, match='singular') as e:
                aba(model, q, qd, tau)
            assert model.massless_joints[0] in str(e.value)
            continue
        # a linear solve loses up to cond(M) * eps: icub's arms have cond(M) ~ 3e6
        tol = max(RTOL, 1e-14 * np.linalg.cond(M))
        assert rel_err(aba(model, q, qd, tau), ref) <= tol, 'aba'


def test_negligibly_indefinite_inertias_are_projected_with_a_warning():
    with open(os.path.join(erd_root(), 'tiago_description/robots/tiago.urdf')) as f:
        model = RobotModel.from_urdf(f.read())
    warned = [w for w in model.warnings if 'not positive semi-definite' in w]
    assert any('base_antenna_left_link' in w and '-3.53e-08' in w for w in warned), warned
    assert all(np.linalg.eigvalsh(model.I[i][:3, :3]).min() > -1e-12 for i in range(model.n))


def test_mimic_joints_are_independent_and_named_in_the_warnings():
    with open(os.path.join(erd_root(), 'panda_description/urdf/panda.urdf')) as f:
        model = RobotModel.from_urdf(f.read())
    assert model.mimic == {'panda_finger_joint2': ('panda_finger_joint1', 1.0, 0.0)}
    assert 'panda_finger_joint2' in model.joint_names
    assert any('mimics "panda_finger_joint1"' in w for w in model.warnings)


# ---- a description as a ros2_control stack publishes it -----------------------------------------

STACK_EXTRAS = '''
  <material name="textured"><color rgba="1 1 1 1"/><texture/></material>
  <material name="textured_file"><texture filename="package://x/wood.png"/></material>
  <gazebo><plugin filename="libgz_ros2_control-system.so"
    name="gz_ros2_control::GazeboSimROS2ControlPlugin">
    <parameters>$(find my_robot)/config/controllers.yaml</parameters></plugin></gazebo>
  <gazebo reference="link1"><material>Gazebo/Orange</material>
    <sensor name="imu" type="imu"/></gazebo>
  <transmission name="trans1"><type>transmission_interface/SimpleTransmission</type>
    <joint name="joint1">
      <hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface></joint>
    <actuator name="motor1"><mechanicalReduction>1</mechanicalReduction></actuator></transmission>
  <transmission name="trans2"><plugin>transmission_interface/SimpleTransmission</plugin>
    <actuator name="motor2" role="actuator1"/><joint name="joint2" role="joint1">
    <mechanical_reduction>1.0</mechanical_reduction></joint></transmission>
  <sensor name="camera" type="camera" update_rate="30"><parent link="link2"/><camera/></sensor>
  <ros2_control name="arm" type="system">
    <hardware><plugin>mock_components/GenericSystem</plugin></hardware>
    <joint name="joint2">
      <command_interface name="effort"><param name="min">-200</param></command_interface>
      <state_interface name="position"><param name="initial_value">-0.5</param></state_interface>
      <state_interface name="velocity"/>
    </joint>
    <joint name="joint1">
      <command_interface name="position"/>
      <command_interface name="effort"/>
      <state_interface name="position"><param name="initial_value">1.25</param></state_interface>
    </joint>
  </ros2_control>
  <ros2_control name="tool" type="actuator">
    <hardware><plugin>mock_components/GenericSystem</plugin></hardware>
    <joint name="joint1"><command_interface name="velocity"/></joint>
  </ros2_control>
'''


def stack_description():
    """
    Return the shipped 2R arm as a ros2_control stack's xacro output would look.

    Plus visuals with textured materials inside the links.
    """
    with open(example_urdf('planar_2r'), encoding='utf-8') as f:
        plain = f.read()
    plain = re.sub(r'<ros2_control.*?</ros2_control>', '', plain, flags=re.S)
    visual = ('<visual><geometry><box size="1 0.1 0.1"/></geometry><material name="m">'
              '<texture filename="package://x/metal.png"/></material></visual>'
              '<collision><geometry><cylinder radius="0.05" length="1"/></geometry></collision>')
    stacked = plain.replace('<link name="link1">', '<link name="link1">' + visual)
    return plain, stacked.replace('</robot>', STACK_EXTRAS + '</robot>')


def test_a_ros2_control_stack_description_gives_the_same_model():
    plain, stacked = stack_description()
    a, b = RobotModel.from_urdf(plain), RobotModel.from_urdf(stacked)
    assert a.joint_names == b.joint_names == ('joint1', 'joint2')
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, qd, qdd = rng.normal(size=(3, 2))
        np.testing.assert_array_equal(rnea(a, q, qd, qdd), rnea(b, q, qd, qdd))
    np.testing.assert_array_equal(a.effort_limits, b.effort_limits)
    # what the ros2_control blocks say: effort joints in document order, initial values
    rc = b.ros2_control
    assert rc.effort_joints == ('joint2', 'joint1')
    assert rc.joints == ('joint2', 'joint1')
    assert rc.initial_positions == {'joint2': -0.5, 'joint1': 1.25}


@pytest.mark.parametrize('bad, match', [
    ('<mass value="heavy"/>', 'malformed URDF'),
    ('<origin xyz="0 0"/>', 'malformed URDF'),
])
def test_malformed_elements_dynamics_reads_still_raise(bad, match):
    _, stacked = stack_description()
    broken = stacked.replace('<mass value="5.0"/>', bad, 1)
    with pytest.raises(ValueError, match=match):
        RobotModel.from_urdf(broken)


def frames_match_pinocchio(model, oracle, q, qd):
    """Every link frame, every reference: placement, Jacobian, classical acceleration."""
    pm, pd = oracle.pm, oracle.pd
    pq, pv = oracle.q(q), oracle.v(qd)
    pin.forwardKinematics(pm, pd, pq, pv, np.zeros(pm.nv))
    pin.updateFramePlacements(pm, pd)
    pin.computeJointJacobians(pm, pd, pq)
    assert set(model.frames) == {f.name for f in pm.frames if f.type == pin.BODY}
    for frame in model.frames:
        fid = pm.getFrameId(frame, pin.BODY)
        T = pd.oMf[fid].homogeneous
        assert np.abs(frame_placement(model, q, frame) - T).max() <= 1e-12 * max(
            1.0, np.abs(T).max()), f'placement of {frame}'
        for name, ref in (('world', pin.WORLD), ('local', pin.LOCAL),
                          ('local_world_aligned', pin.LOCAL_WORLD_ALIGNED)):
            J = pin.getFrameJacobian(pm, pd, fid, ref)[:, oracle.idx_v]
            assert np.abs(frame_jacobian(model, q, frame, name) - J).max() <= 1e-12 * max(
                1.0, np.abs(J).max()), f'{name} Jacobian of {frame}'
            a = pin.getFrameClassicalAcceleration(pm, pd, fid, ref).vector
            assert np.abs(frame_bias_acceleration(model, q, qd, frame, name) - a).max() <= \
                1e-12 * max(1.0, np.abs(a).max()), f'{name} bias acceleration of {frame}'
