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
Frames against Pinocchio and against their own definitions (finite differences).

Every link of the 11 arms of conftest, every reference frame: placement, Jacobian and bias
acceleration equal Pinocchio's ``framesForwardKinematics``, ``computeFrameJacobian`` and
``getFrameClassicalAcceleration``; Lambda and J-bar equal their definitions computed from
Pinocchio's M and J. ``test_every_description`` does the same on all of example-robot-data.
"""
import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_ros.dynamics import (RobotModel, crba, dynamically_consistent_inverse,
                                         frame_bias_acceleration, frame_jacobian,
                                         frame_placement, operational_space_inertia)

from conftest import ROBOTS, robot_urdf
from pinocchio_oracle import Oracle

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

TOL = 1e-12
REFS = {'world': pin.WORLD, 'local': pin.LOCAL, 'local_world_aligned': pin.LOCAL_WORLD_ALIGNED}


@pytest.fixture(scope='module', params=list(ROBOTS))
def robot(request):
    xml = robot_urdf(request.param)
    model = RobotModel.from_urdf(xml)
    return request.param, model, Oracle(xml, model)


def pinocchio_frames(oracle, q, qd, frame, reference):
    """(placement, Jacobian, classical acceleration at qdd = 0) of a link frame, by Pinocchio."""
    pm, pd = oracle.pm, oracle.pd
    fid = pm.getFrameId(frame, pin.BODY)
    pq = oracle.q(q)
    J = pin.computeFrameJacobian(pm, pd, pq, fid, REFS[reference])[:, oracle.idx_v]
    pin.forwardKinematics(pm, pd, pq, oracle.v(qd), np.zeros(pm.nv))
    pin.updateFramePlacements(pm, pd)
    acc = pin.getFrameClassicalAcceleration(pm, pd, fid, REFS[reference]).vector
    return pd.oMf[fid].homogeneous.copy(), J, acc


def close(ours, ref, what, tol=TOL):
    err = np.max(np.abs(ours - ref)) / max(1.0, np.max(np.abs(ref)))
    assert err <= tol, f'{what}: error {err:.2e} (scaled by max(1, |ref|)) > {tol:g}'


def test_every_frame_in_every_reference_equals_pinocchio(robot):
    name, model, oracle = robot
    rng = np.random.default_rng(len(name))
    assert set(model.frames) == {f.name for f in oracle.pm.frames if f.type == pin.BODY}
    for _ in range(3):
        q, qd = rng.uniform(-2.0, 2.0, model.n), rng.normal(size=model.n)
        for frame in model.frames:
            for reference in REFS:
                T, J, acc = pinocchio_frames(oracle, q, qd, frame, reference)
                what = f'{name} {frame} {reference}'
                close(frame_placement(model, q, frame), T, what + ' placement')
                close(frame_jacobian(model, q, frame, reference), J, what + ' jacobian')
                close(frame_bias_acceleration(model, q, qd, frame, reference), acc,
                      what + ' bias acceleration')


def test_operational_space_inertia_and_the_consistent_inverse(robot):
    name, model, oracle = robot
    rng = np.random.default_rng(1 + len(name))
    frame = model.frames[-1]
    body = model.frame(frame)[0]
    for _ in range(3):
        q = rng.uniform(-2.0, 2.0, model.n)
        _, J, _ = pinocchio_frames(oracle, q, np.zeros(model.n), frame, 'local_world_aligned')
        M = oracle.crba(q)
        A = J @ np.linalg.solve(M, J.T)
        rank = np.linalg.matrix_rank(A, tol=1e-9 * np.abs(A).max()) if body >= 0 else 0
        mu = 0.0 if rank == 6 else 1e-6
        Lam = operational_space_inertia(model, q, frame, damping=mu)
        Jbar = dynamically_consistent_inverse(model, q, frame, damping=mu)
        if rank == 6:
            # relative to Lambda's size: the solve loses cond(A) * eps
            tol = max(TOL, 1e-15 * np.linalg.cond(A))
            close(Lam, np.linalg.inv(A), f'{name} Lambda', tol)
            close(J @ Jbar, np.eye(6), f'{name} J Jbar', tol)
            # the damped one: (A + mu 1)^-1, so J Jbar = 1 - mu Lambda
            L_mu = operational_space_inertia(model, q, frame, damping=1e-3)
            close(L_mu, np.linalg.inv(A + 1e-3 * np.eye(6)), f'{name} damped Lambda', tol)
            close(J @ dynamically_consistent_inverse(model, q, frame, damping=1e-3),
                  np.eye(6) - 1e-3 * L_mu, f'{name} damped J Jbar', tol)
        assert np.all(np.isfinite(Lam)) and np.all(np.isfinite(Jbar)), name
        assert np.allclose(Lam, Lam.T, atol=1e-9 * max(1.0, np.abs(Lam).max())), name
        # dynamic consistency: a torque (1 - J^T Jbar^T) tau0 does not accelerate the frame
        tau0 = rng.normal(size=model.n)
        N = np.eye(model.n) - J.T @ Jbar.T
        xdd = J @ np.linalg.solve(crba(model, q), N @ tau0)
        if rank == 6:
            assert np.abs(xdd).max() <= 1e-5 * max(1.0, np.abs(J).max() * np.abs(
                np.linalg.solve(M, tau0)).max()), f'{name}: {xdd}'


def test_the_jacobian_is_the_derivative_of_the_placement_and_jdot_qd_of_j_qd(robot):
    name, model, _ = robot
    rng = np.random.default_rng(2 + len(name))
    frame = model.frames[-1]
    h = 1e-6
    for _ in range(2):
        q, qd = rng.uniform(-2.0, 2.0, model.n), rng.normal(size=model.n)
        T0, T1, Tm = (frame_placement(model, q + s * h * qd, frame) for s in (0, 1, -1))
        v = (T1[:3, 3] - Tm[:3, 3]) / (2 * h)
        dR = (T1[:3, :3] - Tm[:3, :3]) / (2 * h)
        W = dR @ T0[:3, :3].T                       # dR/dt R^T = [w]x
        w = np.array([W[2, 1], W[0, 2], W[1, 0]])
        J = frame_jacobian(model, q, frame)
        close(J @ qd, np.concatenate([v, w]), f'{name} J qd = d/dt pose', 1e-7)
        # along q(t) = q + qd t (qdd = 0): d/dt (J qd) = Jdot qd
        dJqd = (frame_jacobian(model, q + h * qd, frame) @ qd
                - frame_jacobian(model, q - h * qd, frame) @ qd) / (2 * h)
        close(frame_bias_acceleration(model, q, qd, frame), dJqd, f'{name} Jdot qd', 1e-6)


def test_batches_equal_single_states():
    model = RobotModel.from_urdf(robot_urdf('panda'))
    Q = np.random.default_rng(3).uniform(-2, 2, (5, model.n))
    T, J = frame_placement(model, Q, 'panda_hand'), frame_jacobian(model, Q, 'panda_hand', 'local')
    for k in range(5):
        assert np.array_equal(T[k], frame_placement(model, Q[k], 'panda_hand'))
        assert np.array_equal(J[k], frame_jacobian(model, Q[k], 'panda_hand', 'local'))


def test_a_frame_on_the_fixed_base_never_moves():
    model = RobotModel.from_urdf(robot_urdf('ur5'))
    q = np.full(model.n, 0.3)
    assert np.array_equal(frame_jacobian(model, q, model.root_link), np.zeros((6, model.n)))
    assert np.array_equal(frame_placement(model, q, model.root_link), np.eye(4))
    assert np.array_equal(frame_bias_acceleration(model, q, q, model.root_link), np.zeros(6))


@pytest.mark.parametrize('call, match', [
    (lambda m: frame_placement(m, np.zeros(6), 'tool1'), 'link "tool1" is not in'),
    (lambda m: frame_jacobian(m, np.zeros(6), 'tool0', 'global'), 'reference must be one of'),
    (lambda m: frame_jacobian(m, np.zeros(5), 'tool0'), r'q must have shape \(6,\)'),
    (lambda m: frame_bias_acceleration(m, np.zeros((2, 6)), np.zeros((2, 6)), 'tool0'),
     'one state'),
    (lambda m: frame_placement(m, ['a'] * 6, 'tool0'), 'array of numbers'),
    (lambda m: operational_space_inertia(m, np.zeros(6), 'tool0', damping=-1.0), '>= 0'),
    (lambda m: dynamically_consistent_inverse(m, np.zeros(6), 'tool0', damping=-1.0), '>= 0'),
])
def test_wrong_arguments_are_refused_by_name(call, match):
    model = RobotModel.from_urdf(robot_urdf('ur5'))
    with pytest.raises((ValueError, KeyError), match=match):
        call(model)


def test_out_is_written_and_a_wrong_out_refused():
    model = RobotModel.from_urdf(robot_urdf('ur5'))
    q = np.full(model.n, 0.4)
    J = np.empty((6, model.n))
    assert frame_jacobian(model, q, 'tool0', out=J) is J
    assert np.array_equal(J, frame_jacobian(model, q, 'tool0'))
    for bad in (np.empty((6, 5)), np.empty((model.n, 6)).T, np.empty((6, model.n), np.float32)):
        with pytest.raises(ValueError, match='out must be'):
            frame_jacobian(model, q, 'tool0', out=bad)
