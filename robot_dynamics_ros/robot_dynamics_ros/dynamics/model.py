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
RobotModel: a fixed-base kinematic tree read from a URDF, in Featherstone's terms.

A model with ``n`` movable joints has ``n`` bodies. Body ``i`` is moved by joint ``i``; its frame
is the frame of the URDF child link of that joint. Links hanging below a fixed joint are merged
into the body above them (inertias summed with the parallel-axis theorem, as Pinocchio does); links
fixed to the root link belong to the fixed base (index -1) and never move.

As in spatial_v2, the model is ``parent``, joint types and axes (``jtype``, ``S``), ``Xtree`` (the
transform from the parent body's frame to the joint's frame at q = 0) and spatial inertias ``I``
(6x6, body frame, about the body origin). Spatial vectors are Featherstone's: motion
``[angular; linear]``, force ``[moment; force]``.

Joint order (of ``joint_names`` and so of every q, qd, tau vector): depth-first from the root link,
the child joints of each link visited in name order. That is urdfdom's order, hence Pinocchio's,
KDL's, robot_state_publisher's and MoveIt's; for a serial arm it is the URDF's.

The model is immutable (its arrays are read-only) except ``gravity``. The compiled kernels read a
packed copy of these arrays (``_model``, see ``kernels.py``) and write a per-model
workspace (``_ws``, ``_ws_c``), all three views of one buffer ``_data`` that the kernels' entry
points take; a model is therefore not to be used from two threads at once (``copy()`` gives
each thread its own).
"""
import math

import numpy as np

from . import kernels
from .urdf import Ros2Control, load_description, read_description

REVOLUTE = 0
PRISMATIC = 1


def _rpy_matrix(rpy):
    """Rotation matrix of URDF roll-pitch-yaw (fixed axes X, Y, Z): R = Rz(y) Ry(p) Rx(r)."""
    r, p, y = rpy
    cr, sr = math.cos(r), math.sin(r)
    cp, sp = math.cos(p), math.sin(p)
    cy, sy = math.cos(y), math.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def _skew(p):
    return np.array([[0.0, -p[2], p[1]], [p[2], 0.0, -p[0]], [-p[1], p[0], 0.0]])


def plux(E, r):
    """
    Pluecker motion transform [E 0; -E rx E] (spatial_v2 ``plux``).

    E rotates coordinates of frame A into frame B; r is B's origin in A coordinates.
    """
    X = np.zeros((6, 6))
    X[:3, :3] = E
    X[3:, 3:] = E
    X[3:, :3] = -E @ _skew(r)
    return X


def mcI(m, c, Ic):
    """
    Return the spatial inertia of a body about its origin (spatial_v2 ``mcI``).

    Mass m, centre of mass c and inertia Ic about the CoM, all in the body frame.
    """
    C = _skew(c)
    I = np.zeros((6, 6))  # noqa: E741
    I[:3, :3] = Ic + m * C @ C.T
    I[:3, 3:] = m * C
    I[3:, :3] = m * C.T
    I[3:, 3:] = m * np.eye(3)
    return I


def com_inertia(I):  # noqa: E741
    """
    Return (m, c, Ic) of a spatial inertia about a body's origin: the inverse of ``mcI``.

    Mass, centre of mass and the inertia about the centre of mass (zeros c for a massless body).
    """
    m = float(I[5, 5])
    h = np.array([I[2, 4], I[0, 5], I[1, 3]])
    c = h / m if m > 0 else np.zeros(3)
    return m, c, I[:3, :3] - m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))


def inertia_matrix(six):
    """Return the symmetric 3x3 inertia of (ixx, ixy, ixz, iyy, iyz, izz): the URDF's order."""
    ixx, ixy, ixz, iyy, iyz, izz = six
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)


def inertia_six(I):  # noqa: E741
    """Return (ixx, ixy, ixz, iyy, iyz, izz) of a symmetric 3x3 inertia (``inertia_matrix``)."""
    return np.asarray(I, dtype=float)[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]


