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
The feasibility check without ROS: the closed-form time scale against brute force and Pinocchio.

Brute force: the trajectory actually stretched by k* (JointTrajectory.scaled) and re-sampled at
the stretched times; its largest |tau_i| / limit_i must be 1 at the limiting joint (1e-6) and at
most 1 everywhere. The torques are Pinocchio's RNEA along the same samples.
"""
import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_ros.control import JointTrajectory, check_trajectory, payload_model
from robot_dynamics_ros.control.feasibility import sample_times
from robot_dynamics_ros.dynamics import RobotModel, example_urdf, rnea

from conftest import robot_urdf

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO


def waypoints(model, kind, m, seed, duration=2.0):
    """Return m random waypoints inside the limits (the middle +- 30 %), ending at rest."""
    rng = np.random.default_rng(seed)
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    lo, hi = np.where(np.isfinite(lo), lo, -np.pi), np.where(np.isfinite(hi), hi, np.pi)
    mid, half = (lo + hi) / 2, 0.3 * (hi - lo) / 2
    n = model.n
    P = mid + half * rng.uniform(-1, 1, (m, n))
    times = np.sort(rng.uniform(0.2, duration, m - 1)).tolist() + [duration + 0.3]
    V = None if kind == 'linear' else rng.uniform(-0.3, 0.3, (m, n))
    A = None if kind != 'quintic' else rng.uniform(-1, 1, (m, n))
    if V is not None:
        V[-1] = 0.0
    if A is not None:
        A[-1] = 0.0
    q0 = mid + half * rng.uniform(-1, 1, n)
    return JointTrajectory(model.joint_names, times, P, V, A, start_time=0.0, q0=q0)


def brute_force_ratios(model, traj, result, k):
    """Max |tau| / effort limit and |qd| / velocity limit per joint of traj stretched by k."""
    t, left = sample_times(traj.times[-1], traj.times, 1e-3)
    assert np.array_equal(t, result.t)
    Q, QD, QDD = traj.scaled(k).sample_relative(t * k, left)
    tau = rnea(model, Q, QD, QDD)
    return (np.abs(tau).max(axis=0) / result.effort_limit,
            np.abs(QD).max(axis=0) / result.velocity_limit)


@pytest.mark.parametrize('name', ['panda', 'ur5', 'planar_2r'])
@pytest.mark.parametrize('kind', ['linear', 'cubic', 'quintic'])
def test_the_closed_form_time_scale_is_what_stretching_gives(name, kind):
    model = RobotModel.from_urdf(robot_urdf(name)) if name != 'planar_2r' else \
        RobotModel.from_urdf_file(example_urdf())
    # effort limits that bind: 60 % above the largest gravity torque of the motion, velocities
    # left free; then the URDF's velocity limits alone
    for seed in range(3):
        traj = waypoints(model, kind, 4, seed)
        free = check_trajectory(model, traj, velocity_limits=np.full(model.n, np.inf),
                                effort_limits=np.full(model.n, np.inf))
        assert free.min_time_scale == 0.0 and free.feasible      # no limit, nothing to scale
        L = 1.6 * np.abs(free.gravity).max(axis=0) + 1e-3
        result = check_trajectory(model, traj, effort_limits=L,
                                  velocity_limits=np.full(model.n, np.inf))
        k = result.min_time_scale
        assert 0 < k < np.inf and result.limiting_kind == 'effort'
        j = result.names.index(result.limiting_joint)
        effort, _ = brute_force_ratios(model, traj, result, k)
        assert abs(effort[j] - 1.0) < 1e-6, (effort[j], k)
        assert np.all(effort <= 1.0 + 1e-9)
        # a little faster and the limiting joint goes over
        effort, _ = brute_force_ratios(model, traj, result, 0.99 * k)
        assert effort[j] > 1.0
        # the peaks reported are the unscaled trajectory's
        assert result.feasible == (k <= 1.0)
        assert np.all(result.peak_effort >= np.abs(free.gravity).max(axis=0) - 1e-12)

        V = np.maximum(0.5 * free.peak_velocity, 1e-3)
        result = check_trajectory(model, traj, velocity_limits=V,
                                  effort_limits=np.full(model.n, np.inf))
        k = result.min_time_scale
        assert result.limiting_kind == 'velocity'
        j = result.names.index(result.limiting_joint)
        _, velocity = brute_force_ratios(model, traj, result, k)
        assert abs(velocity[j] - 1.0) < 1e-9 and np.all(velocity <= 1.0 + 1e-9)


@pytest.mark.parametrize('name', ['panda', 'ur5'])
def test_the_torques_are_pinocchios_along_the_samples(name):
    urdf = robot_urdf(name)
    model = RobotModel.from_urdf(urdf)
    pm = pin.buildModelFromXML(urdf)
    pd = pm.createData()
    traj = waypoints(model, 'quintic', 5, 7)
    result = check_trajectory(model, traj, sample_period=5e-3)
    t, left = sample_times(traj.times[-1], traj.times, 5e-3)
    Q, QD, QDD = traj.sample_relative(t, left)
    theirs = np.array([pin.rnea(pm, pd, q, qd, qdd) for q, qd, qdd in zip(Q, QD, QDD)])
    assert np.abs(result.tau - theirs).max() < 1e-9 * max(1.0, np.abs(theirs).max())
    theirs_g = np.array([pin.computeGeneralizedGravity(pm, pd, q) for q in Q])
    assert np.abs(result.gravity - theirs_g).max() < 1e-9 * max(1.0, np.abs(theirs_g).max())
    assert np.allclose(result.peak_effort, np.abs(theirs).max(axis=0), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('kind', ['linear', 'cubic', 'quintic'])
def test_batch_sampling_is_the_controllers_sampling(kind):
    """sample_relative is JointTrajectory.sample at every time; left limits are the limits."""
    model = RobotModel.from_urdf(robot_urdf('ur5'))
    traj = waypoints(model, kind, 4, 3)
    traj.start_time = 10.0
    tau = np.concatenate([[-0.5, 0.0], np.linspace(0, traj.times[-1] + 0.5, 997),
                          traj.times])
    Q, QD, QDD = traj.sample_relative(tau)
    for i, x in enumerate(tau):
        q, qd, qdd = traj.sample(10.0 + x)
        assert np.allclose(Q[i], q, atol=1e-12) and np.allclose(QD[i], qd, atol=1e-12)
        assert np.allclose(QDD[i], qdd, atol=1e-12)
    Q, QD, QDD = traj.sample_relative(traj.times, np.ones(len(traj.times), bool))
    for i, x in enumerate(traj.times):
        q, qd, qdd = traj.sample(10.0 + x - 1e-9)
        assert np.allclose(Q[i], q, atol=1e-7) and np.allclose(QD[i], qd, atol=1e-6)
        assert np.allclose(QDD[i], qdd, atol=1e-4)


def test_scaled_is_the_same_path_slower():
    model = RobotModel.from_urdf(robot_urdf('panda'))
    traj = waypoints(model, 'quintic', 4, 5)
    slow = traj.scaled(2.5)
    t = np.linspace(0, traj.times[-1], 301)
    Q, QD, QDD = traj.sample_relative(t)
    Qs, QDs, QDDs = slow.sample_relative(2.5 * t)
    assert np.allclose(Qs, Q, atol=1e-12) and np.allclose(QDs, QD / 2.5, atol=1e-12)
    assert np.allclose(QDDs, QDD / 2.5**2, atol=1e-12)
    with pytest.raises(ValueError, match='time scale'):
        traj.scaled(0.0)


def test_gravity_alone_over_a_limit_is_infeasible_at_any_speed():
    """A 20 kg payload on panda's hand: gravity alone exceeds a shoulder's 87 N m."""
    model = RobotModel.from_urdf(robot_urdf('panda'))
    heavy = payload_model(model, {'link': 'panda_hand', 'mass': 20.0})
    q = np.array([0.0, 0.8, 0.0, -1.2, 0.0, 2.0, 0.8, 0.0, 0.0])
    goal = q + np.r_[0.2, 0.2, 0.0, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0]
    traj = JointTrajectory(model.joint_names, [2.0], [goal], [np.zeros(9)], [np.zeros(9)],
                           start_time=0.0, q0=q)
    light = check_trajectory(model, traj)
    assert light.feasible and np.isfinite(light.min_time_scale)
    result = check_trajectory(heavy, traj)
    assert result.min_time_scale == np.inf and not result.feasible
    assert result.limiting_kind == 'gravity' and result.limiting_joint == 'panda_joint2'
    j = result.names.index('panda_joint2')
    assert result.limiting_value > result.effort_limit[j] == 87.0
    assert 'gravity alone' in result.message() and 'panda_joint2' in result.message()


def test_what_does_not_move_needs_no_time_and_reports_only_the_chosen_joints():
    model = RobotModel.from_urdf(robot_urdf('panda'))
    q = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02])
    arm = model.joint_names[:7]
    traj = JointTrajectory(arm, [1.0], [q[:7]], start_time=0.0, q0=q[:7])
    result = check_trajectory(model, traj, joints=arm, q_rest=q)
    assert result.names == list(arm) and result.min_time_scale == 0.0 and result.feasible
    assert np.allclose(result.peak_velocity, 0.0) and result.limiting_joint == ''
    assert 'does not move' in result.message()
    with pytest.raises(ValueError, match='sample_period'):
        check_trajectory(model, traj, sample_period=0.0)
    with pytest.raises(ValueError, match='limits'):
        check_trajectory(model, traj, joints=arm, effort_limits=np.ones(3))
