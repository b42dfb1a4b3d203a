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
The lecture notes' 2R arm (shipped URDF) against its closed-form Lagrangian dynamics.

Uniform rods m1 = 10 kg, L1 = 1.0 m and m2 = 5 kg, L2 = 0.8 m in a vertical plane; q1 from the
horizontal, q2 relative to link 1; the quintic q1 90 -> 0 deg, q2 -180 -> 90 deg of the notes.
"""
import numpy as np
import pytest

from robot_dynamics_ros.dynamics import (RobotModel, bias_torques, crba, example_urdf,
                                         gravity_torques, rnea)
from robot_dynamics_ros.control import quintic

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

M1, M2, L1, L2, G = 10.0, 5.0, 1.0, 0.8, 9.81


def closed_form(q, qd, qdd):
    """(tau, M, c, g) of the 2R arm, from its Lagrangian."""
    lc1, lc2 = L1 / 2, L2 / 2
    I1, I2 = M1 * L1**2 / 12, M2 * L2**2 / 12
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    M = np.array([
        [I1 + I2 + M1 * lc1**2 + M2 * (L1**2 + lc2**2 + 2 * L1 * lc2 * c2),
         I2 + M2 * (lc2**2 + L1 * lc2 * c2)],
        [I2 + M2 * (lc2**2 + L1 * lc2 * c2), I2 + M2 * lc2**2]])
    hh = -M2 * L1 * lc2 * s2
    c = np.array([hh * (2 * qd[0] * qd[1] + qd[1]**2), -hh * qd[0]**2])
    g = np.array([(M1 * lc1 + M2 * L1) * G * np.cos(q[0]) + M2 * lc2 * G * np.cos(q[0] + q[1]),
                  M2 * lc2 * G * np.cos(q[0] + q[1])])
    return M @ qdd + c + g, M, c, g


@pytest.fixture(scope='module')
def arm():
    return RobotModel.from_urdf_file(example_urdf('planar_2r'))


def test_shipped_urdf_is_the_notes_arm(arm):
    assert arm.joint_names == ('joint1', 'joint2')
    assert arm.total_mass == pytest.approx(M1 + M2)


@pytest.mark.parametrize('duration', [0.5, 2.0])
def test_quintic_torques_match_closed_form(arm, duration):
    t = np.linspace(0.0, duration, 201)
    Q, QD, QDD = quintic(np.radians([90, -180]), np.radians([0, 90]), duration, t)
    tau = rnea(arm, Q, QD, QDD)
    for k in range(len(t)):
        ref, M, c, g = closed_form(Q[k], QD[k], QDD[k])
        np.testing.assert_allclose(tau[k], ref, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(crba(arm, Q[k]), M, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(gravity_torques(arm, Q[k]), g, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(bias_torques(arm, Q[k], QD[k]) - g, c, rtol=1e-9, atol=1e-9)


def test_notes_observations(arm):
    """
    What the notes point out.

    The inertial torque is zero at the start and the end (zero acceleration), and the final torque
    balances the links' weight.
    """
    Q, QD, QDD = quintic(np.radians([90, -180]), np.radians([0, 90]), 2.0, [0.0, 2.0])
    for k in (0, 1):
        inertial = rnea(arm, Q[k], QD[k], QDD[k]) - bias_torques(arm, Q[k], QD[k])
        np.testing.assert_allclose(inertial, 0.0, atol=1e-12)
    # at the end link 1 is horizontal and link 2 points straight up: joint 2 holds nothing,
    # joint 1 holds link 1's moment and link 2's weight at L1
    np.testing.assert_allclose(rnea(arm, Q[1], QD[1], QDD[1]),
                               [(M1 * L1 / 2 + M2 * L1) * G, 0.0], atol=1e-9)
