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
The ABA simulator without ROS.

Closed forms, conservation, friction, and Pinocchio's aba integrated with the same integrators.
"""
import math

import numpy as np
import pytest

from robot_dynamics_ros.dynamics import RobotModel, crba, example_urdf, gravity_torques
from robot_dynamics_ros.dynamics.energy import total_energy
from robot_dynamics_ros.simulation import SimulationDiverged, Simulator

from conftest import robot_urdf
from pinocchio_oracle import Oracle

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

PENDULUM = '''<robot name="pendulum"><link name="base"/>
<joint name="j" type="continuous"><parent link="base"/><child link="rod"/>
<axis xyz="0 1 0"/></joint>
<link name="rod"><inertial><origin xyz="0 0 -{l}"/><mass value="{m}"/>
<inertia ixx="{i}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="0"/></inertial></link></robot>'''

SLIDER = '''<robot name="slider"><link name="base"/>
<joint name="x" type="prismatic"><parent link="base"/><child link="cart"/><axis xyz="{axis}"/>
<limit lower="-10" upper="10" effort="1000" velocity="10"/>
<dynamics damping="0" friction="{fc}"/></joint>
<link name="cart"><inertial><mass value="{m}"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1"
iyz="0" izz="0.1"/></inertial></link></robot>'''


def crossings(t, x):
    """Return the times where x crosses zero upwards (linear interpolation)."""
    s = np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0))
    return t[s] - x[s] * (t[s + 1] - t[s]) / (x[s + 1] - x[s])


@pytest.mark.parametrize('integrator', ['semi_implicit_euler', 'rk4'])
def test_pendulum_period(integrator):
    m, l, i = 2.0, 0.6, 0.01
    model = RobotModel.from_urdf(PENDULUM.format(m=m, l=l, i=i))
    T = 2 * math.pi * math.sqrt((i + m * l * l) / (m * 9.81 * l))
    sim = Simulator(model, dt=1e-3, integrator=integrator, q0=[0.01])
    ts, xs = [], []
    for _ in range(10000):
        sim.step([0.0])
        ts.append(sim.t)
        xs.append(sim.q[0])
    periods = np.diff(crossings(np.array(ts), np.array(xs)))
    assert len(periods) >= 5
    # small amplitude: the period differs from the linear one by theta0^2 / 16 = 6e-6
    assert abs(periods.mean() - T) / T < 2e-4, (periods.mean(), T)


# The 2R arm released from q = (0.3, 0.2) rad swings chaotically for 10 s (peak speeds of several
# rad/s; m g L ~ 150 J). Measured max |E - E0| at dt = 1 ms: semi-implicit Euler 5.39 J (a bounded,
# first-order oscillation: 2.73 J at 0.5 ms, 1.38 J at 0.25 ms, no drift), RK4 1.05e-7 J.
ENERGY_BOUNDS = {'semi_implicit_euler': 8.0, 'rk4': 5e-7}


def energy_error(integrator, dt, seconds=10.0):
    model = RobotModel.from_urdf_file(example_urdf('planar_2r'))
    sim = Simulator(model, dt=dt, integrator=integrator, q0=[0.3, 0.2], position_limits=False)
    E0 = total_energy(model, sim.q, sim.qd)
    err, every = 0.0, int(round(0.05 / dt))
    for k in range(int(round(seconds / dt))):
        sim.step(np.zeros(2))
        if k % every == 0:
            err = max(err, abs(total_energy(model, sim.q, sim.qd) - E0))
    assert np.abs(sim.qd).max() > 0.5      # it did move
    return err


@pytest.mark.parametrize('integrator', ['semi_implicit_euler', 'rk4'])
def test_energy_is_conserved_without_damping_or_torque(integrator):
    err = energy_error(integrator, 1e-3)
    print(f'{integrator}: max |E - E0| over 10 s = {err:.3g} J')
    assert err < ENERGY_BOUNDS[integrator]


def test_semi_implicit_euler_energy_error_is_first_order():
    e1, e2 = energy_error('semi_implicit_euler', 1e-3), energy_error('semi_implicit_euler', 5e-4)
    assert 0.4 < e2 / e1 < 0.6, (e1, e2)


@pytest.mark.parametrize('robot', ['panda', 'ur5'])
def test_gravity_compensation_holds_still(robot):
    model = RobotModel.from_urdf(robot_urdf(robot))
    q0 = np.clip(np.linspace(-0.8, 0.9, model.n), model.position_limits[:, 0],
                 model.position_limits[:, 1])
    for integrator in ('semi_implicit_euler', 'rk4'):
        sim = Simulator(model, dt=1e-3, integrator=integrator, q0=q0, damping=0.0, friction=0.0)
        for _ in range(2000):
            sim.step(gravity_torques(model, sim.q))
        assert np.abs(sim.q - q0).max() < 1e-9 and np.abs(sim.qd).max() < 1e-9


def test_friction_stops_a_sliding_joint():
    m, fc = 2.0, 3.0
    model = RobotModel.from_urdf(SLIDER.format(axis='1 0 0', fc=fc, m=m))
    sim = Simulator(model, dt=1e-3, qd0=[1.0])
    stop = None
    for _ in range(1500):
        sim.step([0.0])
        if stop is None and sim.qd[0] == 0.0:
            stop = (sim.t, sim.q[0])
    a = fc / m
    assert stop is not None
    assert stop[0] == pytest.approx(1.0 / a, abs=2e-3)              # v0 / a
    assert stop[1] == pytest.approx(1.0 / (2 * a), abs=2e-3)        # v0^2 / (2 a)
    assert sim.qd[0] == 0.0 and sim.q[0] == stop[1]                 # and it stays stuck


def test_stiction_holds_below_and_slips_above_the_friction():
    m, fc = 2.0, 3.0
    model = RobotModel.from_urdf(SLIDER.format(axis='1 0 0', fc=fc, m=m))
    sim = Simulator(model, dt=1e-3)
    for _ in range(500):
        sim.step([2.9])
    assert sim.q[0] == 0.0 and sim.qd[0] == 0.0
    sim = Simulator(model, dt=1e-3)
    for _ in range(1000):
        sim.step([3.5])
    assert sim.qd[0] == pytest.approx((3.5 - fc) / m * 1.0, rel=2e-3)
    # a vertical slider: stiction (20 N) holds the weight (9.81 N), 5 N does not
    for fc_v, held in ((20.0, True), (5.0, False)):
        vert = RobotModel.from_urdf(SLIDER.format(axis='0 0 1', fc=fc_v, m=1.0))
        sim = Simulator(vert, dt=1e-3)
        for _ in range(500):
            sim.step([0.0])
        assert (sim.q[0] == 0.0) == held
        if not held:
            assert sim.qd[0] == pytest.approx(-(9.81 - 5.0) * 0.5, rel=5e-3)


@pytest.mark.parametrize('integrator', ['semi_implicit_euler', 'rk4'])
def test_asymmetric_friction_differs_with_the_direction(integrator):
    """Friction fc + a forwards, fc - a backwards: break-away torques, sliding accelerations."""
    m, fc, a = 2.0, 3.0, 1.0
    model = RobotModel.from_urdf(SLIDER.format(axis='1 0 0', fc=fc, m=m))
    for push, moves, accel in ((3.9, False, 0.0), (4.5, True, (4.5 - 4.0) / m),
                               (-1.9, False, 0.0), (-2.5, True, (-2.5 + 2.0) / m)):
        sim = Simulator(model, dt=1e-3, integrator=integrator, friction_asymmetry=[a])
        for _ in range(1000):
            sim.step([push])
        assert (sim.qd[0] != 0.0) == moves, push
        assert sim.qd[0] == pytest.approx(accel * 1.0, rel=3e-3, abs=1e-12), push
    with pytest.raises(ValueError, match='friction_asymmetry .* within'):
        Simulator(model, friction_asymmetry=[3.5])


def test_sensors_report_offset_gain_noise_and_counts():
    from robot_dynamics_ros.simulation import Sensors
    n = 3
    applied, q, qd = np.array([10.0, -4.0, 0.5]), np.array([0.1, 0.2, 0.3]), np.zeros(n)
    ideal = Sensors(n)
    assert ideal.read(q, qd, applied)[2] is applied                 # nothing added
    s = Sensors(n, effort_offset=[0.5, -0.2, 0.0], effort_gain=[20.0, 10.0, 1.0])
    np.testing.assert_allclose(s.read(q, qd, applied)[2], [0.525, -0.42, 0.5])
    s = Sensors(n, effort_noise=0.1, position_resolution=1e-3, effort_resolution=0.01, seed=4)
    efforts = np.array([s.read(q, qd, applied)[2] for _ in range(4000)])
    assert np.std(efforts[:, 0]) == pytest.approx(0.1, rel=0.05)
    assert np.allclose(efforts * 100, np.round(efforts * 100))     # counts of 0.01
    pos = s.read(q + 3e-4, qd, applied)[0]
    np.testing.assert_allclose(pos, np.round((q + 3e-4) / 1e-3) * 1e-3)
    for bad, match in ((dict(effort_gain=[0.0]), 'effort_gain needs .*, each finite > 0'),
                       (dict(effort_noise=[-1.0]), 'effort_noise needs .*, each finite >= 0'),
                       (dict(effort_offset=[1.0, 2.0]), 'one per joint')):
        with pytest.raises(ValueError, match=match):
            Sensors(n, **bad)


@pytest.mark.parametrize('integrator', ['semi_implicit_euler', 'rk4'])
def test_matches_pinocchio_aba_with_the_same_integrator(integrator):
    xml = robot_urdf('panda')
    model = RobotModel.from_urdf(xml)
    oracle = Oracle(xml, model)
    rng = np.random.default_rng(4)
    q0 = rng.uniform(-0.5, 0.5, model.n)
    tau = rng.normal(size=model.n) * 2
    dt = 1e-3
    sim = Simulator(model, dt=dt, integrator=integrator, q0=q0, damping=0.0, friction=0.0,
                    position_limits=False, effort_limits=False, max_velocity=1e9)
    f = lambda q, v: oracle.aba(q, v, tau)  # noqa: E731
    q, v = q0.copy(), np.zeros(model.n)
    for _ in range(500):
        sim.step(tau)
        if integrator == 'semi_implicit_euler':
            v = v + dt * f(q, v)
            q = q + dt * v
        else:
            a1 = f(q, v)
            a2 = f(q + dt / 2 * v, v + dt / 2 * a1)
            a3 = f(q + dt / 2 * (v + dt / 2 * a1), v + dt / 2 * a2)
            a4 = f(q + dt * (v + dt / 2 * a2), v + dt * a3)
            q, v = (q + dt / 6 * (v + 2 * (v + dt / 2 * a1) + 2 * (v + dt / 2 * a2)
                                  + (v + dt * a3)),
                    v + dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4))
    assert np.abs(sim.q - q).max() <= 1e-9 * max(1.0, np.abs(q).max())
    assert np.abs(sim.qd - v).max() <= 1e-9 * max(1.0, np.abs(v).max())


def test_hard_stop_zeroes_the_velocity_into_the_limit():
    model = RobotModel.from_urdf_file(example_urdf('planar_2r'))
    sim = Simulator(model, dt=1e-3, q0=[3.2, 0.0], qd0=[2.0, 0.0])
    for _ in range(200):
        sim.step(gravity_torques(model, sim.q) + np.array([50.0, 0.0]))
    assert sim.q[0] == model.position_limits[0, 1] and sim.qd[0] == 0.0


def test_blow_up_stops_and_keeps_the_last_valid_state():
    model = RobotModel.from_urdf_file(example_urdf('planar_2r'))
    sim = Simulator(model, dt=1e-3, q0=[0.0, 0.0], effort_limits=False, max_velocity=50.0)
    with pytest.raises(SimulationDiverged, match='joint'):
        for _ in range(1000):
            sim.step([1e5, -1e5])
    assert np.all(np.isfinite(sim.q)) and np.abs(sim.qd).max() <= 50.0


@pytest.mark.parametrize('integrator', ['semi_implicit_euler', 'rk4'])
def test_run_is_step_repeated(integrator):
    # panda from its start pose with friction, damping, its stops and a torque per step that
    # swings it into them: run() gives exactly the states step() gives, and leaves the same
    from robot_dynamics_ros.simulation import initial_pose
    model = RobotModel.from_urdf(robot_urdf('panda'))
    q0, _ = initial_pose(model, model.joint_names)
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    taus = np.random.default_rng(3).normal(size=(1500, model.n)) * 8.0
    sims = [Simulator(model, dt=1e-3, integrator=integrator, q0=np.clip(q0 + 0.01, lo, hi),
                      damping=0.3, friction=0.4, static_friction=0.6) for _ in range(2)]
    stepped = np.array([np.concatenate(sims[0].step(tau)) for tau in taus])
    qs, qds = sims[1].run(taus)
    assert np.array_equal(np.hstack([qs, qds]), stepped)
    a, b = sims
    assert a.t == pytest.approx(b.t) and b.t == pytest.approx(1.5)
    for field in ('q', 'qd', 'applied', 'stop_torque', 'impulse'):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    # the run went through every path: impacts, joints resting on a stop, stiction
    on_stop = (qs == lo) | (qs == hi)
    stuck = (qds == 0.0) & ~on_stop
    assert on_stop.any(axis=1).sum() > 100 and stuck.sum() > 10
    assert np.abs(b.impulse).max() > 0 or np.any(np.diff(on_stop.astype(int), axis=0) > 0)
    # a constant torque for a number of steps, and on from where it stopped
    qs2, _ = a.run(np.zeros(model.n), steps=10)
    for _ in range(10):
        b.step(np.zeros(model.n))
    assert qs2.shape == (10, model.n) and np.array_equal(qs2[-1], b.q)


def test_run_stops_at_a_divergence_with_the_last_valid_state():
    model = RobotModel.from_urdf_file(example_urdf('planar_2r'))
    sims = [Simulator(model, dt=1e-3, q0=[0.0, 0.0], effort_limits=False, max_velocity=50.0)
            for _ in range(2)]
    steps = 0
    with pytest.raises(SimulationDiverged, match='joint') as stepped:
        for steps in range(1000):
            sims[0].step([1e5, -1e5])
    with pytest.raises(SimulationDiverged, match='joint') as ran:
        sims[1].run([1e5, -1e5], steps=1000)
    assert str(ran.value) == str(stepped.value)
    assert np.array_equal(sims[0].q, sims[1].q) and np.array_equal(sims[0].qd, sims[1].qd)
    assert sims[1].t == pytest.approx(steps * 1e-3) and np.abs(sims[1].qd).max() <= 50.0


def test_run_refuses_torques_of_the_wrong_shape():
    model = RobotModel.from_urdf_file(example_urdf('planar_2r'))
    sim = Simulator(model, dt=1e-3)
    for tau, steps, match in (([0.0, 0.0], None, 'give steps'),
                              (np.zeros((5, 2)), 4, '5 rows of torques for 4 steps'),
                              (np.zeros((5, 3)), None, 'run takes 2 joint torques'),
                              ([0.0, 0.0, 0.0], 3, 'run takes 2 joint torques'),
                              ([0.0, 0.0], 0, 'steps must be >= 1')):
        with pytest.raises(ValueError, match=match):
            sim.run(tau, steps)
    assert sim.t == 0.0 and sim.q.tolist() == [0.0, 0.0]


def test_effort_limits_clamp_the_input():
    model = RobotModel.from_urdf_file(example_urdf('planar_2r'))
    sim = Simulator(model, dt=1e-3, q0=[0.0, 0.0])
    sim.step([1e4, -1e4])
    assert sim.applied.tolist() == [400.0, -200.0]


# ---- joint limits as constraints ------------------------------------------------------------

def dropped(name, integrator, dt, seconds=5.0):
    """Drop an arm from just off its start pose with zero torque; return its energy history."""
    from robot_dynamics_ros.simulation import initial_pose
    model = RobotModel.from_urdf(robot_urdf(name))
    q0, _ = initial_pose(model, model.joint_names)
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    sim = Simulator(model, dt=dt, integrator=integrator, q0=np.clip(q0 + 0.01, lo, hi))
    energy, impacts, on_stop = [total_energy(model, sim.q, sim.qd)], 0, 0
    for _ in range(int(round(seconds / dt))):
        sim.step(np.zeros(model.n))             # raises SimulationDiverged on a halt
        energy.append(total_energy(model, sim.q, sim.qd))
        impacts += bool(np.any(sim.impulse))
        on_stop += bool(np.any(sim.stop_torque))
        assert np.all(sim.q >= lo) and np.all(sim.q <= hi)
    return np.array(energy), impacts, on_stop


@pytest.mark.parametrize('name', ['panda', 'ur5'])
def test_an_arm_dropped_onto_its_stops_never_gains_energy(name):
    # RK4: the stops only take energy out (the impacts are inelastic), integration adds < 1e-6 J
    energy, impacts, _ = dropped(name, 'rk4', 1e-3)
    assert energy.max() - energy[0] <= 1e-6 + 1e-9 * abs(energy[0])
    if name == 'panda':          # falls from upright onto its stops; ur5's range is +-2 pi
        assert impacts > 10 and energy[-1] < energy[0] - 1.0
    # semi-implicit Euler: its energy error is first order in dt (ur5 swings freely at up to
    # ~12 rad/s: +1.3 J of 13.9 J at 1 ms); a quarter of the step, a quarter of the error
    rise = {dt: dropped(name, 'semi_implicit_euler', dt, 2.0)[0].max() - energy[0]
            for dt in (1e-3, 2.5e-4)}
    assert rise[1e-3] <= 0.1 * abs(energy[0])
    assert rise[2.5e-4] <= max(1e-4, 0.35 * rise[1e-3])


def test_the_impact_reaches_the_whole_arm_and_restitution_sets_the_rebound():
    # the 2R arm without gravity, joint 1 driven into its upper limit with joint 2 free
    model = RobotModel.from_urdf_file(example_urdf('planar_2r'))
    model.gravity = [0.0, 0.0, 0.0]
    hi = model.position_limits[0, 1]
    for e in (0.0, 0.5, 1.0):
        sim = Simulator(model, dt=1e-4, integrator='rk4', q0=[hi - 0.05, 0.3],
                        qd0=[2.0, 0.0], restitution=e, damping=0.0, friction=0.0)
        while not np.any(sim.impulse):
            before = (sim.q.copy(), sim.qd.copy(), total_energy(model, sim.q, sim.qd))
            sim.step([0.0, 0.0])
        q, qd, E = before
        # an impulse on joint 1 only: the generalized momentum of joint 2 is unchanged, so joint
        # 2's velocity jumps (the old rule zeroed joint 1 and left joint 2 alone)
        dp = crba(model, q) @ (sim.qd - qd)
        assert abs(dp[1]) < 0.02 * abs(dp[0]) and sim.impulse[0] < 0 and sim.impulse[1] == 0
        assert sim.q[0] == hi
        assert sim.qd[0] == pytest.approx(-e * qd[0], rel=0.02, abs=1e-3)
        assert abs(sim.qd[1] - qd[1]) > 0.1
        E_after = total_energy(model, sim.q, sim.qd)
        if e == 1.0:
            assert E_after == pytest.approx(E, rel=2e-3)
        else:
            assert E_after < E * (1 - 0.1)


@pytest.mark.parametrize('name, joint, sign', [('ur5', 1, -1), ('panda', 3, 1)])
def test_a_joint_pushed_into_its_stop_rests_on_it(name, joint, sign):
    model = RobotModel.from_urdf(robot_urdf(name))
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    limit = hi[joint] if sign > 0 else lo[joint]
    q0 = np.clip(np.zeros(model.n), lo, hi)
    q0[joint] = limit                   # at rest on the stop (an impact test is above)
    sim = Simulator(model, dt=1e-3, q0=q0)
    push = np.zeros(model.n)
    push[joint] = sign * 5.0
    for _ in range(2000):
        sim.step(gravity_torques(model, sim.q) + push)
    others = np.arange(model.n) != joint
    assert sim.q[joint] == limit and abs(sim.qd[joint]) < 1e-9
    # the stop takes the push, so the rest of the arm feels nothing: gravity compensation holds
    # it where it was (before, the push leaked into the other joints through M^-1)
    assert sim.stop_torque[joint] == pytest.approx(-push[joint], rel=1e-9)
    assert np.abs(sim.q[others] - q0[others]).max() < 1e-9
    assert np.abs(sim.qd).max() < 1e-9
    # and it leaves the stop when pulled away
    for _ in range(200):
        sim.step(gravity_torques(model, sim.q) - push)
    assert sign * (limit - sim.q[joint]) > 0.01 and sim.stop_torque[joint] == 0.0
