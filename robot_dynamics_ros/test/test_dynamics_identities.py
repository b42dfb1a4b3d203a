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

"""Identities every correct implementation satisfies, on real robots and random states."""
import numpy as np
import pytest

from robot_dynamics_ros.dynamics import (RobotModel, aba, bias_torques, coriolis_matrix, crba,
                                         gravity_torques, momentum, rnea)

from conftest import robot_urdf
from pinocchio_oracle import Oracle

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

ROBOTS = ['ur5', 'panda', 'baxter', 'allegro', 'kinova', 'solo12']


@pytest.fixture(scope='module', params=ROBOTS)
def robot(request):
    xml = robot_urdf(request.param)
    return request.param, xml, RobotModel.from_urdf(xml)


def states(model, k=5, seed=1):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-np.pi, np.pi, (k, model.n)), rng.normal(size=(k, model.n)),
            rng.normal(size=(k, model.n)))


def test_crba_equals_rnea_columns(robot):
    """M[:, i] = rnea(q, 0, e_i) - g(q) (the notes' 'i-th column of the inertia matrix')."""
    _, _, m = robot
    for q in states(m)[0]:
        g = gravity_torques(m, q)
        cols = np.stack([rnea(m, q, np.zeros(m.n), e) - g for e in np.eye(m.n)], axis=1)
        np.testing.assert_allclose(crba(m, q), cols, rtol=1e-10, atol=1e-10)
        M = crba(m, q)
        np.testing.assert_array_equal(M, M.T)
        assert np.linalg.eigvalsh(M).min() > 0


def test_aba_inverts_rnea(robot):
    _, _, m = robot
    Q, QD, QDD = states(m)
    for q, qd, qdd in zip(Q, QD, QDD):
        tau = rnea(m, q, qd, qdd)
        np.testing.assert_allclose(aba(m, q, qd, tau), qdd, rtol=1e-8, atol=1e-8)
        # and the other way round
        np.testing.assert_allclose(rnea(m, q, qd, aba(m, q, qd, 10 * qdd)), 10 * qdd,
                                   rtol=1e-8, atol=1e-8)


def test_handc_gives_crba_and_the_rnea_bias_with_external_wrenches(robot):
    """The simulator's HandC: H = crba(q), C = rnea(q, qd, 0, f_ext), so tau = H qdd + C."""
    from robot_dynamics_ros.dynamics.kernels import HandC, rnea_one
    _, _, m = robot
    rng = np.random.default_rng(7)

    def id_(q, qd, qdd, f_ext):         # the RNEA kernel with body wrenches (n, 6)
        tau = np.empty(m.n)
        rnea_one(m._data, q, qd, qdd, f_ext, tau)
        return tau
    for q, qd, qdd in zip(*states(m)):
        f_ext = rng.normal(size=(m.n, 6))
        H, C = np.zeros((m.n, m.n)), np.zeros(m.n)
        HandC(m._model, m._ws, q, qd, f_ext, H, C)
        np.testing.assert_allclose(H, crba(m, q), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(C, id_(q, qd, np.zeros(m.n), f_ext), rtol=1e-12, atol=1e-12)
        assert np.abs(C - id_(q, qd, np.zeros(m.n), 0 * f_ext)).max() > 1e-3    # f_ext counts
        np.testing.assert_allclose(H @ qdd + C, id_(q, qd, qdd, f_ext), rtol=1e-9, atol=1e-9)


def test_rnea_without_acceleration_is_bias(robot):
    _, _, m = robot
    Q, QD, _ = states(m)
    for q, qd in zip(Q, QD):
        np.testing.assert_allclose(rnea(m, q, qd, np.zeros(m.n)), bias_torques(m, q, qd),
                                   rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(bias_torques(m, q, np.zeros(m.n)), gravity_torques(m, q),
                                   rtol=1e-13, atol=1e-12)


def test_external_wrench_is_minus_jacobian_transpose(robot):
    """rnea(..., f_ext={link: w}) = rnea(...) - J(link)^T w, J in the link frame."""
    name, xml, m = robot
    oracle = Oracle(xml, m)
    rng = np.random.default_rng(5)
    link = [lk for lk in m.link_names if m.link_frame(lk)[0] == m.n - 1][-1]
    for q, qd, qdd in zip(*states(m, 3)):
        w = rng.normal(size=6) * 10
        J = oracle.jacobian_local(q, link)
        np.testing.assert_allclose(rnea(m, q, qd, qdd, f_ext={link: w}),
                                   rnea(m, q, qd, qdd) - J.T @ w, rtol=1e-9, atol=1e-9)
        # the same wrench on the fixed base moves nothing
        np.testing.assert_allclose(rnea(m, q, qd, qdd, f_ext={m.root_link: w}),
                                   rnea(m, q, qd, qdd), rtol=0, atol=0)


def test_energy_rate_equals_power(robot):
    """
    d/dt (1/2 qd^T M qd + U) = qd^T tau along a motion of the free dynamics.

    Checked as qd^T (M qdd + c) = 1/2 qd^T Mdot qd, i.e. the skew-symmetry of Mdot - 2C along qd.
    """
    _, _, m = robot
    Q, QD, _ = states(m, 3, seed=9)
    h = 1e-6
    for q, qd in zip(Q, QD):
        Mdot = (crba(m, q + h * qd) - crba(m, q - h * qd)) / (2 * h)
        c = bias_torques(m, q, qd) - gravity_torques(m, q)
        assert qd @ c == pytest.approx(0.5 * qd @ Mdot @ qd, rel=1e-6, abs=1e-6)


def test_coriolis_matrix_factorizes_c_and_makes_mdot_minus_2c_skew(robot):
    """
    C qd = c (RNEA's bias minus gravity), and dM/dt - 2C is skew-symmetric.

    dM/dt from a central difference of CRBA along qd: independent of how C is computed.
    """
    _, _, m = robot
    Q, QD, _ = states(m)
    h = 1e-6
    for q, qd in zip(Q, QD):
        C = coriolis_matrix(m, q, qd)
        c = bias_torques(m, q, qd) - gravity_torques(m, q)
        np.testing.assert_allclose(C @ qd, c, rtol=1e-10, atol=1e-10)
        Mdot = (crba(m, q + h * qd) - crba(m, q - h * qd)) / (2 * h)
        S = Mdot - 2 * C
        scale = max(1.0, np.abs(Mdot).max())
        assert np.abs(S + S.T).max() <= 1e-6 * scale
        # linear in qd for fixed q: C(q, a qd) = a C(q, qd)
        np.testing.assert_allclose(coriolis_matrix(m, q, 3 * qd), 3 * C, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(momentum(m, q, qd), crba(m, q) @ qd, rtol=1e-10, atol=1e-10)
