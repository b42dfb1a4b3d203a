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

"""RobotModel.from_urdf: what it supports and how it refuses what it does not."""
import numpy as np
import pytest

from robot_dynamics_ros.dynamics import (PRISMATIC, REVOLUTE, RobotModel, crba, gravity_torques,
                                         rnea)

from pinocchio_oracle import Oracle

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

INERTIAL = ('<inertial><origin xyz="{c}" rpy="{rpy}"/><mass value="{m}"/>'
            '<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>')


def link(name, m=1.0, c='0.1 0 0', rpy='0 0 0', ixx=0.01, iyy=0.02, izz=0.03):
    if m is None:
        return f'<link name="{name}"/>'
    inertial = INERTIAL.format(c=c, rpy=rpy, m=m, ixx=ixx, iyy=iyy, izz=izz)
    return f'<link name="{name}">{inertial}</link>'


def joint(name, parent, child, jtype='revolute', xyz='0 0 0.1', rpy='0 0 0', axis='0 0 1',
          extra='<limit lower="-1" upper="1" effort="10" velocity="2"/>'):
    ax = f'<axis xyz="{axis}"/>' if axis is not None else ''
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/>{ax}{extra}</joint>')


def robot(*parts, name='r'):
    return f'<?xml version="1.0"?><robot name="{name}">' + ''.join(parts) + '</robot>'