def _origin(element):
    """(R, p) of a URDF <origin>, identity when absent."""
    if element is None:
        return np.eye(3), np.zeros(3)
    xyz = element.xyz if element.xyz is not None else [0.0, 0.0, 0.0]
    rpy = element.rpy if element.rpy is not None else [0.0, 0.0, 0.0]
    return _rpy_matrix([float(v) for v in rpy]), np.array([float(v) for v in xyz])


def xml_origin(parent):
    """(xyz, R) of the <origin> of an ElementTree element (identity when absent)."""
    origin = parent.find('origin') if parent is not None else None
    xyz = np.array([float(v) for v in ((origin.get('xyz') if origin is not None else None)
                                       or '0 0 0').split()])
    rpy = [float(v) for v in ((origin.get('rpy') if origin is not None else None)
                              or '0 0 0').split()]
    return xyz, _rpy_matrix(rpy)


def _finite(value, what):
    v = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(v)):
        raise ValueError(f'{what} is not finite: {value}')
    return v


# An inertia whose smallest eigenvalue lies in [-INERTIA_TOLERANCE, 0) is taken as rounding in
# the description (tiago's 1 mg antenna links have -3.5e-8 kg m^2): projected to the nearest
# positive semi-definite inertia with a warning. Below that it is refused as non-physical.
INERTIA_TOLERANCE = 1e-6        # kg m^2


def _check_psd(Ic, what):
    """
    Ic, or its projection onto the positive semi-definite cone with a warning text, or ValueError.

    Returns (Ic, warning or None).
    """
    eig, V = np.linalg.eigh(Ic)
    if eig[0] >= -1e-9 * max(1.0, abs(eig[-1])):
        return Ic, None
    if eig[0] < -INERTIA_TOLERANCE:
        raise ValueError(f'{what} is not positive semi-definite (eigenvalues {eig.tolist()})')
    projected = (V * np.maximum(eig, 0.0)) @ V.T
    return projected, (f'{what} is not positive semi-definite by a negligible amount (smallest '
                       f'eigenvalue {eig[0]:.3g} kg m^2): using the nearest positive '
                       f'semi-definite inertia')


def _link_inertia(link, warnings):
    """(m, c, Ic) of a URDF link in its own frame; a link without <inertial> has zero mass."""
    inertial = link.inertial
    if inertial is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    m = float(_finite(inertial.mass if inertial.mass is not None else 0.0,
                      f'link "{link.name}" <mass>'))
    if m < 0:
        raise ValueError(f'link "{link.name}" has negative mass {m}')
    Rc, pc = _origin(inertial.origin)
    _finite(pc, f'link "{link.name}" <inertial><origin xyz>')
    I = inertial.inertia  # noqa: E741
    if I is None:
        Ic = np.zeros((3, 3))
    else:
        Ic = _finite([[I.ixx, I.ixy, I.ixz], [I.ixy, I.iyy, I.iyz], [I.ixz, I.iyz, I.izz]],
                     f'link "{link.name}" <inertia>')
    Ic, warning = _check_psd(Ic, f'link "{link.name}" has an <inertia> that')
    if warning:
        warnings.append(warning)
    return m, pc, Rc @ Ic @ Rc.T


def _armature(armature, n):
    """Return the armature as n values >= 0 (ValueError naming what is wrong)."""
    if armature is None:
        return np.zeros(n)
    a = np.asarray(armature, dtype=float).ravel()
    if a.size == 1:
        a = np.full(n, a[0])
    if a.size != n or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f'armature needs one value or {n} values, each finite and >= 0, got '
                         f'{np.asarray(armature).tolist()}')
    return a


def _same(a, b):
    """Whether two values of a model (numbers, arrays, tuples of them) are equal."""
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return np.array_equal(np.asarray(a), np.asarray(b))


def _joints_and_links(model, joints, what):
    """Name the joints, and for inertias the links they move, for ``differences``."""
    if what != 'inertia' or not model.urdf_joints:
        return f'joints {joints}'
    return 'links ' + str([model.urdf_joints[model.index(j)][2] for j in joints])


