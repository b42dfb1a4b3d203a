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
The simulated force/torque sensor, without ROS.

What a fixed joint transmits is what a joint put in its place would have to carry while held
still: the sensor's six components must equal RNEA's torque or force of a revolute or
prismatic joint about (along) each axis at the sensor's place, in any state, with external
wrenches on the tool and on a finger hanging from it (panda's hand); at rest it reads the
tool's weight; bad joints are refused with what the description has.
"""
import re

import numpy as np
import pytest

from robot_dynamics_ros.dynamics import RobotModel, frame_placement, rnea
from robot_dynamics_ros.simulation.ft_sensor import FTSensor

from conftest import robot_urdf

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO


def with_joint_at(xml, joint, kind, axis):
    """Return the URDF with the fixed ``joint`` made a ``kind`` joint about/along ``axis``."""
    pattern = rf'<joint name="{joint}" type="fixed">'
    assert re.search(pattern, xml)
    return re.sub(pattern, f'<joint name="{joint}" type="{kind}"><axis xyz="{axis}"/>'
                           f'<limit lower="-1" upper="1" effort="1" velocity="1"/>', xml)


@pytest.mark.parametrize('name, joint', [('panda', 'panda_hand_joint'),
                                         ('ur5', 'ee_fixed_joint')])
def test_the_sensor_reads_what_a_held_joint_in_its_place_would_carry(name, joint):
    xml = robot_urdf(name)
    model = RobotModel.from_urdf(xml)
    sensor = FTSensor(model, xml, joint)
    rng = np.random.default_rng(3)
    q, qd, qdd = (rng.uniform(-1, 1, model.n) for _ in range(3))
    q = np.clip(q, model.position_limits[:, 0], model.position_limits[:, 1])
    tool = sensor.frame
    wrenches = {tool: rng.normal(0, 5, 6)}
    if name == 'panda':
        wrenches['panda_leftfinger'] = rng.normal(0, 5, 6)      # on a body below the sensor
        wrenches['panda_link7'] = rng.normal(0, 5, 6)           # above it: not read
    got = sensor.true_wrench(q, qd, qdd, wrenches)
    expected = np.zeros(6)
    for k, (kind, axis) in enumerate([('prismatic', '1 0 0'), ('prismatic', '0 1 0'),
                                      ('prismatic', '0 0 1'), ('revolute', '1 0 0'),
                                      ('revolute', '0 1 0'), ('revolute', '0 0 1')]):
        held = RobotModel.from_urdf(with_joint_at(xml, joint, kind, axis))
        idx = [held.index(j) for j in model.joint_names]
        qh, qdh, qddh = (np.zeros(held.n) for _ in range(3))
        qh[idx], qdh[idx], qddh[idx] = q, qd, qdd
        # what the joint carries from parent to child; the sensor reads the child on the parent
        expected[k] = -rnea(held, qh, qdh, qddh, wrenches)[held.index(joint)]
    assert np.allclose(got, expected, atol=1e-9 * max(1.0, np.abs(expected).max()))
    assert np.abs(got).max() > 1.0


def test_at_rest_the_sensor_reads_the_tools_weight():
    xml = robot_urdf('panda')
    model = RobotModel.from_urdf(xml)
    sensor = FTSensor(model, xml, 'panda_hand_joint')
    q = np.array([0.3, -0.5, 0.2, -2.0, 0.4, 1.8, 0.7, 0.02, 0.02])
    w = sensor.true_wrench(q, np.zeros(model.n), np.zeros(model.n))
    T = frame_placement(model, q, sensor.frame)
    # hand 0.73 kg and two fingers 0.015 kg pull the flange down
    assert sensor.mass == pytest.approx(0.73 + 2 * 0.015)
    assert np.allclose(T[:3, :3] @ w[:3], [0, 0, -9.81 * sensor.mass], atol=1e-9)


def test_bias_and_noise_are_added_and_bad_settings_refused():
    xml = robot_urdf('ur5')
    model = RobotModel.from_urdf(xml)
    q = np.zeros(model.n)
    sensor = FTSensor(model, xml, 'ee_fixed_joint', bias=[1, 2, 3, 0.1, 0.2, 0.3],
                      noise=[0.5] * 3 + [0.01] * 3, seed=1)
    true = sensor.true_wrench(q, q, q)
    reads = np.array([sensor.read(q, q, q) for _ in range(4000)])
    assert np.allclose(reads.mean(axis=0), true + [1, 2, 3, 0.1, 0.2, 0.3], atol=0.05)
    assert np.allclose(reads.std(axis=0), [0.5] * 3 + [0.01] * 3, rtol=0.05)
    with pytest.raises(ValueError,
                       match=r'is not a joint of ur5 \(its fixed joints: .*ee_fixed_joint'):
        FTSensor(model, xml, 'tool0_joint')
    with pytest.raises(ValueError, match='is revolute: a force/torque sensor sits at a fixed'):
        FTSensor(model, xml, 'wrist_3_joint')
    with pytest.raises(ValueError, match='bias needs 6 finite values'):
        FTSensor(model, xml, 'ee_fixed_joint', bias=[1, 2])
    with pytest.raises(ValueError, match='noise must be >= 0'):
        FTSensor(model, xml, 'ee_fixed_joint', noise=[-1] * 6)
