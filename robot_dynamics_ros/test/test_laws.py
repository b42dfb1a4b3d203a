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
The joint laws and the collision reactions alone (control/laws.py), on real arms.

Each against Pinocchio's own terms of the same URDF; computed torque also by what it is for:
through the arm's forward dynamics (ABA) its torque gives qdd_d + kp e + kd e' exactly, the
closed loop e'' + kd e' + kp e = 0; the reactions: ``hold`` brings the arm to rest at the
collision's pose, ``float`` leaves it no acceleration but what pushes it. The controller uses the
laws by name: every mode the node takes has one, and every reaction but ``none``.
"""
import numpy as np
import pytest

from robot_dynamics_ros.control import JOINT_MODES, MODES, REACTIONS, TASK_MODES
from robot_dynamics_ros.control.laws import (JOINT_LAWS, REACTION_LAWS, computed_torque,
                                             feedforward, float_reaction, gravity, hold_reaction)
from robot_dynamics_ros.dynamics import RobotModel, aba

from conftest import robot_urdf
from pinocchio_oracle import Oracle

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

ARMS = ('ur5', 'panda', 'xarm7', 'kinova', 'z1', 'talos_left_arm')
TOL = 1e-9          # N m, relative to the torques' scale (the dynamics match Pinocchio to 1e-15)


@pytest.fixture(scope='module', params=ARMS)
def arm(request):
    xml = robot_urdf(request.param)
    model = RobotModel.from_urdf(xml)
    return request.param, model, Oracle(xml, model)


def states(model, seed, count=4):
    rng = np.random.default_rng(seed)
    lo, hi = model.position_limits.T
    lo, hi = np.where(np.isfinite(lo), lo, -np.pi), np.where(np.isfinite(hi), hi, np.pi)
    for _ in range(count):
        q = rng.uniform(lo, hi)
        qd, qdd = rng.uniform(-1.0, 1.0, (2, model.n))
        des = (rng.uniform(lo, hi), rng.uniform(-1.0, 1.0, model.n),
               rng.uniform(-2.0, 2.0, model.n))
        kp, kd = rng.uniform(10.0, 400.0, model.n), rng.uniform(2.0, 40.0, model.n)
        yield q, qd, qdd, des, kp, kd


def close(a, b):
    return np.allclose(a, b, rtol=0.0, atol=TOL * max(1.0, np.abs(b).max()))


def test_each_law_is_its_textbook_formula(arm):
    name, model, pin_ = arm
    for q, qd, _, des, kp, kd in states(model, 1):
        g = pin_.gravity(q)
        assert close(gravity(model, q, qd, des, kp, kd), g), name
        assert close(feedforward(model, q, qd, None, kp, kd), g), name
        assert close(feedforward(model, q, qd, des, kp, kd), pin_.rnea(*des)), name
        q_d, qd_d, qdd_d = des
        a = qdd_d + kp * (q_d - q) + kd * (qd_d - qd)
        # M(q) a + c(q, qd) + g(q), the notes' computed torque, from Pinocchio's M and bias
        expected = pin_.crba(q) @ a + pin_.bias(q, qd)
        assert close(computed_torque(model, q, qd, des, kp, kd), expected), name
        assert close(float_reaction(model, q, qd, q_d, kp, kd), g), name
        expected = pin_.crba(q) @ (kp * (q_d - q) - kd * qd) + pin_.bias(q, qd)
        assert close(hold_reaction(model, q, qd, q_d, kp, kd), expected), name


def test_the_laws_do_what_they_are_for_through_the_arms_dynamics(arm):
    name, model, _ = arm
    for q, qd, _, des, kp, kd in states(model, 2):
        q_d, qd_d, qdd_d = des
        # computed torque: the arm accelerates as the error's second-order law asks
        qdd = aba(model, q, qd, computed_torque(model, q, qd, des, kp, kd))
        assert np.allclose(qdd, qdd_d + kp * (q_d - q) + kd * (qd_d - qd), rtol=1e-9,
                           atol=1e-8), name
        # hold: towards the collision's pose, damped; at it and at rest, no acceleration
        qdd = aba(model, q, qd, hold_reaction(model, q, qd, q_d, kp, kd))
        assert np.allclose(qdd, kp * (q_d - q) - kd * qd, rtol=1e-9, atol=1e-8), name
        rest = aba(model, q_d, np.zeros(model.n),
                   hold_reaction(model, q_d, np.zeros(model.n), q_d, kp, kd))
        assert np.abs(rest).max() < 1e-8, name
        # gravity and float: the weight held, so from rest nothing moves; feedforward along
        # the desired state: its acceleration
        for law in (gravity, float_reaction):
            qdd = aba(model, q, np.zeros(model.n), law(model, q, qd, des, kp, kd))
            assert np.abs(qdd).max() < 1e-8, (name, law.__name__)
        qdd = aba(model, q_d, qd_d, feedforward(model, q, qd, des, kp, kd))
        assert np.allclose(qdd, qdd_d, rtol=1e-9, atol=1e-8), name


def test_every_mode_and_reaction_has_its_law():
    assert JOINT_MODES == tuple(JOINT_LAWS)
    assert MODES == JOINT_MODES + TASK_MODES
    assert set(REACTIONS) == {'none'} | set(REACTION_LAWS)