class RobotModel:
    """A fixed-base kinematic tree. Build it with ``from_urdf`` or ``from_urdf_file``."""

    def __init__(self, *, name, joint_names, parent, jtype, axis, Xtree,
                 I, link_body, link_X,  # noqa: E741 (Featherstone's I)
                 position_limits, velocity_limits, effort_limits, damping, friction,
                 gravity=(0.0, 0.0, -9.81), root_link='', ros2_control=None, mimic=None,
                 warnings=(), urdf_joints=None, link_masses=None, armature=None,
                 torque_offset=None, soft_limits=None):
        self.name = name
        self.root_link = root_link
        # what the description's <ros2_control> blocks say (joint order, initial values)
        self.ros2_control = ros2_control or Ros2Control()
        # mimic joint -> (mimicked joint, multiplier, offset); treated as independent joints
        self.mimic = dict(mimic or {})
        # what loading noticed and accepted: inertias rounded, mimic joints, massless joints
        self.warnings = tuple(warnings)
        # per movable joint: (URDF type, parent link, child link); per link: its URDF mass
        self.urdf_joints = tuple(urdf_joints or ())
        self.link_masses = dict(link_masses or {})
        self.joint_names = tuple(joint_names)
        n = len(self.joint_names)
        self.n = self.nq = self.nv = n
        self.parent = _frozen(np.asarray(parent, dtype=np.int64).reshape(n))
        self.jtype = _frozen(np.asarray(jtype, dtype=np.int64).reshape(n))
        axis = np.asarray(axis, dtype=float).reshape(n, 3)
        self.axis = _frozen(axis)
        S = np.zeros((n, 6))
        for i in range(n):
            S[i, :3] = axis[i] if self.jtype[i] == REVOLUTE else 0.0
            S[i, 3:] = axis[i] if self.jtype[i] == PRISMATIC else 0.0
        self.S = _frozen(S)
        self.Xtree = _frozen(np.asarray(Xtree, dtype=float).reshape(n, 6, 6))
        self.I = _frozen(np.asarray(I, dtype=float).reshape(n, 6, 6))  # noqa: E741
        # link name -> (body index or -1 for the base, 6x6 motion transform body -> link frame)
        self._link_body = dict(link_body)
        self._link_X = {k: _frozen(np.asarray(v, dtype=float)) for k, v in link_X.items()}
        self.link_names = tuple(self._link_body)
        self._frames = {}       # (link, reference) -> the frame kernels' ``descriptor``
        self.position_limits = _frozen(np.asarray(position_limits, dtype=float).reshape(n, 2))
        self.velocity_limits = _frozen(np.asarray(velocity_limits, dtype=float).reshape(n))
        self.effort_limits = _frozen(np.asarray(effort_limits, dtype=float).reshape(n))
        # per joint: the URDF <safety_controller>'s soft_lower_limit, soft_upper_limit,
        # k_position and k_velocity (NaN where the description has none), as ros_control's soft
        # limits read them
        self.soft_limits = _frozen(np.full((n, 4), np.nan) if soft_limits is None else
                                   np.asarray(soft_limits, dtype=float).reshape(n, 4))
        self.damping = _frozen(np.asarray(damping, dtype=float).reshape(n))
        self.friction = _frozen(np.asarray(friction, dtype=float).reshape(n))
        # rotor inertia reflected to each joint (kg m^2, or kg for prismatic), added to the mass
        # matrix diagonal as MuJoCo and Drake do; URDF has no field for it (with_armature)
        self.armature = _frozen(_armature(armature, n))
        # what a joint's effort reads with no motion and no load, any sign (N m or N): a torque
        # sensor's bias, or the mean of a friction that differs with the direction of motion
        # (fc + offset moving forwards, fc - offset backwards). Identified, never in a URDF.
        self.torque_offset = _frozen(np.zeros(n) if torque_offset is None else
                                     np.asarray(torque_offset, dtype=float).reshape(n))
        self._index = {name: i for i, name in enumerate(self.joint_names)}

        # Xtree as (E, r) and I as (m, h = m c, Ibar): what the compiled kernels read, packed
        # into one flat buffer (see kernels.py), its last 6 entries a_grav (set with gravity)
        E = self.Xtree[:, :3, :3]
        rx = -np.transpose(E, (0, 2, 1)) @ self.Xtree[:, 3:, :3]
        self.Xtree_E = _frozen(E)
        self.Xtree_r = _frozen(np.stack([rx[:, 2, 1], rx[:, 0, 2], rx[:, 1, 0]], axis=1))
        I = self.I  # noqa: E741
        self.mass = _frozen(I[:, 5, 5])
        self.h = _frozen(np.stack([I[:, 2, 4], I[:, 0, 5], I[:, 1, 3]], axis=1))
        self._data = kernels.data_buffer(kernels.pack_model(
            self.parent, self.jtype, self.S, self.Xtree_E, self.Xtree_r, self.axis, self.mass,
            self.h, I[:, :3, :3], self.armature, np.zeros(6)))
        self._model, self._ws, self._ws_c = kernels.data_views(self._data)
        self._zeros = np.zeros(n)               # qdd of bias_torques
        self._no_f_ext = np.zeros((n, 6))       # f_ext when there is none
        self.gravity = gravity

    # ----------------------------------------------------------------------------------------
    @property
    def gravity(self):
        """Gravity acceleration in the root link's frame (m/s^2); default (0, 0, -9.81)."""
        return self._gravity.copy()

    @gravity.setter
    def gravity(self, g):
        g = np.asarray(g, dtype=float)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f'gravity must be 3 finite numbers, got {g!r}')
        self._gravity = g.copy()
        a_grav = np.zeros(6)
        a_grav[3:] = g
        self.a_grav = _frozen(a_grav)
        self._data[self._model.size - 6:self._model.size] = a_grav   # the packed model's last 6

    def index(self, joint_name):
        """Position of a movable joint in q, qd, qdd and tau."""
        try:
            return self._index[joint_name]
        except KeyError:
            raise KeyError(f'joint "{joint_name}" is not a movable joint of {self.name}') from None

    def has_joint(self, joint_name):
        """Whether ``joint_name`` is a movable joint of the model (one :meth:`index` knows)."""
        return joint_name in self._index

    def link_frame(self, link):
        """(body index or -1 for the fixed base, 6x6 motion transform body frame -> link frame)."""
        try:
            return self._link_body[link], self._link_X[link]
        except KeyError:
            raise KeyError(f'link "{link}" is not in {self.name}') from None

    @property
    def frames(self):
        """Every URDF link, each a frame (those merged through fixed joints included)."""
        return self.link_names

    def frame(self, link):
        """
        (body index or -1, 4x3 [E; r]) of a frame, as the frame kernels take it.

        E rotates body coordinates into the frame's, r is the frame's origin in the body frame.
        """
        body, X = self.link_frame(link)
        E = X[:3, :3]
        rx = -E.T @ X[3:, :3]                   # X = [E 0; -E rx E]
        return body, np.ascontiguousarray(np.vstack([E, [rx[2, 1], rx[0, 2], rx[1, 0]]]))

    def copy(self):
        """Return a model with the same data and its own workspace (one per thread)."""
        other = object.__new__(RobotModel)
        other.__dict__.update(self.__dict__)
        other._data = self._data.copy()
        other._model, other._ws, other._ws_c = kernels.data_views(other._data)
        other._zeros = np.zeros_like(self._zeros)
        other._no_f_ext = np.zeros_like(self._no_f_ext)
        return other

    def with_payload(self, link, mass, com=(0.0, 0.0, 0.0), inertia=(0.0,) * 6):
        """
        Return a new model with a rigid payload fixed to ``link``.

        ``mass`` (kg), centre of mass ``com`` (m, in the link frame) and ``inertia`` (ixx, ixy,
        ixz, iyy, iyz, izz about the centre of mass, link axes, kg m^2). A payload on the fixed
        base changes nothing.
        """
        body, X = self.link_frame(link)
        m = float(mass)
        c = _finite(com, 'payload com')
        inertia = _finite(inertia, 'payload inertia')
        if not np.isfinite(m) or m < 0:
            raise ValueError(f'payload mass must be a finite number >= 0, got {mass}')
        if c.shape != (3,) or inertia.shape != (6,):
            raise ValueError('payload com needs 3 numbers and inertia 6 (ixx ixy ixz iyy iyz izz)')
        Ic = inertia_matrix(inertia)
        if _check_psd(Ic, 'payload inertia')[1]:
            raise ValueError(f'payload inertia is not positive semi-definite: {inertia.tolist()}')
        I = self.I.copy()  # noqa: E741
        if body >= 0:
            I[body] += X.T @ mcI(m, c, Ic) @ X      # link frame -> body frame
        return self._replace(I=I)

    def with_armature(self, armature):
        """
        Return a new model with rotor inertias ``armature`` added to the mass matrix diagonal.

        One value for every joint or one per joint (kg m^2 for revolute joints, kg for prismatic
        ones), >= 0: what a geared motor adds (its rotor inertia times the gear ratio squared).
        """
        return self._replace(armature=armature)

    def _replace(self, **changes):
        """Return a new model equal to this one but for the constructor arguments ``changes``."""
        args = dict(name=self.name, joint_names=self.joint_names, parent=self.parent,
                    jtype=self.jtype, axis=self.axis, Xtree=self.Xtree, I=self.I,
                    link_body=self._link_body, link_X=self._link_X,
                    position_limits=self.position_limits, velocity_limits=self.velocity_limits,
                    effort_limits=self.effort_limits, damping=self.damping,
                    friction=self.friction, gravity=self._gravity, root_link=self.root_link,
                    ros2_control=self.ros2_control, mimic=self.mimic, warnings=self.warnings,
                    urdf_joints=self.urdf_joints, link_masses=self.link_masses,
                    armature=self.armature, torque_offset=self.torque_offset,
                    soft_limits=self.soft_limits)
        args.update(changes)
        return RobotModel(**args)

    def differences(self, other):
        """
        Return what differs between this model's dynamics and ``other``'s, as readable lines.

        Joints added or removed, and for the joints both have: the tree (parent), the joint type,
        axis and placement, the inertia of the body it moves (mass, centre of mass, inertia), its
        limits, damping, friction and armature; the frames of named links; the
        ``<ros2_control>`` joints and initial values; gravity. Empty when none differs: a
        description that changed only in comments, whitespace, visuals or materials.
        """
        out = []
        mine, theirs = set(self.joint_names), set(other.joint_names)
        if theirs - mine:
            out.append(f'joints removed: {sorted(theirs - mine)}')
        if mine - theirs:
            out.append(f'joints added: {sorted(mine - theirs)}')
        fields = (('parent', lambda m, i: m.joint_names[m.parent[i]] if m.parent[i] >= 0 else ''),
                  ('type and axis', lambda m, i: (int(m.jtype[i]), m.axis[i])),
                  ('placement', lambda m, i: m.Xtree[i]),
                  ('inertia', lambda m, i: m.I[i]),
                  ('limits', lambda m, i: (m.position_limits[i], m.velocity_limits[i],
                                           m.effort_limits[i])),
                  ('damping and friction', lambda m, i: (m.damping[i], m.friction[i])),
                  ('armature', lambda m, i: m.armature[i]))
        for what, get in fields:
            changed = [j for j in self.joint_names if j in theirs and not _same(
                get(self, self.index(j)), get(other, other.index(j)))]
            if changed:
                out.append(f'{what} of {_joints_and_links(self, changed, what)}')
        frames = [link for link in self.link_names if link in other._link_body and (
            self._link_body[link] != other._link_body[link]
            or not _same(self._link_X[link], other._link_X[link]))]
        if frames:
            out.append(f'frames of links {frames}')
        if self.ros2_control != other.ros2_control:
            out.append('the <ros2_control> joints or initial values')
        if not _same(self.gravity, other.gravity):
            out.append(f'gravity {other.gravity.tolist()} -> {self.gravity.tolist()}')
        return out

    @property
    def massless_joints(self):
        """
        Joints whose subtree has no mass or inertia about their axis (M(q)[i, i] = 0 at q = 0).

        The mass matrix is singular there, so forward dynamics is undefined.
        """
        # the diagonal of CRBA at q = 0 (where Xup = Xtree), in numpy: checked at every load,
        # it should not wait for a compiled kernel (seconds on a fresh install)
        IC = self.I.copy()
        for i in range(self.n - 1, -1, -1):
            if self.parent[i] >= 0:
                IC[self.parent[i]] += self.Xtree[i].T @ IC[i] @ self.Xtree[i]
        diag = np.einsum('ij,ijk,ik->i', self.S, IC, self.S) + self.armature
        return tuple(j for j, d in zip(self.joint_names, diag) if not d > 0)

    @property
    def total_mass(self):
        return float(self.mass.sum())

    def __repr__(self):
        return f'<RobotModel {self.name!r}: {self.n} joints {list(self.joint_names)}>'

    # ----------------------------------------------------------------------------------------
    @classmethod
    def from_urdf_file(cls, path, xacro_args=()):
        """Build the model of a URDF file, or of a ``.xacro`` file expanded with ``xacro_args``."""
        return cls.from_urdf(load_description(path, xacro_args))

    @classmethod
    def from_urdf(cls, xml):
        """Build the model of a URDF string (see the module doc for what is supported)."""
        robot, ros2_control = read_description(xml)
        links = {link.name: link for link in robot.links}
        if not links:
            raise ValueError('URDF has no <link>')
        child_of = {}
        children = {name: [] for name in links}
        for j in robot.joints:
            for end in (j.parent, j.child):
                if end not in links:
                    raise ValueError(f'joint "{j.name}" names link "{end}", which is not defined')
            if j.child in child_of:
                raise ValueError(
                    f'link "{j.child}" is the child of two joints ("{child_of[j.child].name}" and '
                    f'"{j.name}"): the link graph is not a tree')
            child_of[j.child] = j
            children[j.parent].append(j)
        roots = [name for name in links if name not in child_of]
        if len(roots) != 1:
            if not roots:
                raise ValueError('the link graph has a cycle: every link is the child of a joint')
            raise ValueError(f'the link graph is not a tree: several root links {roots}')
        root = roots[0]
        for js in children.values():        # urdfdom's order: a link's child joints by name
            js.sort(key=lambda j: j.name)

        joint_names, parent, jtype, axis, Xtree = [], [], [], [], []
        position_limits, velocity_limits, effort_limits, damping, friction = [], [], [], [], []
        soft_limits = []
        inertias = []          # per body: list of (m, c, Ic) in the body frame
        link_body, link_pose = {root: -1}, {root: (np.eye(3), np.zeros(3))}
        warnings, mimic, urdf_joints = [], {}, []
        link_masses = {root: _link_inertia(links[root], warnings)[0]}   # the base never moves

        # Depth-first from the root, a link's child joints in name order: the order of urdfdom,
        # Pinocchio, KDL and robot_state_publisher. Parents come before children.
        stack = [(j, -1, np.eye(3), np.zeros(3)) for j in reversed(children[root])]
        while stack:
            j, body, R, p = stack.pop()          # R, p: pose of j's parent link in body's frame
            Ro, po = _origin(j.origin)
            _finite(po, f'joint "{j.name}" <origin xyz>')
            Rj, pj = R @ Ro, R @ po + p          # joint frame in the body frame
            jt = j.type
            if jt == 'fixed':
                child_body, Rc, pc = body, Rj, pj
            else:
                if jt in ('floating', 'planar'):
                    raise ValueError(
                        f'joint "{j.name}" is of type "{jt}": only fixed-base models are '
                        f'supported (revolute, continuous, prismatic and fixed joints)')
                if jt not in ('revolute', 'continuous', 'prismatic'):
                    raise ValueError(f'joint "{j.name}" has unknown type "{jt}"')
                k = _finite(j.axis if j.axis is not None else [1.0, 0.0, 0.0],
                            f'joint "{j.name}" <axis>')
                norm = np.linalg.norm(k)
                if norm < 1e-12:
                    raise ValueError(f'joint "{j.name}" has a zero <axis>')
                child_body, Rc, pc = len(joint_names), np.eye(3), np.zeros(3)
                joint_names.append(j.name)
                urdf_joints.append((jt, j.parent, j.child))
                parent.append(body)
                jtype.append(PRISMATIC if jt == 'prismatic' else REVOLUTE)
                axis.append(k / norm)
                Xtree.append(plux(Rj.T, pj))
                inertias.append([])
                lim = j.limit
                lo, hi = -np.inf, np.inf
                if jt != 'continuous' and lim is not None:
                    lo = float(lim.lower) if lim.lower is not None else lo
                    hi = float(lim.upper) if lim.upper is not None else hi
                position_limits.append((lo, hi))
                safety = getattr(j, 'safety_controller', None)
                soft_limits.append([np.nan] * 4 if safety is None or jt == 'continuous' else
                                   [np.nan if x is None else float(x) for x in (
                                       safety.soft_lower_limit, safety.soft_upper_limit,
                                       safety.k_position, safety.k_velocity)])
                vel = (float(lim.velocity) if lim is not None and lim.velocity is not None
                       else np.inf)
                eff = float(lim.effort) if lim is not None and lim.effort is not None else np.inf
                velocity_limits.append(vel if vel > 0 else np.inf)
                effort_limits.append(eff if eff > 0 else np.inf)
                dyn = j.dynamics
                damping.append(float(dyn.damping or 0.0) if dyn is not None else 0.0)
                friction.append(float(dyn.friction or 0.0) if dyn is not None else 0.0)
                if j.mimic is not None and j.mimic.joint:
                    mimic[j.name] = (j.mimic.joint, float(j.mimic.multiplier or 1.0),
                                     float(j.mimic.offset or 0.0))
            link_body[j.child] = child_body
            link_pose[j.child] = (Rc, pc)
            m, c, Ic = _link_inertia(links[j.child], warnings)
            link_masses[j.child] = m
            if child_body >= 0 and (m > 0 or Ic.any()):     # a massless rotor still has inertia
                inertias[child_body].append((m, Rc @ c + pc, Rc @ Ic @ Rc.T))
            stack.extend((jc, child_body, Rc, pc) for jc in reversed(children[j.child]))

        if not joint_names:
            raise ValueError(f'URDF "{robot.name}" has no movable joint (revolute, continuous or '
                             f'prismatic): nothing to control')
        for name, (target, k, offset) in mimic.items():
            warnings.append(f'joint "{name}" mimics "{target}" (x {k:g} + {offset:g}): treated '
                            f'as an independent joint, as Pinocchio and KDL do')
        I = np.array([sum((mcI(m, c, Ic) for m, c, Ic in parts), np.zeros((6, 6)))  # noqa: E741
                      for parts in inertias])
        link_X = {name: plux(R.T, p) for name, (R, p) in link_pose.items()}
        model = cls(name=robot.name or '', joint_names=joint_names, parent=parent, jtype=jtype,
                    axis=axis, Xtree=Xtree, I=I, link_body=link_body, link_X=link_X,
                    position_limits=position_limits, velocity_limits=velocity_limits,
                    effort_limits=effort_limits, damping=damping, friction=friction,
                    root_link=root, ros2_control=ros2_control, mimic=mimic, warnings=warnings,
                    urdf_joints=urdf_joints, link_masses=link_masses, soft_limits=soft_limits)
        massless = model.massless_joints
        if massless:
            model.warnings += (f'joints {list(massless)} move no mass or inertia about their '
                               f'axis: the mass matrix is singular (rnea, gravity, bias and crba '
                               f'are fine; aba refuses)',)
        return model


def _frozen(a):
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a
