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

"""The trajectory sampler (joint_trajectory_controller semantics) against hand-computed values."""
import numpy as np
import pytest

from robot_dynamics_ros.control import JointTrajectory

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

S = 100.0   # start time


def sample(traj, t):
    return [float(x[0]) for x in traj.sample(S + t)]


def test_linear_positions_only():
    tr = JointTrajectory(['j'], [1.0, 3.0], [[1.0], [5.0]], start_time=S, q0=[0.0], qd0=[7.0])
    assert tr.kind == 'linear'
    assert sample(tr, -1.0) == [0.0, 0.0, 0.0]       # before the start: hold the arrival state
    assert sample(tr, 0.5) == [0.5, 1.0, 0.0]             # from the state at arrival
    assert sample(tr, 2.0) == [3.0, 2.0, 0.0]
    assert sample(tr, 3.0) == [5.0, 0.0, 0.0]             # after the last point: hold it
    assert sample(tr, 50.0) == [5.0, 0.0, 0.0]


def test_cubic_positions_and_velocities():
    tr = JointTrajectory(['j'], [2.0], [[1.0]], [[0.0]], start_time=S, q0=[0.0], qd0=[0.0])
    assert tr.kind == 'cubic'
    # q = 3x^2 - 2x^3 with x = t/2
    assert sample(tr, 1.0) == pytest.approx([0.5, 0.75, 0.0])
    assert sample(tr, 0.5) == pytest.approx([0.15625, 0.5625, 0.75])


def test_cubic_starts_from_the_arrival_velocity():
    tr = JointTrajectory(['j'], [1.0], [[0.0]], [[0.0]], start_time=S, q0=[0.0], qd0=[1.0])
    # q = t - 2t^2 + t^3
    assert sample(tr, 0.5) == pytest.approx([0.125, -0.25, -1.0])


def test_quintic_positions_velocities_accelerations():
    tr = JointTrajectory(['j'], [1.0], [[1.0]], [[0.0]], [[0.0]], start_time=S, q0=[0.0])
    assert tr.kind == 'quintic'
    # q = 10x^3 - 15x^4 + 6x^5
    assert sample(tr, 0.5) == pytest.approx([0.5, 1.875, 0.0])
    assert sample(tr, 0.25) == pytest.approx([0.103515625, 1.0546875, 5.625])


def test_quintic_meets_every_point_with_its_velocity_and_acceleration():
    times = [0.5, 1.2, 2.0]
    P = [[0.3, -1.0], [1.0, 0.5], [0.2, 0.1]]
    V = [[1.0, 0.0], [-0.5, 2.0], [0.0, 0.0]]
    A = [[0.0, 3.0], [1.0, -2.0], [0.0, 0.0]]
    tr = JointTrajectory(['a', 'b'], times, P, V, A, start_time=S, q0=[0.0, 0.0], qd0=[0.2, -0.1])
    for k, t in enumerate(times[:-1]):
        for side in (-1e-9, 0.0):
            q, qd, qdd = tr.sample(S + t + side)
            np.testing.assert_allclose(q, P[k], atol=1e-6)
            np.testing.assert_allclose(qd, V[k], atol=1e-6)
            np.testing.assert_allclose(qdd, A[k], atol=1e-5)
    q, qd, qdd = tr.sample(S + 1e-12)
    np.testing.assert_allclose(qd, [0.2, -0.1], atol=1e-9)


def test_first_point_at_time_zero_applies_at_once():
    tr = JointTrajectory(['j'], [0.0, 1.0], [[2.0], [4.0]], start_time=S, q0=[0.0])
    assert sample(tr, 0.0) == [2.0, 2.0, 0.0]
    assert sample(tr, 0.5) == [3.0, 2.0, 0.0]


@pytest.mark.parametrize('kwargs, match', [
    (dict(joint_names=[], times=[1.0], positions=[[]]), 'names no joint'),
    (dict(joint_names=['a', 'a'], times=[1.0], positions=[[1, 2]]), 'twice'),
    (dict(joint_names=['a'], times=[], positions=[]), 'no point'),
    (dict(joint_names=['a'], times=[1.0, 1.0], positions=[[1], [2]]), 'strictly increasing'),
    (dict(joint_names=['a'], times=[2.0, 1.0], positions=[[1], [2]]), 'strictly increasing'),
    (dict(joint_names=['a'], times=[-1.0], positions=[[1]]), 'strictly increasing'),
    (dict(joint_names=['a', 'b'], times=[1.0], positions=[[1]]), 'positions'),
    (dict(joint_names=['a'], times=[1.0], positions=[[1]], velocities=[[1, 2]]), 'velocities'),
    (dict(joint_names=['a'], times=[1.0], positions=[[np.nan]]), 'NaN'),
    (dict(joint_names=['a'], times=[1.0], positions=[[1]], accelerations=[[1]]),
     'need velocities'),
])
def test_invalid_trajectories(kwargs, match):
    with pytest.raises(ValueError, match=match):
        JointTrajectory(**kwargs, start_time=0.0, q0=np.zeros(len(kwargs['joint_names'])))
