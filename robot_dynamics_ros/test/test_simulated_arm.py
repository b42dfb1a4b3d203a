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
simulator_node's rules without ROS or DDS: ``simulation.SimulatedArm``, one rule a test.

The lecture notes' 2R arm; times are arguments, so a command goes stale at exactly its timeout.
test_simulator_node.py and test_simulator_services.py check the same rules through the node.
"""
import numpy as np
import pytest

from robot_dynamics_ros.dynamics import RobotModel, example_urdf, gravity_torques
from robot_dynamics_ros.simulation import Sensors, SimulatedArm, Simulator

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

Q0 = np.array([0.3, -0.4])


def make(braked=False, joints=('joint1', 'joint2'), **sim_args):
    model = RobotModel.from_urdf_file(example_urdf('planar_2r'))
    sim = Simulator(model, dt=1e-3, q0=Q0, **sim_args)
    return SimulatedArm(sim, joints, Sensors(model.n), braked=braked)


def test_braked_the_pose_holds_while_time_runs_until_a_command_is_taken():
    arm = make(braked=True)
    assert arm.advance(100, 0.0, stale_after=0.1) == (100, None)
    assert np.array_equal(arm.sim.q, Q0) and arm.sim.t == pytest.approx(0.1)
    assert arm.take([1.0], 0.0) is not None and arm.braked       # refused: still braked
    assert arm.take([0.0, 0.0], 0.0) is None and not arm.braked
    arm.advance(10, 0.0, stale_after=0.1)
    assert not np.array_equal(arm.sim.q, Q0)                     # falls: zero torque


def test_wrong_commands_are_refused_and_change_nothing():
    arm = make()
    assert arm.take([1.0, 2.0], 5.0) is None
    assert arm.take([1.0, 2.0, 3.0], 6.0) == "3 values for 2 joints ['joint1', 'joint2']"
    assert arm.take([np.nan, 0.0], 6.0) == 'NaN or Inf'
    assert arm.take([np.inf, 0.0], 6.0) == 'NaN or Inf'
    assert arm.command.tolist() == [1.0, 2.0] and arm.last_command == 5.0


def test_a_command_applies_until_the_timeout_then_zero_torque():
    arm = make()
    g = gravity_torques(arm.sim.model, Q0)
    arm.take(g, 10.0)
    arm.advance(1, 10.1, stale_after=0.1)                        # exactly the timeout: fresh
    np.testing.assert_allclose(arm.sim.applied, g)
    assert arm.fresh(10.1, 0.1) and not arm.fresh(10.1 + 1e-9, 0.1)
    arm.advance(1, 10.1 + 1e-9, stale_after=0.1)
    assert np.all(arm.sim.applied == 0.0)
    arm.advance(1, 100.0, stale_after=None)                      # lockstep, a step while paused
    np.testing.assert_allclose(arm.sim.applied, g)


def test_commands_go_to_their_joints_in_the_commanded_order():
    arm = make(joints=('joint2', 'joint1'))
    arm.take([1.0, -2.0], 0.0)
    arm.advance(1, 0.0, stale_after=1.0)
    assert arm.sim.applied.tolist() == [-2.0, 1.0]


def test_only_the_answer_to_the_latest_state_counts():
    arm = make()
    assert not arm.answers_latest((0, 0))                        # no state reported yet
    arm.latest_stamp = (0, 0)           # the first state: a controller answers it on its clock
    assert arm.answers_latest((17, 5))
    arm.latest_stamp = (3, 2000000)
    assert arm.answers_latest((3, 2000000)) and arm.answers_latest([3, 2000000])
    assert not arm.answers_latest((3, 1000000))                  # an older state's answer


def test_an_answer_is_matched_by_joint_name():
    arm = make()
    names = ['joint2', 'gripper', 'joint1']
    assert arm.take_answer(names, [2.0, 9.0, 1.0], 1.0) is None
    assert arm.command.tolist() == [1.0, 2.0]
    # the same names again (cached) with an effort short: refused, not an IndexError
    assert arm.take_answer(names, [2.0, 9.0], 2.0) == '2 efforts for 3 names'
    assert arm.take_answer(['joint2'], [2.0], 2.0) == "no effort for ['joint1'] (names ['joint2'])"
    assert arm.take_answer(names, [2.0, 9.0, np.nan], 2.0) == 'NaN or Inf'
    assert arm.command.tolist() == [1.0, 2.0] and arm.last_command == 1.0


def test_a_push_ends_at_its_simulated_time_and_wrong_ones_are_refused():
    arm = make()
    assert arm.push('link9', [1.0] * 6, 0.0).startswith('unknown link "link9" (links of')
    assert arm.push('link2', [np.nan] + [0.0] * 5, 0.0) == 'the wrench or duration is not finite'
    assert arm.push('link2', [1.0] * 6, np.inf) == 'the wrench or duration is not finite'
    assert arm.push('link2', [1.0] * 6, -1.0) == 'duration must be >= 0 s, got -1.0'
    assert arm.sim.wrenches == {}
    assert arm.push('link2', [0.0, 5.0, 0.0, 0.0, 0.0, 0.0], 0.01) is None
    arm.advance(9, 0.0, stale_after=None)
    assert 'link2' in arm.sim.wrenches
    arm.advance(1, 0.0, stale_after=None)                        # t = 0.01: ended
    assert arm.sim.wrenches == {} and arm.wrench_end == {}
    assert arm.push('link2', [0.0, 5.0, 0.0, 0.0, 0.0, 0.0], 0.0) is None     # until replaced
    arm.advance(100, 0.0, stale_after=None)
    assert 'link2' in arm.sim.wrenches
    assert arm.push('link2', [0.0] * 6, 0.0) is None and arm.sim.wrenches == {}


def test_a_report_gives_the_mean_torque_applied_since_the_last_one():
    arm = make()
    arm.take([1.0, 2.0], 0.0)
    arm.advance(2, 0.0, stale_after=None)
    arm.take([3.0, 6.0], 0.0)
    arm.advance(2, 0.0, stale_after=None)
    q, qd, effort = arm.report()
    assert effort.tolist() == [2.0, 4.0]                         # not the last step's [3, 6]
    assert np.array_equal(q, arm.sim.q) and np.array_equal(qd, arm.sim.qd)
    assert arm.report()[2].tolist() == [3.0, 6.0]                # no step since: the last one's
    q, qd, effort = arm.report(held=True)                        # halted: at rest, no effort
    assert np.all(qd == 0.0) and np.all(effort == 0.0)


def test_a_report_reads_through_the_sensors():
    model = RobotModel.from_urdf_file(example_urdf('planar_2r'))
    arm = SimulatedArm(Simulator(model, q0=Q0), ('joint1', 'joint2'),
                       Sensors(2, effort_offset=[0.5, 0.0], effort_gain=[2.0, 1.0]))
    arm.take([1.0, 2.0], 0.0)
    arm.advance(1, 0.0, stale_after=None)
    assert arm.report()[2].tolist() == [0.75, 2.0]               # (applied + offset) / gain


def test_a_reset_starts_over_braked_without_command_or_push():
    arm = make()
    arm.take([1.0, 2.0], 0.0)
    arm.push('link2', [1.0] * 6, 5.0)
    arm.advance(50, 0.0, stale_after=None)
    arm.reset(Q0, braked=True)
    assert np.array_equal(arm.sim.q, Q0) and np.all(arm.sim.qd == 0.0) and arm.sim.t == 0.0
    assert arm.sim.wrenches == {} and arm.wrench_end == {}
    assert arm.command is None and arm.last_command is None and arm.braked


def test_a_new_description_goes_on_from_the_old_arm():
    old = make(braked=True)
    old.advance(20, 0.0, stale_after=None)
    old.latest_stamp = (0, 20000000)
    same = make()
    same.take_over(old)
    assert same.sim.t == old.sim.t and same.braked and same.latest_stamp == (0, 20000000)
    old.take([1.0, 2.0], 3.0)
    same = make()
    same.take_over(old)
    assert same.command.tolist() == [1.0, 2.0] and same.last_command == 3.0
    other = make(joints=('joint2', 'joint1'))                    # another order: not that one
    other.take_over(old)
    assert other.command is None and other.last_command is None


def test_a_divergence_stops_the_steps_and_says_why():
    arm = make(effort_limits=False)
    arm.take([1e9, 1e9], 0.0)
    done, why = arm.advance(100, 0.0, stale_after=None)
    assert done < 100 and why and ('velocity' in why or 'NaN' in why), (done, why)


def test_with_enforce_command_limits_each_step_is_clamped_at_its_own_state():
    # a held 150 N m on the shoulder runs it past its 6 rad/s without the limiter; with it no
    # step past 6 rad/s drives it on (the joint then coasts, gravity swinging it)
    for enforce in (False, True):
        arm = make()
        arm = SimulatedArm(arm.sim, arm.joints, arm.sensors, enforce_command_limits=enforce)
        g = gravity_torques(arm.sim.model, Q0)
        arm.take(g + [150.0, 0.0], 0.0)
        speeds, drives = [], []
        for _ in range(500):
            qd = arm.sim.qd[0]
            arm.advance(1, 0.0, stale_after=None)
            speeds.append(qd)
            drives.append(arm.sim.applied[0])
        speeds, drives = np.array(speeds), np.array(drives)
        assert np.any(speeds > 6.0)
        assert np.all(drives[speeds > 6.0] <= 0.0) == enforce
