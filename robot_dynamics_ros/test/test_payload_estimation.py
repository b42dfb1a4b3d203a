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

On an arm with joint friction the estimate is made in motion, each pose swept forwards and
backwards: checked in closed loop in process (the simulator with xarm7's URDF friction and a
1.5 kg payload, computed torque on the description without it, the observer fed as
feedforward_node feeds it), where the same procedure at rest is off by 8 % and centimetres.
"""
import numpy as np
import pytest

from types import SimpleNamespace

from robot_dynamics_ros.control import payload_estimation as pe
from robot_dynamics_ros.control.controller import Controller
from robot_dynamics_ros.control.observer import MomentumObserver
from robot_dynamics_ros.dynamics import RobotModel, gravity_torques
from robot_dynamics_ros.dynamics.model import inertia_matrix, inertia_six
from robot_dynamics_ros.simulation import Simulator
from robot_dynamics_ros.tools.identify import with_payload_link

from conftest import robot_urdf

pytestmark = pytest.mark.offline      # no ROS process (conftest.PART)

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


def test_the_sweep_stays_inside_the_limits_and_says_which_joint_cannot():
    model = RobotModel.from_urdf(robot_urdf('xarm7'))
    q = np.array([0.0, -0.3, 0.0, 0.6, 0.0, 0.9, 0.0])
    cmd = np.arange(7)
    d = pe.sweep(model, [q], cmd)
    np.testing.assert_array_equal(d, np.full(7, pe.SWEEP))
    lo, hi = model.position_limits.T
    near = q.copy()
    near[3] = lo[3] + pe.MARGIN + 0.06          # joint4 0.06 rad inside its margin
    d = pe.sweep(model, [q, near], cmd)
    assert abs(d[3] - 0.06) < 1e-12 and np.all(np.delete(d, 3) == pe.SWEEP)
    assert np.all(near - d >= lo + pe.MARGIN - 1e-12)
    assert np.all(pe.sweep(model, [q], [1, 2])[[0, 3, 4, 5, 6]] == 0.0)     # not commanded
    near[3] = lo[3] + pe.MARGIN + 0.01
    with pytest.raises(ValueError, match='joint joint4 is too near a limit'):
        pe.sweep(model, [q, near], cmd)
    # what a quintic pass of +-d travels within the window, and the two passes combined
    s = np.linspace(pe.WINDOW[0], pe.WINDOW[1], 2)
    x = 10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5
    np.testing.assert_allclose(pe.window_travel([0.1]), [0.2 * (x[1] - x[0])])
    q_mean, r_mean, friction = pe.combine((np.ones(2), np.array([1.5, 0.2])),
                                          (3 * np.ones(2), np.array([0.5, 0.2])))
    np.testing.assert_array_equal(q_mean, [2.0, 2.0])
    np.testing.assert_array_equal(r_mean, [1.0, 0.2])
    np.testing.assert_array_equal(friction, [0.5, 0.0])


class FrictionLoop:
    """xarm7 simulated with its URDF friction and a payload; the controller and observer."""

    KP, KD = [400.0] * 4 + [2500.0] * 3, [40.0] * 4 + [100.0] * 3

    def __init__(self, q0, payload, friction=None):
        xml = robot_urdf('xarm7')
        self.model = RobotModel.from_urdf(xml)
        self.sim = Simulator(RobotModel.from_urdf(with_payload_link(xml, payload)), q0=q0,
                             friction=friction)
        # friction compensated (the URDF's: 1 N m Coulomb, 2-10 N m s/rad): without it the
        # light wrist under computed torque does not overcome its stiction with the payload on
        self.ctrl = Controller(self.model, mode='computed_torque', kp=self.KP, kd=self.KD,
                               friction_compensation=1.0)
        self.observer = MomentumObserver(self.model, 50.0)
        self.observer.update(self.sim.q, self.sim.qd, np.zeros(7), 0.0)
        self.names = list(self.model.joint_names)
        self.samples = None

    def run(self, seconds):
        sim, ctrl = self.sim, self.ctrl
        for _ in range(int(round(seconds / sim.dt))):
            t = sim.t
            ctrl.update_state(self.names, sim.q, sim.qd, t)
            tau, _ = ctrl.command(ctrl.q, ctrl.qd, t, now=t)
            sim.step(tau)
            # as feedforward_node: the measured efforts less the modelled friction
            r = self.observer.update(sim.q, sim.qd, sim.applied - ctrl.model_friction(sim.qd),
                                     sim.t)
            if self.samples is not None:
                self.samples.append((sim.q.copy(), r.copy()))

    def move(self, target, duration):
        t = self.sim.t
        self.ctrl.set_trajectory(self.names, [duration], [list(target)], [[0.0] * 7],
                                 [[0.0] * 7], start_time=t, now=t, q=self.ctrl.q,
                                 qd=self.ctrl.qd)

    def window(self, seconds):
        self.samples = []
        self.run(seconds)
        samples, self.samples = self.samples, None
        return (np.mean([s[0] for s in samples], axis=0),
                np.mean([s[1] for s in samples], axis=0))

    def at_rest(self, Q):
        """Fit at rest: each pose reached and settled, the estimate averaged (static)."""
        at, r = [], []
        for q in Q:
            self.move(q, 1.0)
            self.run(1.5)
            q_mean, r_mean = self.window(0.25)
            at.append(q_mean)
            r.append(r_mean)
        return pe.fit(self.model, 'link7', np.array(at), np.array(r), np.arange(7))

    def swept(self, Q, d):
        """Fit in motion: each pose swept forwards and backwards by +-d; also the largest miss."""
        at, r, missed = [], [], 0.0
        T, (a, b) = pe.SWEEP_TIME, pe.WINDOW
        for q in Q:
            self.move(q - d, 1.0)
            self.run(1.15)
            passes = []
            for target in (q + d, q - d):
                self.move(target, T)
                self.run(a * T)
                start = self.sim.q.copy()
                passes.append(self.window((b - a) * T))
                travel = np.abs(self.sim.q - start)
                assert np.all(travel > 0.5 * pe.window_travel(d)), travel  # none stuck
                self.run((1 - b) * T + 0.15)
            q_mean, r_mean, friction = pe.combine(*passes)
            at.append(q_mean)
            r.append(r_mean)
            missed = max(missed, np.abs(friction).max())
        return pe.fit(self.model, 'link7', np.array(at), np.array(r), np.arange(7)), missed


@pytest.mark.parametrize('q0, friction', [
    ([0.0, -0.3, 0.0, 0.6, 0.0, 0.9, 0.0], None),
    ([0.5, -0.5, 0.3, 1.0, -0.3, 1.2, 0.4], None),
    # the arm's Coulomb friction 0.7 N m where the model has the URDF's 1 N m: each pass is off
    # by +-0.3 N m, their mean is not (1.3 N m: the under-compensated wrist sticks, and the
    # service refuses, saying which joint did not follow)
    ([0.0, -0.3, 0.0, 0.6, 0.0, 0.9, 0.0], 0.7)])
def test_swept_poses_find_the_payload_where_friction_holds_it_at_rest(q0, friction):
    payload = SimpleNamespace(link='link7', mass=1.5, com=np.array([0.03, -0.02, 0.06]),
                              inertia=np.array([0.004, 0.0, 0.0, 0.005, 0.0, 0.003]))
    loop = FrictionLoop(np.array(q0), payload, friction)
    loop.run(1.0)
    Q = pe.poses(loop.model, loop.sim.q.copy(), 'link7', np.arange(7), 0.5)
    static = loop.at_rest(Q)
    swept, missed = loop.swept(Q, pe.sweep(loop.model, Q, np.arange(7)))
    print(f'at rest: {static.mass:.4f} kg at {np.round(static.com, 4)} (residual '
          f'{static.residual:.3f} N m); swept: {swept.mass:.4f} kg at {np.round(swept.com, 4)} '
          f'(residual {swept.residual:.4f} N m; passes differed by up to {missed:.3f} N m)')
    # at rest stiction holds part of the load (what the procedure is for)
    assert abs(static.mass - 1.5) > 0.045 or np.abs(static.com - payload.com).max() > 5e-3
    assert abs(swept.mass - 1.5) < 0.03 * 1.5, swept
    assert np.abs(swept.com - payload.com).max() < 5e-3, swept
    assert swept.residual < 0.05 + 0.1 * swept.torque      # what the service accepts
    if friction is not None:
        assert missed > 0.25            # each pass saw the model's error of 0.3 N m