def matches_pinocchio(xml, model):
    oracle = Oracle(xml, model)
    rng = np.random.default_rng(0)
    for _ in range(3):
        q, qd, qdd = rng.normal(size=(3, model.n))
        np.testing.assert_allclose(rnea(model, q, qd, qdd), oracle.rnea(q, qd, qdd),
                                   rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(crba(model, q), oracle.crba(q), rtol=1e-9, atol=1e-12)


def test_fixed_joints_merge_and_arbitrary_frames_match_pinocchio():
    xml = robot(
        link('base', m=3.0), link('a'),
        link('a_tool', m=0.7, c='0.05 0.02 -0.1', rpy='0.3 -0.2 1.1'),
        link('b', m=2.0, rpy='0.1 0.2 0.3', ixx=0.05, iyy=0.04, izz=0.01), link('c', m=None),
        joint('j1', 'base', 'a', xyz='0.1 -0.2 0.3', rpy='0.4 0.5 -0.6', axis='1 2 3'),
        joint('fix', 'a', 'a_tool', jtype='fixed', xyz='0.3 0 0', rpy='1.0 0 0.5', axis=None,
              extra=''),
        joint('j2', 'a_tool', 'b', jtype='prismatic', xyz='0 0.2 0', rpy='0 1.2 0', axis='0 2 0'),
        joint('j3', 'b', 'c', jtype='continuous', axis='0 0 -1', extra=''))
    m = RobotModel.from_urdf(xml)
    assert m.joint_names == ('j1', 'j2', 'j3')
    assert list(m.jtype) == [REVOLUTE, PRISMATIC, REVOLUTE]
    # a fixed joint is no joint of q: has_joint says so, index names it
    assert m.has_joint('j2') and not m.has_joint('fix') and not m.has_joint('nowhere')
    with pytest.raises(KeyError, match='"fix" is not a movable joint'):
        m.index('fix')
    np.testing.assert_allclose(m.axis[0], np.array([1, 2, 3]) / np.sqrt(14))   # normalised
    assert m.link_frame('a_tool')[0] == 0      # merged into j1's body
    assert m.link_frame('base')[0] == -1
    assert m.total_mass == pytest.approx(1.0 + 0.7 + 2.0)   # base mass never moves
    assert m.I[2, 5, 5] == 0.0                 # a link without <inertial> has zero mass
    assert np.isinf(m.position_limits[2]).all()   # continuous: no position limit
    matches_pinocchio(xml, m)


def test_tree_with_branches_and_parents_first():
    xml = robot(link('base'), link('torso'), link('l1'), link('l2'), link('r1'), link('r2'),
                joint('jt', 'base', 'torso'),
                joint('jl1', 'torso', 'l1', axis='1 0 0'),
                joint('jr1', 'torso', 'r1', axis='0 1 0'),
                joint('jl2', 'l1', 'l2', axis='0 1 0'), joint('jr2', 'r1', 'r2', axis='1 0 0'))
    m = RobotModel.from_urdf(xml)
    for i in range(m.n):
        assert m.parent[i] < i
    assert m.joint_names[m.parent[m.index('jl2')]] == 'jl1'
    assert m.joint_names[m.parent[m.index('jr2')]] == 'jr1'
    H = crba(m, np.ones(m.n))
    assert H[m.index('jl2'), m.index('jr2')] == 0.0   # separate branches do not couple
    matches_pinocchio(xml, m)


def test_limits_damping_friction_and_mimic():
    xml = robot(link('base'), link('a'), link('b'),
                joint('j1', 'base', 'a', extra='<limit lower="-1.5" upper="2" effort="30" '
                      'velocity="3"/><dynamics damping="0.4" friction="1.2"/>'),
                joint('j2', 'a', 'b',
                      extra='<limit lower="-1" upper="1" effort="10" velocity="2"/>'
                      '<mimic joint="j1" multiplier="2" offset="0.1"/>'))
    m = RobotModel.from_urdf(xml)
    assert m.joint_names == ('j1', 'j2')          # a mimic joint is an ordinary joint
    np.testing.assert_array_equal(m.position_limits[0], [-1.5, 2.0])
    assert m.velocity_limits[0] == 3.0 and m.effort_limits[0] == 30.0
    assert m.damping[0] == 0.4 and m.friction[0] == 1.2
    assert m.damping[1] == 0.0 and m.friction[1] == 0.0


def test_continuous_joint_does_not_wrap():
    xml = robot(link('base'), link('a', c='0.3 0 0'),
                joint('j', 'base', 'a', jtype='continuous', axis='0 1 0', extra=''))
    m = RobotModel.from_urdf(xml)
    q = np.array([0.7])
    np.testing.assert_allclose(gravity_torques(m, q + 2 * np.pi), gravity_torques(m, q),
                               atol=1e-12)
    assert m.position_limits[0].tolist() == [-np.inf, np.inf]


def test_gravity_is_settable_and_validated():
    m = RobotModel.from_urdf(robot(link('base'), link('a'), joint('j', 'base', 'a', axis='1 0 0')))
    m.gravity = (0, 0, 0)
    assert gravity_torques(m, np.array([0.3]))[0] == 0.0
    with pytest.raises(ValueError, match='gravity'):
        m.gravity = (0, 0)
    with pytest.raises(ValueError, match='gravity'):
        m.gravity = (0, 0, np.nan)


GOOD = [link('base'), link('a'), joint('j', 'base', 'a')]


@pytest.mark.parametrize('xml, match', [
    ('<robot name="x"><link name="a"></robot', 'malformed URDF'),
    ('not xml at all', 'malformed URDF'),
    ('', 'empty'),
    (robot(link('base'), link('a'), joint('j', 'base', 'a', jtype='fixed', axis=None, extra='')),
     'no movable joint'),
    (robot(link('base'), link('a'),
           joint('fly', 'base', 'a', jtype='floating', axis=None, extra='')),
     'joint "fly".*floating'),
    (robot(link('base'), link('a'), joint('pl', 'base', 'a', jtype='planar', extra='')),
     'joint "pl".*planar'),
    (robot(link('base'), link('a'), link('b'), joint('j1', 'base', 'a'), joint('j2', 'b', 'a')),
     'link "a" is the child of two joints'),
    (robot(link('a'), link('b'), joint('j1', 'a', 'b'), joint('j2', 'b', 'a')),
     'cycle'),
    (robot(link('base'), link('a'), link('x'), link('y'), joint('j', 'base', 'a'),
           joint('k', 'x', 'y')), 'several root links'),
    (robot(link('base'), joint('j', 'base', 'ghost')), 'link "ghost"'),
    (robot(link('base'), link('a', m=-1.0), joint('j', 'base', 'a')),
     'link "a" has negative mass'),
    (robot(link('base'), link('a', ixx=-0.5), joint('j', 'base', 'a')),
     'link "a".*not positive semi-definite'),
    (robot(link('base'), link('a'), joint('j', 'base', 'a', axis='0 0 0')),
     'joint "j" has a zero'),
])
def test_bad_urdf_raises_a_value_error_naming_the_element(xml, match):
    with pytest.raises(ValueError, match=match):
        RobotModel.from_urdf(xml)


def test_missing_file_is_a_value_error():
    with pytest.raises(ValueError, match='cannot read URDF file'):
        RobotModel.from_urdf_file('/nonexistent/robot.urdf')


def test_bad_state_arguments_name_the_argument():
    m = RobotModel.from_urdf(robot(*GOOD))
    with pytest.raises(ValueError, match=r'qd must have shape \(1,\)'):
        rnea(m, [0.0], [0.0, 1.0], [0.0])
    with pytest.raises(ValueError, match='q must be an array of numbers'):
        rnea(m, ['a'], [0.0], [0.0])
    with pytest.raises(ValueError, match='qdd has shape'):
        rnea(m, np.zeros((2, 1)), np.zeros((2, 1)), np.zeros((3, 1)))
    with pytest.raises(KeyError, match='link "nope"'):
        rnea(m, [0.0], [0.0], [0.0], f_ext={'nope': np.zeros(6)})
    # lists, ints, read-only and strided arrays take the converting path and give the same numbers
    ref = rnea(m, np.array([0.2]), np.array([0.1]), np.array([0.3]))
    ro = np.array([0.2])
    ro.setflags(write=False)
    np.testing.assert_array_equal(rnea(m, [0.2], [0.1], [0.3]), ref)
    np.testing.assert_array_equal(
        rnea(m, ro, np.array([0.1, 9])[:1], np.array([0.3, 9])[::2]), ref)
    assert rnea(m, [0], [0], [0]).dtype == np.float64
