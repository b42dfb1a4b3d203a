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
``dynamics.transmitted.ChildSide``: the wrench a link's side exerts on the rest, against Pinocchio.

The oracle is Newton-Euler link by link in Pinocchio's kinematics: for each link of the child
side, its spatial velocity and acceleration (``getFrameVelocity``/``getFrameAcceleration``,
LOCAL), its inertia from the URDF's <inertial>, W = f_ext + m g - (I a + v x* I v), carried to
the sensor link's frame and summed. Links where a joint starts (the whole subtree) and links
fixed inside a body (a hand on a flange: part of a merged body), with external wrenches on
links inside and outside the side.
"""
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_ros.dynamics import RobotModel
from robot_dynamics_ros.dynamics.model import xml_origin
from robot_dynamics_ros.dynamics.transmitted import ChildSide

from conftest import robot_urdf

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

# arm, sensor link: where a joint starts, fixed inside a body (the hand, the flange's tool),
# and the root (a sensor under the arm)
CASES = [('ur5', 'wrist_3_link'), ('ur5', 'tool0'), ('ur5', 'forearm_link'),
         ('panda', 'panda_link7'), ('panda', 'panda_hand'), ('panda', 'panda_link4'),
         ('xarm7', 'link7'), ('xarm7', 'link5'), ('kinova', 'j2s6s200_link_6'),
         ('z1', 'link06'), ('ur10', 'ee_link'), ('ur5', 'base_link'), ('panda', 'panda_link0')]


def _child_links(root, link):
    children = {}
    for j in root.findall('joint'):
        children.setdefault(j.find('parent').get('link'), []).append(j.find('child').get('link'))
    side, todo = [], [link]
    while todo:
        side.append(todo.pop())
        todo += children.get(side[-1], [])
    return side


def oracle(xml, gravity, link, q, qd, qdd, link_wrenches):
    """Return the child side's wrench on the rest, [f; t] in ``link``'s frame, by Pinocchio."""
    pm = pin.buildModelFromXML(xml)
    pd = pm.createData()
    pm.gravity.linear = np.asarray(gravity)
    names = list(pm.names)[1:]

    def vec(x):
        out = np.zeros(pm.nv)
        for name, value in zip(names, x):
            out[pm.joints[pm.getJointId(name)].idx_v] = value
        return out
    qp = np.zeros(pm.nq)
    for name, value in zip(names, q):
        joint = pm.joints[pm.getJointId(name)]
        if joint.nq == 2:
            qp[joint.idx_q], qp[joint.idx_q + 1] = np.cos(value), np.sin(value)
        else:
            qp[joint.idx_q] = value
    pin.forwardKinematics(pm, pd, qp, vec(qd), vec(qdd))
    pin.updateFramePlacements(pm, pd)
    root = ET.fromstring(xml)
    inertials = {e.get('name'): e.find('inertial') for e in root.findall('link')}
    sensor = pd.oMf[pm.getFrameId(link, pin.FrameType.BODY)]
    total = pin.Force.Zero()
    for name in _child_links(root, link):
        fid = pm.getFrameId(name, pin.FrameType.BODY)
        oMl = pd.oMf[fid]
        w = pin.Force(*np.split(np.asarray(link_wrenches.get(name, np.zeros(6)), float), 2))
        inertial = inertials.get(name)
        if inertial is not None:
            m = float(inertial.find('mass').get('value'))
            c, R = xml_origin(inertial)
            i = inertial.find('inertia')
            Ic = np.array([[float(i.get(a, 0)) for a in row] for row in
                           (('ixx', 'ixy', 'ixz'), ('ixy', 'iyy', 'iyz'), ('ixz', 'iyz', 'izz'))])
            inertia = pin.Inertia(m, c, R @ Ic @ R.T)
            v = pin.getFrameVelocity(pm, pd, fid, pin.LOCAL)
            a = pin.getFrameAcceleration(pm, pd, fid, pin.LOCAL)
            weight = oMl.rotation.T @ (m * np.asarray(gravity))
            w += pin.Force(weight, np.cross(c, weight))
            w -= inertia * a + v.cross(inertia * v)
        total += sensor.actInv(oMl.act(w))
    return np.concatenate([total.linear, total.angular])


@pytest.mark.parametrize('arm,link', CASES)
def test_the_child_sides_wrench_is_pinocchios_newton_euler(arm, link):
    xml = robot_urdf(arm)
    model = RobotModel.from_urdf(xml)
    side = ChildSide(model, xml, link)
    rng = np.random.default_rng(7)
    others = [name for name in model.link_names if name not in side.links][-2:]
    for _ in range(5):
        q = rng.uniform(-np.pi, np.pi, model.n)
        qd, qdd = rng.normal(0, 1.5, model.n), rng.normal(0, 4.0, model.n)
        # wrenches on two links of the side (the first and the last) and on two off it, which
        # must not count
        pushes = {name: rng.normal(0, 10.0, 6)
                  for name in {side.links[0], side.links[-1], *others}}
        want = oracle(xml, model.gravity, link, q, qd, qdd, pushes)
        got = side.wrench(q, qd, qdd, pushes)
        assert np.allclose(got, want, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(want).max())), \
            (got, want)
        # and without: the weight and inertia alone
        at_rest = side.wrench(q, np.zeros(model.n), np.zeros(model.n))
        want = oracle(xml, model.gravity, link, q, np.zeros(model.n), np.zeros(model.n), {})
        assert np.allclose(at_rest, want, rtol=1e-10, atol=1e-12), (at_rest, want)
