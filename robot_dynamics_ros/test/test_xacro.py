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
Descriptions as users have them: .xacro files expanded, unexpanded xacro refused.

The fixture arm (test/data/xacro_arm) is the lecture notes' 2R arm written like a vendor's
ros2_control xacro: arguments, properties, a macro from a file included through $(find), the
ros2_control block in a macro reading a YAML file. Expanded, it must be the shipped planar_2r.urdf.
"""
import os
import subprocess

import numpy as np
import pytest

from robot_dynamics_ros.dynamics import (RobotModel, example_urdf, gravity_torques,
                                         load_description, parse_xacro_args, rnea)

from conftest import executable, HANG_GUARD

pytestmark = pytest.mark.offline      # no ROS process (conftest.PART)


def states(n, count=20, seed=3):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2, 2, (count, n)) for _ in range(3)]


def test_an_expanded_xacro_is_the_arm_it_describes(xacro_arm):
    model = RobotModel.from_urdf_file(xacro_arm)
    reference = RobotModel.from_urdf_file(example_urdf('planar_2r'))
    assert model.joint_names == reference.joint_names == ('joint1', 'joint2')
    q, qd, qdd = states(2)
    np.testing.assert_allclose(rnea(model, q, qd, qdd), rnea(reference, q, qd, qdd),
                               rtol=1e-14, atol=1e-12)
    # the ros2_control block came from a macro reading a YAML file
    assert model.ros2_control.effort_joints == ('joint1', 'joint2')
    assert model.ros2_control.initial_positions == pytest.approx(
        {'joint1': np.pi / 2, 'joint2': -np.pi})


def test_xacro_arguments_change_the_arm(xacro_arm):
    model = RobotModel.from_urdf_file(xacro_arm, ['prefix:=left_', 'payload_mass:=2.5'])
    assert model.joint_names == ('left_joint1', 'left_joint2')
    assert model.ros2_control.effort_joints == ('left_joint1', 'left_joint2')
    # 2.5 kg more on the second rod, at its centre (0.4 m out): at q = 0 (both rods
    # horizontal) gravity's torque grows by m g x on each joint (g = 9.81, x from the joint)
    base = gravity_torques(RobotModel.from_urdf_file(xacro_arm), np.zeros(2))
    more = gravity_torques(model, np.zeros(2))
    np.testing.assert_allclose(np.abs(more - base), [2.5 * 9.81 * 1.4, 2.5 * 9.81 * 0.4],
                               rtol=1e-12)


def test_the_same_arguments_as_a_dict_or_pairs():
    assert parse_xacro_args(['a:=1', 'b:=x:=y', 'c:=']) == {'a': '1', 'b': 'x:=y', 'c': ''}
    assert parse_xacro_args({'a': 1}) == {'a': '1'}
    for bad in (['a=1'], [':=1'], ['prefix']):
        with pytest.raises(ValueError, match='name:=value'):
            parse_xacro_args(bad)


def test_unexpanded_xacro_is_refused_with_what_to_do(xacro_arm):
    with open(xacro_arm, encoding='utf-8') as f:
        raw = f.read()
    with pytest.raises(ValueError, match=r'xacro, not URDF.*<xacro:arg>.*expand it.*\.xacro file'):
        RobotModel.from_urdf(raw)
    # only a ${...} left (a property expression xacro was not run on)
    with open(example_urdf('planar_2r'), encoding='utf-8') as f:
        urdf = f.read().replace('value="10.0"', 'value="${m1}"')
    with pytest.raises(ValueError, match=r'"\$\{m1\}" in <mass>'):
        RobotModel.from_urdf(urdf)
    # the same URDF with a plain value loads
    RobotModel.from_urdf(urdf.replace('${m1}', '10.0'))


def test_what_cannot_be_expanded_says_why(xacro_arm, tmp_path, monkeypatch):
    with pytest.raises(ValueError, match='not a .xacro file'):
        load_description(example_urdf('planar_2r'), ['prefix:=a_'])
    with pytest.raises(ValueError, match='cannot read xacro file .*missing.urdf.xacro'):
        load_description(str(tmp_path / 'missing.urdf.xacro'))
    broken = tmp_path / 'broken.urdf.xacro'
    broken.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="b">'
                      '<xacro:include filename="$(find no_such_package)/x.xacro"/></robot>')
    with pytest.raises(ValueError, match='cannot expand xacro file .*no_such_package'):
        load_description(str(broken))
    undefined = tmp_path / 'undefined.urdf.xacro'
    undefined.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="u">'
                         '<link name="${nope}"/></robot>')
    with pytest.raises(ValueError, match='cannot expand xacro file .*nope'):
        load_description(str(undefined))


def test_the_cli_reads_a_xacro_with_its_arguments(xacro_arm):
    r = subprocess.run([executable('robot-dynamics'), 'info', '--urdf', xacro_arm,
                        '--xacro-args', 'prefix:=right_'],
                       capture_output=True, text=True, timeout=HANG_GUARD, env=os.environ.copy())
    assert r.returncode == 0, r.stderr
    assert 'right_joint1' in r.stdout and 'right_joint2' in r.stdout, r.stdout
    r = subprocess.run([executable('robot-dynamics'), 'info', '--urdf', xacro_arm,
                        '--xacro-args', 'prefix'], capture_output=True, text=True,
                       timeout=HANG_GUARD)
    assert r.returncode == 1 and 'name:=value' in r.stderr, r.stderr
