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
``simulation.CommandLimiter``: ros2_control's enforce_command_limits on effort commands.

The rules (joint_limits' compute_effort_limits and JointSoftLimiter, Jazzy) on ur5, then what
they do to one link held on one command, against closed forms: the drive taken away past
v_max (the joint coasts), the soft band's rest point under a push, and the band's own sag.
"""
import numpy as np
import pytest

from robot_dynamics_ros.dynamics import RobotModel, gravity_torques
from robot_dynamics_ros.simulation import CommandLimiter, Simulator

from conftest import robot_urdf

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

UR5_POSE = np.array([0.0, -1.2, 1.5, -1.9, -1.57, 0.0])


@pytest.fixture(scope='module')
def ur5():
    return RobotModel.from_urdf(robot_urdf('ur5'))


def test_the_saturation_rule_takes_the_drive_away_past_a_velocity_or_position_limit(ur5):
    lim = CommandLimiter(ur5, np.arange(6))
    assert not lim.velocity_band.any()           # no <safety_controller>: saturation only
    e, v = ur5.effort_limits, ur5.velocity_limits
    q = UR5_POSE.copy()
    lo, hi = lim.limits(q, np.zeros(6))
    assert np.array_equal(lo, -e) and np.array_equal(hi, e)
    qd = np.zeros(6)
    qd[0], qd[1] = 1.01 * v[0], -1.01 * v[1]
    lo, hi = lim.limits(q, qd)
    assert (lo[0], hi[0]) == (-e[0], 0.0) and (lo[1], hi[1]) == (0.0, e[1])
    tau = lim(q, qd, np.array([50.0, -50.0, 20.0, 1.0, 1.0, 1.0]))
    assert tau.tolist() == [0.0, 0.0, 20.0, 1.0, 1.0, 1.0]
    assert lim(q, qd, np.array([-500.0, 500.0, 0, 0, 0, 0]))[:2].tolist() == [-e[0], e[1]]
    q[2], qd[:] = ur5.position_limits[2, 1], 0.0           # at the elbow's upper limit, at rest
    assert lim.limits(q, qd)[1][2] == 0.0
    qd[2] = -0.1                                            # leaving it: the drive back
    assert lim.limits(q, qd)[1][2] == e[2]


def link(axis, safety=''):
    """One 1 kg link 0.5 m out along x on a revolute joint (range +-1 rad, 2 rad/s, 100 N m)."""
    return RobotModel.from_urdf(f'''<robot name="one"><link name="base"/>
<joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="{axis}"/>
<limit lower="-1" upper="1" velocity="2" effort="100"/>{safety}</joint>
<link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="1"/>
<inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
</robot>''')


def hold(model, command, seconds, limiter=None, damping=0.0):
    """Hold ``command`` from rest at q = 0; return each step's q and qd of the first joint."""
    sim = Simulator(model, dt=1e-3, q0=np.zeros(model.n), damping=[damping], friction=[0.0])
    qs, qds = [], []
    for _ in range(int(seconds / sim.dt)):
        sim.step(command if limiter is None else limiter(sim.q, sim.qd, command))
        qs.append(sim.q[0])
        qds.append(sim.qd[0])
    return np.array(qs), np.array(qds)


def test_a_joint_driven_by_a_held_torque_coasts_at_its_velocity_limit_behind_the_limiter():
    # a vertical axis (no gravity), 10 N m held on 0.25 kg m^2: 40 rad/s^2, 0.04 rad/s a step
    model = link('0 0 1')
    _, qd = hold(model, np.array([10.0]), 0.3)
    assert qd.max() > 5.0                                       # without: 12 rad/s in 0.3 s
    _, qd = hold(model, np.array([10.0]), 0.3, CommandLimiter(model, [0]))
    assert 2.0 < qd.max() <= 2.0 + 10.0 / 0.2501 * 1e-3 + 1e-9  # one step over, then coasts
    assert qd[-1] == qd.max()


SAFETY = '<safety_controller soft_lower_limit="-0.9" soft_upper_limit="0.9" k_position="10" ' \
         'k_velocity="{}"/>'


def test_the_soft_limiter_brings_a_driven_joint_to_rest_at_its_soft_limit():
    # the band -k_v (qd - v_hi), v_hi = -k_p (q - soft_upper): a velocity servo on the soft
    # limit, overdamped here (k_v 40 on 0.25 kg m^2, k_p 10: I s^2 + k_v s + k_v k_p, zeta 2),
    # so a held drive ends at rest on the soft limit, never past it
    model = link('0 0 1', SAFETY.format(40))
    lim = CommandLimiter(model, [0])
    assert lim.velocity_band[0]
    q, qd = hold(model, np.array([10.0]), 3.0, lim)
    assert q[-1] == pytest.approx(0.9, abs=1e-6) and abs(qd[-1]) < 1e-4
    assert q.max() <= 0.9 + 1e-9
    q, _ = hold(model, np.array([10.0]), 3.0)                   # without it: into the stop
    assert q.max() >= 1.0 - 1e-9


def test_the_soft_limiters_band_lets_a_joint_sag_where_k_velocity_v_max_is_below_its_load():
    # a horizontal axis: 1 kg at 0.5 m needs 4.9 N m; the band at rest allows k_v v_max = 2 N m
    model = link('0 1 0', SAFETY.format(1))
    g = gravity_torques(model, np.zeros(1))
    assert abs(g[0]) == pytest.approx(9.81 * 0.5, rel=1e-3)
    q, _ = hold(model, g, 1.0)
    assert np.abs(q).max() < 1e-9                               # the held command holds it
    lim = CommandLimiter(model, [0])
    assert np.abs(lim.limits(np.zeros(1), np.zeros(1))).max() == pytest.approx(2.0)
    q, _ = hold(model, g, 1.0, lim)
    assert np.abs(q).max() > 0.1
