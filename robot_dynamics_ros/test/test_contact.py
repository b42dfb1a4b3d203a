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
The simulator's world and contact, without ROS: closed forms, energy, real arms on a table.

A ball on prismatic joints against planes and boxes has closed forms (rest at m g / k, stick
below the friction cone, slide at (F - mu N) / m, an incline's g (sin - mu cos)); real arms of
example-robot-data fall onto a table and must come to rest on it, shallowly, without gaining
energy; and the contact forces at rest must balance the applied torques through the arm's
Jacobians (rnea with the contacts as external wrenches gives the torques back).
"""
import math

import numpy as np
import pytest

from robot_dynamics_ros.dynamics import RobotModel, crba, gravity_torques, rnea
from robot_dynamics_ros.dynamics.energy import body_poses, total_energy
from robot_dynamics_ros.simulation import Simulator
from robot_dynamics_ros.simulation.geometry import arm_geometry
from robot_dynamics_ros.simulation.world import World

from conftest import erd_root, robot_urdf

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

G = 9.81
BALL = '''<robot name="ball"><link name="base"/>
<joint name="x" type="prismatic"><parent link="base"/><child link="carriage"/>
<axis xyz="1 0 0"/><limit lower="-10" upper="10" effort="1000" velocity="100"/></joint>
<link name="carriage"><inertial><mass value="{mc}"/>
<inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="z" type="prismatic"><parent link="carriage"/><child link="ball"/>
<axis xyz="0 0 1"/><limit lower="-10" upper="10" effort="1000" velocity="100"/></joint>
<link name="ball"><inertial><mass value="{m}"/>
<inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial>
<collision><geometry><sphere radius="{r}"/></geometry></collision></link></robot>'''


def ball(world, z0, m=1.0, mc=0.5, r=0.05, x0=0.0):
    xml = BALL.format(m=m, mc=mc, r=r)
    model = RobotModel.from_urdf(xml)
    return Simulator(model, world=World.parse(world), geometry=arm_geometry(model, xml),
                     q0=[x0, z0], position_limits=False)


# ---- the world file -------------------------------------------------------------------------

def test_a_world_file_reads_boxes_planes_and_the_contact_law():
    w = World.parse('''
contact: {stiffness: 1.0e5, friction: 0.3}
shapes:
  - {name: table, type: box, size: [1, 2, 0.1], xyz: [0.5, 0, -0.05], rpy: [0, 0, 0.5]}
  - {type: plane, xyz: [0, 0, -1], normal: [0, 0, 2], friction: 0.9}
''')
    assert [s.name for s in w.shapes] == ['table', 'shape1']
    assert w.contact == {'stiffness': 1.0e5, 'damping_ratio': 1.0, 'friction': 0.3}
    table, floor = w.shapes
    assert np.allclose(table.half, [0.5, 1.0, 0.05])
    assert np.allclose(floor.normal, [0, 0, 1])
    assert w.friction(table) == 0.3 and w.friction(floor) == 0.9
    # the table's top face is at z = 0, the floor's surface at z = -1
    assert table.signed_distance([0.5, 0, 0.2]) == pytest.approx(0.2)
    assert floor.signed_distance([3, 4, -1.5]) == pytest.approx(-0.5)
    assert [s.name for s in w.without('table').shapes] == ['shape1']
    assert w.moved('table', [0, 0, -1]).shape('table').signed_distance([0, 0, 0]) == \
        pytest.approx(0.95)


@pytest.mark.parametrize('text, says', [
    ('shapes: [{type: box, size: [1, -1, 1]}]', 'size must be > 0'),
    ('shapes: [{type: box}]', 'a box needs size'),
    ('shapes: [{type: sphere, size: [1, 1, 1]}]', "type must be one of ['box', 'plane']"),
    ('shapes: [{type: plane, normal: [0, 0, 0]}]', 'normal must not be zero'),
    ('shapes: [{type: plane, xyz: [0, .nan, 0]}]', 'xyz must be 3 finite numbers'),
    ('shapes: [{name: a, type: plane}, {name: a, type: plane}]', 'two shapes are called "a"'),
    ('shapes: [{type: plane, size: [1, 1, 1]}]', "unknown key(s) ['size']"),
    ('contact: {stiffness: -1}', 'stiffness must be > 0'),
    ('contact: {friction: -0.1}', 'friction must be >= 0'),
    ('contact: {stifness: 1}', 'unknown key "stifness"'),
    ('shapes: [{type: box, size: [1, 1, 1]', 'is not valid YAML'),
    ('- just\n- a list', 'expected a mapping'),
])
def test_a_bad_world_file_is_refused_naming_the_entry(text, says):
    with pytest.raises(ValueError) as e:
        World.parse(text, 'world_file "w.yaml"')
    assert says in str(e.value) and 'world_file "w.yaml"' in str(e.value)


def test_a_world_file_that_cannot_be_read_names_it(tmp_path):
    with pytest.raises(ValueError, match='cannot read it'):
        World.from_file(str(tmp_path / 'missing.yaml'))


# ---- closed forms with a ball ----------------------------------------------------------------

def test_a_ball_comes_to_rest_on_the_floor_at_m_g_over_k_without_gaining_energy():
    sim = ball('shapes: [{name: floor, type: plane}]', z0=0.2)
    model = sim.model
    energy = []
    for _ in range(30):
        sim.run(np.zeros(2), 100)
        energy.append(total_energy(model, sim.q, sim.qd))
    k = sim.world.contact['stiffness']
    assert sim.q[1] == pytest.approx(0.05 - G / k, rel=1e-6)
    assert abs(sim.qd[1]) < 1e-9
    (c,) = sim.contacts()
    assert (c['link'], c['shape'], c['points']) == ('ball', 'floor', 1)
    assert np.allclose(c['force'], [0, 0, G], atol=1e-9)
    assert np.all(np.diff(energy) <= 1e-12)         # the fall's energy goes, none comes back


def test_a_pushed_ball_sticks_inside_the_friction_cone_and_slides_at_f_minus_mu_n():
    sim = ball('contact: {friction: 0.5}\nshapes: [{name: floor, type: plane}]', z0=0.05 - G / 2e5)
    sim.run(np.zeros(2), 500)
    limit = 0.5 * G                                   # mu N; the carriage rides on x's joint
    ramp = np.linspace(0, 0.9 * limit, 200)         # a push that grows over 0.2 s
    sim.run(np.column_stack([np.r_[ramp, np.full(800, ramp[-1])], np.zeros(1000)]))
    x_stuck = sim.q[0]
    sim.run(np.array([0.9 * limit, 0.0]), 1000)
    # held by the anchor's spring: displaced by F / k once, then not at all
    assert x_stuck == pytest.approx(0.9 * limit / 2e5, rel=1e-3)
    assert sim.q[0] == pytest.approx(x_stuck, abs=1e-9)
    v0 = sim.qd[0]
    sim.run(np.array([2 * limit, 0.0]), 1000)
    assert (sim.qd[0] - v0) / 1.0 == pytest.approx((2 * limit - limit) / 1.5, rel=2e-3)
    (c,) = sim.contacts()
    assert c['force'][0] == pytest.approx(-limit, rel=1e-9)     # kinetic friction on the cone


@pytest.mark.parametrize('mu, slides', [(0.3, True), (0.8, False)])
def test_a_ball_on_an_incline_slides_at_g_sin_minus_mu_cos_or_sticks(mu, slides):
    theta = math.radians(30)            # tan 30 = 0.577: mu 0.3 slides, 0.8 sticks
    normal = [-math.sin(theta), 0, math.cos(theta)]
    sim = ball(f'contact: {{friction: {mu}}}\n'
               f'shapes: [{{name: ramp, type: plane, normal: {normal}}}]', z0=0.06, m=1.0,
               mc=1e-3)
    sim.run(np.zeros(2), 1000)                      # lands and settles (or starts sliding)
    v1 = sim.qd.copy()
    sim.run(np.zeros(2), 500)
    along = np.array([math.cos(theta), math.sin(theta)])      # up the slope in (x, z)
    a = (sim.qd - v1) @ along / 0.5
    if slides:
        # the ball is constrained to (x, z), a point mass of 1 + 1e-3 kg along x
        expected = -G * (math.sin(theta) - mu * math.cos(theta))
        assert a == pytest.approx(expected, rel=0.01)
    else:
        assert abs(a) < 1e-6 and np.linalg.norm(sim.qd) < 1e-6


def test_a_ball_rests_on_a_rotated_box_and_is_pushed_out_of_its_side():
    world = ('contact: {friction: 0}\nshapes: [{name: block, type: box, size: [0.4, 0.4, 0.2], '
             'xyz: [0, 0, -0.1], rpy: [0, 0, 0.7]}]')
    sim = ball(world, z0=0.1)
    sim.run(np.zeros(2), 1500)
    assert sim.q[1] == pytest.approx(0.05 - G / 2e5, rel=1e-6)
    # from inside the block near its +x face (rotated by 0.7 about z: the face's normal is
    # (cos 0.7, sin 0.7, 0)), the ball is pushed out along that normal; x alone can move
    sim = ball(world, z0=-0.1, x0=0.2 / math.cos(0.7) - 0.01)
    sim.run(np.zeros(2), 1)
    (c,) = sim.contacts()
    assert c['force'][0] > 0 and c['force'][1] > 0
    assert c['force'][1] / c['force'][0] == pytest.approx(math.tan(0.7), rel=1e-6)


# ---- real arms on a table --------------------------------------------------------------------

def arm_on_table(name, top=-0.3, world=None, **options):
    xml = robot_urdf(name)
    model = RobotModel.from_urdf(xml)
    geometry = arm_geometry(model, xml, [erd_root().rsplit('/', 2)[0]])
    assert geometry.size > 0 and not geometry.notes
    world = world or (f'shapes: [{{name: table, type: box, size: [3, 3, 0.1], '
                      f'xyz: [0, 0, {top - 0.05}]}}]')
    return Simulator(model, world=World.parse(world), geometry=geometry, q0=np.zeros(model.n),
                     **options)


def lowest_point(sim, q, body=None):
    """Return the arm's lowest contact point at q (of ``body`` only when given): (x, y, z)."""
    poses, g = body_poses(sim.model, q), sim.geometry
    points = [poses[b][0] @ x + poses[b][1] - [0, 0, r]
              for b, x, r in zip(g.body, g.points, g.radius) if body is None or b == body]
    return min(points, key=lambda p: p[2])


def depth_below(sim, top):
    """Return the deepest contact point's depth below the table's top (m)."""
    _, touching, _, where = sim._cstate
    z = [where[p, s, 2] for p, s in zip(*np.nonzero(touching))]
    return top - min(z) if z else 0.0


@pytest.mark.parametrize('name, top', [('ur5', -0.3), ('xarm7', -0.3), ('z1', -0.05)])
def test_an_arm_falls_onto_a_table_and_rests_there_shallowly_without_gaining_energy(name, top):
    sim = arm_on_table(name, top)
    model = sim.model
    sim.run(np.zeros(model.n), 2000)            # falls and settles on the table
    deepest, energy, rest = 0.0, [], total_energy(model, sim.q, sim.qd)
    for _ in range(1000):                       # 10 s at rest
        sim.run(np.zeros(model.n), 10)
        deepest = max(deepest, depth_below(sim, top))
        energy.append(total_energy(model, sim.q, sim.qd))
    assert sim.contacts(), f'{name} does not touch the table'
    assert deepest < 1e-3
    assert np.max(energy) <= rest + 1e-9, 'the arm gained energy on the table'
    assert np.max(np.abs(sim.qd)) < 1e-3


PRESS_POSE = {'ur5': [0, -1.0, 1.8, -2.4, -1.57, 0], 'xarm7': [0, 0.6, 0, 1.4, 0, 0.8, 0]}


@pytest.mark.parametrize('name', ['ur5', 'xarm7'])
def test_at_rest_the_contact_forces_balance_the_applied_torques(name):
    # a PD hold whose target lies 2 cm into the table presses the arm onto it; at rest the
    # contacts carry tau - g: rnea with them as external wrenches gives tau back (J^T F)
    # (a block under the tool: the hold target 2 cm into it); the hold is a computed-torque PD
    sim = arm_on_table(name, top=10.0)          # far away while we find the pose
    model = sim.model
    q_target = np.array(PRESS_POSE[name])
    x, y, z = lowest_point(sim, q_target, body=model.n - 1)
    # (no joint friction: it would carry part of the load, xarm7's 1 N m); the block rises
    # from 5 mm below the tool to 2 cm above it in a second (the world changed at runtime)
    block = World.parse(f'shapes: [{{name: block, type: box, size: [0.2, 0.2, 0.1], '
                        f'xyz: [{x}, {y}, {z - 0.005 - 0.05}]}}]')
    sim = arm_on_table(name, world='shapes: []', friction=0.0)
    sim.set_world(block)
    sim.reset(q_target)

    def hold(q, qd):
        return gravity_torques(model, q) + crba(model, q) @ (100 * (q_target - q) - 20 * qd)
    for k in range(6000):
        if k < 1000 and k % 10 == 0:
            sim.set_world(block.moved('block', [x, y, z - 0.055 + 0.025 * (k + 10) / 1000]))
        sim.step(hold(sim.q, sim.qd))
    tau = hold(sim.q, sim.qd)
    assert np.max(np.abs(sim.qd)) < 1e-3
    wrenches = sim.contact_wrenches()
    tool = {sim.geometry.links[k] for k in sim.geometry.link[sim.geometry.body == model.n - 1]}
    assert wrenches and set(wrenches) <= tool, f'the tool does not press: {list(wrenches)}'
    balanced = rnea(model, sim.q, np.zeros(model.n), np.zeros(model.n), wrenches)
    pressing = tau - gravity_torques(model, sim.q)
    assert np.linalg.norm(pressing) > 1.0
    assert np.linalg.norm(balanced - tau) <= 0.02 * np.linalg.norm(pressing)
