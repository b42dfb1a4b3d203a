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
The joint torque regressor: Y pi equals RNEA, and Pinocchio's computeJointTorqueRegressor.

On every arm of conftest.ROBOTS (example-robot-data), random states; relative error (infinity
norm of the difference over that of the reference) at most 1e-12.
"""
import numpy as np
import pytest

from robot_dynamics_ros.dynamics import RobotModel, rnea
from robot_dynamics_ros.dynamics.regressor import (inertial_parameters, parameter_names,
                                                   parameters, regressor, with_parameters)

from conftest import ROBOTS, robot_urdf
from pinocchio_oracle import Oracle
from test_dynamics_pinocchio import random_states

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

RTOL = 1e-12


def rel(ours, ref):
    return np.max(np.abs(ours - ref)) / max(np.max(np.abs(ref)), 1e-300)


@pytest.fixture(scope='module', params=list(ROBOTS))
def robot(request):
    xml = robot_urdf(request.param)
    model = RobotModel.from_urdf(xml)
    return request.param, model, Oracle(xml, model)


def test_inertial_columns_equal_pinocchio(robot):
    name, model, oracle = robot
    rng = np.random.default_rng(len(name))
    Q, QD, QDD = random_states(model, rng, 6)
    Y = regressor(model, Q, QD, QDD)
    assert Y.shape == (6, model.n, 10 * model.n)
    for k in range(6):
        ref = oracle.regressor(Q[k], QD[k], QDD[k])
        assert rel(Y[k], ref) <= RTOL, (name, rel(Y[k], ref))
        assert np.array_equal(regressor(model, Q[k], QD[k], QDD[k]), Y[k])    # one = batch


def test_times_the_parameters_is_rnea_with_friction_armature_and_offset(robot):
    name, model, _ = robot
    rng = np.random.default_rng(7 + len(name))
    n = model.n
    model = model._replace(damping=rng.uniform(0, 2, n), friction=rng.uniform(0, 3, n),
                           armature=rng.uniform(0, 0.5, n), torque_offset=rng.uniform(-1, 1, n))
    Q, QD, QDD = random_states(model, rng, 5)
    eps = 0.05
    Y = regressor(model, Q, QD, QDD, eps)
    assert Y.shape == (5, n, 14 * n)
    tau = rnea(model, Q, QD, QDD) + model.damping * QD + model.friction * np.tanh(QD / eps) \
        + model.torque_offset
    assert rel(Y @ parameters(model), tau) <= RTOL
    # without friction columns, the inertial part alone is RNEA of the model without armature
    bare = model._replace(armature=np.zeros(n))
    assert rel(regressor(model, Q, QD, QDD) @ inertial_parameters(model),
               rnea(bare, Q, QD, QDD)) <= RTOL


def test_parameters_round_trip_and_names():
    model = RobotModel.from_urdf(robot_urdf('panda'))
    rng = np.random.default_rng(3)
    pi = parameters(model)
    back = with_parameters(model, pi)
    np.testing.assert_allclose(back.I, model.I, rtol=0, atol=1e-15)
    pi2 = pi.copy()
    pi2[10 * model.n:] = rng.uniform(0, 1, 4 * model.n)
    pi2[13 * model.n:] -= 0.5                   # offsets of either sign
    other = with_parameters(model, pi2)
    np.testing.assert_array_equal(parameters(other)[10 * model.n:], pi2[10 * model.n:])
    names = parameter_names(model)
    assert len(names) == 14 * model.n == len(set(names))
    assert names[13 * model.n] == 'panda_joint1.offset'
    assert names[:2] == ['panda_link1.m', 'panda_link1.mc_x']
    assert names[10 * model.n] == 'panda_joint1.damping'


def test_preallocated_output_is_filled_and_bad_shapes_are_refused():
    model = RobotModel.from_urdf(robot_urdf('ur5'))
    q = np.full((3, model.n), 0.3)
    out = np.full((3, model.n, 14 * model.n), np.nan)
    got = regressor(model, q, q, q, 0.01, out=out)
    assert got is out and np.all(np.isfinite(out))
    with pytest.raises(ValueError, match='out must be'):
        regressor(model, q, q, q, 0.01, out=np.empty((3, model.n, 10 * model.n)))
    with pytest.raises(ValueError, match='friction_velocity_epsilon'):
        regressor(model, q, q, q, 0.0)
    with pytest.raises(ValueError, match='qd has shape'):
        regressor(model, q, q[:2], q)
