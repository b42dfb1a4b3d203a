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
The static payload fit (control.payload_estimation) against the model's own gravity torques.

A payload added with RobotModel.with_payload changes g(q) by exactly A(q) [m; m c]; at rest the
observer's estimate is g_model - g_true, so the fit of those differences over the planned poses
must give the payload back.
"""
import numpy as np
import pytest

from robot_dynamics_ros.control import payload_estimation as pe
from robot_dynamics_ros.dynamics import RobotModel, gravity_torques
from robot_dynamics_ros.dynamics.model import inertia_matrix, inertia_six

from conftest import robot_urdf

ARMS = {'ur5': ('tool0', [0.0, -1.2, 1.0, -1.4, -1.57, 0.0]),
        'panda': ('panda_hand', [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02])}


@pytest.mark.parametrize('arm', sorted(ARMS))
def test_the_static_regressor_is_the_payloads_gravity(arm):
    model = RobotModel.from_urdf(robot_urdf(arm))
    link, q0 = ARMS[arm]
    rng = np.random.default_rng(0)
    Q = np.array(q0) + rng.normal(scale=0.5, size=(5, model.n))
    m, c = 1.5, np.array([0.02, -0.03, 0.07])
    loaded = model.with_payload(link, m, c, (0.01, 0.0, 0.0, 0.01, 0.0, 0.01))
    A = pe.static_regressor(model, link, Q)
    np.testing.assert_allclose(A @ np.r_[m, m * c],
                               gravity_torques(loaded, Q) - gravity_torques(model, Q),
                               atol=1e-12)


@pytest.mark.parametrize('arm', sorted(ARMS))
def test_the_planned_poses_give_the_payload_back(arm):
    model = RobotModel.from_urdf(robot_urdf(arm))
    link, q0 = ARMS[arm]
    commanded = list(range(min(model.n, 7)))
    Q = pe.poses(model, q0, link, commanded, 0.5)
    assert len(Q) >= 4 and np.allclose(Q[0], q0)
    lo, hi = model.position_limits.T
    assert np.all(Q >= lo) and np.all(Q <= hi)
    m, c = 1.5, np.array([0.0, 0.05, 0.06])
    loaded = model.with_payload(link, m, c)
    r = gravity_torques(model, Q) - gravity_torques(loaded, Q)      # the observer at rest
    got = pe.fit(model, link, Q, r, commanded)
    assert abs(got.mass - m) < 1e-9 and np.allclose(got.com, c, atol=1e-9), got
    assert got.residual < 1e-9 and got.poses == len(Q)
    # noise of 0.01 N m on the averaged estimates (over DDS the fit's residual was 0.001 N m):
    # still within 3 % and 5 mm
    rng = np.random.default_rng(1)
    noisy = pe.fit(model, link, Q, r + rng.normal(scale=0.01, size=r.shape), commanded)
    assert abs(noisy.mass - m) < 0.03 * m and np.abs(noisy.com - c).max() < 5e-3, noisy
    # a model with 2.5 kg configured where the arm carries 1.5 kg: -1 kg at the same place
    heavy = model.with_payload(link, 2.5, c)
    less = pe.fit(heavy, link, Q, gravity_torques(heavy, Q) - gravity_torques(loaded, Q),
                  commanded)
    assert abs(less.mass + 1.0) < 1e-9 and np.allclose(less.com, c, atol=1e-9), less
    np.testing.assert_allclose(less.first_moment, -1.0 * c, atol=1e-9)
    # nothing carried: no mass, and no centre of mass made up from rounding (first moment / ~0)
    none = pe.fit(model, link, Q, np.zeros_like(r) + 1e-12, commanded)
    assert abs(none.mass) < pe.MASS_RESOLUTION and np.all(none.com == 0.0), none


def test_poses_that_cannot_see_the_payload_are_refused():
    model = RobotModel.from_urdf(robot_urdf('ur5'))
    link, q0 = ARMS['ur5']
    # only the base joint commanded: its axis is vertical, gravity never turns in the tool frame
    with pytest.raises(ValueError, match='determine a payload'):
        pe.poses(model, q0, link, [0], 0.5)
    with pytest.raises(ValueError, match='no commanded joint moves'):
        pe.poses(model, q0, 'base_link', [0, 1], 0.5)
    # a start pose near the limits: the candidates beyond them are not taken
    lo, hi = model.position_limits.T
    near = np.array(q0)
    near[5] = hi[5] - 0.2
    Q = pe.poses(model, near, link, list(range(6)), 0.5)
    assert np.all(Q[:, 5] <= hi[5] - pe.MARGIN + 1e-12)


def test_six_inertia_numbers_and_the_matrix_are_one_order():
    six = np.array([0.01, -0.002, 0.003, 0.02, -0.004, 0.03])      # ixx ixy ixz iyy iyz izz
    I = inertia_matrix(six)  # noqa: E741
    np.testing.assert_array_equal(I, I.T)
    assert I[0, 1] == -0.002 and I[0, 2] == 0.003 and I[1, 2] == -0.004
    np.testing.assert_array_equal(inertia_six(I), six)
