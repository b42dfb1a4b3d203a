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
Every algorithm against Pinocchio on real robots from example-robot-data.

Random states; joints matched by name; relative error (infinity norm of the difference over the
infinity norm of Pinocchio's result) at most 1e-9 for each function, single states and batches.
"""
import numpy as np
import pytest

from robot_dynamics_ros.dynamics import (RobotModel, aba, bias_torques, crba, gravity_torques,
                                         rnea)

from conftest import ROBOTS, robot_urdf
from pinocchio_oracle import Oracle

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

RTOL = 1e-9
N_STATES = 8


def assert_rel(ours, ref, what):
    ours, ref = np.asarray(ours), np.asarray(ref)
    assert ours.shape == ref.shape, (what, ours.shape, ref.shape)
    err = np.max(np.abs(ours - ref)) / max(np.max(np.abs(ref)), 1e-300)
    assert err <= RTOL, f'{what}: relative error {err:.3e} > {RTOL:g}'


def random_states(model, rng, k):
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    lo = np.where(np.isfinite(lo), lo, -np.pi)
    hi = np.where(np.isfinite(hi), hi, np.pi)
    q = rng.uniform(lo, hi, size=(k, model.n))
    return q, rng.normal(size=(k, model.n)), rng.normal(size=(k, model.n)) * 3


@pytest.fixture(scope='module', params=[r for r in ROBOTS])
def robot(request):
    xml = robot_urdf(request.param)
    model = RobotModel.from_urdf(xml)
    return request.param, model, Oracle(xml, model)


def moving_leaf_link(model):
    """Return a link carried by the last body (e.g. an end effector), for external wrenches."""
    last = model.n - 1
    return [link for link in model.link_names if model.link_frame(link)[0] == last][-1]


def test_all_functions_match_pinocchio(robot):
    name, model, pin_ = robot
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    Q, QD, QDD = random_states(model, rng, N_STATES)
    link = moving_leaf_link(model)
    for q, qd, qdd in zip(Q, QD, QDD):
        assert_rel(rnea(model, q, qd, qdd), pin_.rnea(q, qd, qdd), f'{name} rnea')
        assert_rel(gravity_torques(model, q), pin_.gravity(q), f'{name} gravity')
        assert_rel(bias_torques(model, q, qd), pin_.bias(q, qd), f'{name} bias')
        assert_rel(crba(model, q), pin_.crba(q), f'{name} crba')
        tau = rng.normal(size=model.n) * 10
        assert_rel(aba(model, q, qd, tau), pin_.aba(q, qd, tau), f'{name} aba')
        f = {link: rng.normal(size=6) * 5}
        assert_rel(rnea(model, q, qd, qdd, f_ext=f), pin_.rnea(q, qd, qdd, f),
                   f'{name} rnea f_ext')
        assert_rel(aba(model, q, qd, tau, f_ext=f), pin_.aba(q, qd, tau, f), f'{name} aba f_ext')


def same(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


def test_batches_match_single_states(robot):
    name, model, _ = robot
    rng = np.random.default_rng(7)
    Q, QD, QDD = random_states(model, rng, 5)
    TAU = rng.normal(size=Q.shape)
    f = {moving_leaf_link(model): rng.normal(size=(5, 6))}
    tau_b = rnea(model, Q, QD, QDD, f_ext=f)
    assert tau_b.shape == Q.shape
    H_b = crba(model, Q)
    assert H_b.shape == (5, model.n, model.n)
    for k in range(5):
        fk = {lk: w[k] for lk, w in f.items()}
        same(tau_b[k], rnea(model, Q[k], QD[k], QDD[k], f_ext=fk))
        same(gravity_torques(model, Q)[k], gravity_torques(model, Q[k]))
        same(bias_torques(model, Q, QD)[k], bias_torques(model, Q[k], QD[k]))
        same(H_b[k], crba(model, Q[k]))
        same(aba(model, Q, QD, TAU)[k], aba(model, Q[k], QD[k], TAU[k]))
        same(aba(model, Q, QD, TAU, f_ext=f)[k], aba(model, Q[k], QD[k], TAU[k], f_ext=fk))


def test_model_structure_matches_pinocchio(robot):
    name, model, pin_ = robot
    # parents: Pinocchio's parent joint of each joint, by name
    for i, jn in enumerate(model.joint_names):
        pj = pin_.pm.parents[pin_.pm.getJointId(jn)]
        expected = pin_.pm.names[pj] if pj > 0 else None
        got = model.joint_names[model.parent[i]] if model.parent[i] >= 0 else None
        assert got == expected, (name, jn)
        # parents come before children
        assert model.parent[i] < i
    total_pin = sum(pin_.pm.inertias[j].mass for j in range(1, pin_.pm.njoints))
    assert model.total_mass == pytest.approx(total_pin, rel=1e-12)


def test_changed_gravity_matches_pinocchio(robot):
    name, model, _ = robot
    q = random_states(model, np.random.default_rng(3), 1)[0][0]
    before = gravity_torques(model, q)
    m = model.copy()
    m.gravity = [1.0, -2.0, -3.0]
    pin_ = Oracle(robot_urdf(name), m)
    assert_rel(gravity_torques(m, q), pin_.gravity(q), f'{name} gravity (1, -2, -3)')
    assert model.gravity.tolist() == [0.0, 0.0, -9.81]
    assert np.array_equal(gravity_torques(model, q), before)      # the copy has its own buffer


@pytest.mark.parametrize('name', ['panda', 'ur5', 'talos_left_arm'])
def test_armature_matches_pinocchio(name):
    """Rotor inertia on the mass matrix diagonal: rnea, crba and aba as Pinocchio's armature."""
    xml = robot_urdf(name)
    rng = np.random.default_rng(7)
    model = RobotModel.from_urdf(xml)
    armature = rng.uniform(0.01, 0.5, model.n)
    with_rotors = model.with_armature(armature)
    oracle = Oracle(xml, with_rotors)
    oracle.pm.armature = oracle.v(armature)
    oracle.pd = oracle.pm.createData()
    Q, QD, QDD = random_states(model, rng, 5)
    for q, qd, qdd in zip(Q, QD, QDD):
        assert_rel(rnea(with_rotors, q, qd, qdd), oracle.rnea(q, qd, qdd), f'{name} rnea')
        assert_rel(crba(with_rotors, q), oracle.crba(q), f'{name} crba')
        tau = rng.normal(size=model.n) * 10
        assert_rel(aba(with_rotors, q, qd, tau), oracle.aba(q, qd, tau), f'{name} aba')
        # gravity and bias do not see it; the difference to the plain model is diag(a) qdd
        assert_rel(gravity_torques(with_rotors, q), gravity_torques(model, q), 'gravity')
        assert_rel(rnea(with_rotors, q, qd, qdd) - rnea(model, q, qd, qdd), armature * qdd,
                   'armature torque')
    with pytest.raises(ValueError, match='armature'):
        model.with_armature([-1.0] * model.n)
    with pytest.raises(ValueError, match='armature'):
        model.with_armature([0.1, 0.2])
