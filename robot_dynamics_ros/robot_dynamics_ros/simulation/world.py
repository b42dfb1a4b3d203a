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
The simulator's world: static shapes the arm can touch, and the contact law's parameters.

A world file is YAML, every pose in the frame of the description's root link (the simulator's
world frame)::

    contact:                    # optional; these are the defaults
      stiffness: 2.0e5          # N/m, per contact point, normal and tangential
      damping_ratio: 1.0        # of each point's normal and tangential spring
      friction: 0.5             # Coulomb coefficient (stick while the tangential force stays
                                # within friction x normal force, else slip at that force)
    shapes:
      - name: table             # unique; a shape without a name is called shape<k>
        type: box               # box or plane
        size: [0.8, 1.2, 0.05]  # m, full extents along the box's x, y, z
        xyz: [0.5, 0.0, -0.025] # m, the box's centre
        rpy: [0.0, 0.0, 0.0]    # rad, as a URDF <origin>
        friction: 0.3           # optional: this shape's coefficient instead of contact's
      - name: floor
        type: plane             # the half-space below the plane is solid
        xyz: [0.0, 0.0, -0.8]   # a point on the plane
        normal: [0.0, 0.0, 1.0] # out of the solid (need not be unit length)

``World.parse`` refuses anything else with a message naming the entry (a YAML error, an unknown
key or type, a size that is not positive, a zero normal, a duplicate name, ...).
"""
from dataclasses import dataclass, field

import numpy as np

from ..dynamics.model import _rpy_matrix

CONTACT_DEFAULTS = {'stiffness': 2.0e5, 'damping_ratio': 1.0, 'friction': 0.5}
SHAPE_TYPES = ('box', 'plane')
_SHAPE_KEYS = {'box': {'name', 'type', 'size', 'xyz', 'rpy', 'friction'},
               'plane': {'name', 'type', 'xyz', 'normal', 'friction'}}


@dataclass(frozen=True)
class Shape:
    """
    A static shape: a box (``half`` its half extents) or a plane (the solid below z = 0).

    ``rotation`` and ``position`` place the shape's frame in the world: a box's centre and axes;
    a plane's point and a frame whose z is the plane's normal.
    """

    name: str
    type: str
    rotation: np.ndarray
    position: np.ndarray
    half: np.ndarray = field(default_factory=lambda: np.zeros(3))
    friction: float = float('nan')      # NaN: the world's

    @property
    def normal(self):
        return self.rotation[:, 2].copy()

    def signed_distance(self, x):
        """Signed distance of world points ``x`` (..., 3) to the shape (negative inside)."""
        y = (np.asarray(x, dtype=float) - self.position) @ self.rotation
        if self.type == 'plane':
            return y[..., 2]
        d = np.abs(y) - self.half
        outside = np.linalg.norm(np.maximum(d, 0.0), axis=-1)
        return outside + np.minimum(d.max(axis=-1), 0.0)


@dataclass(frozen=True)
class World:
    """The shapes and the contact law's parameters (``contact``: see CONTACT_DEFAULTS)."""

    shapes: tuple = ()
    contact: dict = field(default_factory=lambda: dict(CONTACT_DEFAULTS))
    source: str = 'no world'

    def shape(self, name):
        for s in self.shapes:
            if s.name == name:
                return s
        raise KeyError(f'no shape "{name}" in {self.source} (shapes: '
                       f'{[s.name for s in self.shapes]})')

    def friction(self, shape):
        return self.contact['friction'] if np.isnan(shape.friction) else shape.friction

    def without(self, name):
        """Return this world without the shape ``name`` (KeyError when there is none)."""
        self.shape(name)
        return World(tuple(s for s in self.shapes if s.name != name), dict(self.contact),
                     self.source)

    def moved(self, name, xyz):
        """Return this world with the shape ``name`` moved to ``xyz`` (its rotation kept)."""
        self.shape(name)
        xyz = _vector(xyz, 3, f'shape "{name}": xyz')
        return World(tuple(Shape(s.name, s.type, s.rotation, xyz, s.half, s.friction)
                           if s.name == name else s for s in self.shapes),
                     dict(self.contact), self.source)

    @classmethod
    def from_file(cls, path):
        """Read a world file (see the module doc); ValueError naming the file and the entry."""
        try:
            with open(path, encoding='utf-8') as f:
                text = f.read()
        except OSError as e:
            raise ValueError(f'world_file "{path}": cannot read it ({e.strerror})') from None
        return cls.parse(text, f'world_file "{path}"')

    @classmethod
    def parse(cls, text, source='the world'):
        """Build a world of YAML text (see the module doc); ValueError naming the entry."""
        import yaml
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise ValueError(f'{source} is not valid YAML: {e}') from None
        if doc is None:
            doc = {}
        if not isinstance(doc, dict):
            raise ValueError(f'{source}: expected a mapping with "shapes" (and "contact"), got '
                             f'{type(doc).__name__}')
        unknown = set(doc) - {'shapes', 'contact'}
        if unknown:
            raise ValueError(f'{source}: unknown key(s) {sorted(unknown)} (a world file has '
                             f'"shapes" and "contact")')
        contact = dict(CONTACT_DEFAULTS)
        given = doc.get('contact') or {}
        if not isinstance(given, dict):
            raise ValueError(f'{source}: "contact" must be a mapping of {list(CONTACT_DEFAULTS)}')
        for key, value in given.items():
            if key not in CONTACT_DEFAULTS:
                raise ValueError(f'{source}: contact: unknown key "{key}" (known: '
                                 f'{list(CONTACT_DEFAULTS)})')
            contact[key] = _number(value, f'{source}: contact: {key}',
                                   positive=key != 'friction')
        shapes_doc = doc.get('shapes') or []
        if not isinstance(shapes_doc, list):
            raise ValueError(f'{source}: "shapes" must be a list')
        shapes, names = [], set()
        for k, entry in enumerate(shapes_doc):
            shape = _shape(entry, k, source)
            if shape.name in names:
                raise ValueError(f'{source}: two shapes are called "{shape.name}"')
            names.add(shape.name)
            shapes.append(shape)
        return cls(tuple(shapes), contact, source)


def _shape(entry, k, source):
    where = f'{source}: shapes[{k}]'
    if not isinstance(entry, dict):
        raise ValueError(f'{where} must be a mapping, got {entry!r}')
    kind = entry.get('type')
    if kind not in SHAPE_TYPES:
        raise ValueError(f'{where}: type must be one of {list(SHAPE_TYPES)}, got {kind!r}')
    name = str(entry.get('name', f'shape{k}'))
    where = f'{source}: shape "{name}"'
    unknown = set(entry) - _SHAPE_KEYS[kind]
    if unknown:
        raise ValueError(f'{where}: unknown key(s) {sorted(unknown)} for a {kind} (known: '
                         f'{sorted(_SHAPE_KEYS[kind])})')
    xyz = _vector(entry.get('xyz', [0.0, 0.0, 0.0]), 3, f'{where}: xyz')
    friction = (float('nan') if entry.get('friction') is None else
                _number(entry['friction'], f'{where}: friction', positive=False))
    if kind == 'box':
        if 'size' not in entry:
            raise ValueError(f'{where}: a box needs size: [x, y, z] (m)')
        size = _vector(entry['size'], 3, f'{where}: size')
        if np.any(size <= 0):
            raise ValueError(f'{where}: size must be > 0 along each axis, got {size.tolist()}')
        R = _rpy_matrix(_vector(entry.get('rpy', [0.0, 0.0, 0.0]), 3, f'{where}: rpy'))
        return Shape(name, kind, R, xyz, size / 2, friction)
    normal = _vector(entry.get('normal', [0.0, 0.0, 1.0]), 3, f'{where}: normal')
    norm = np.linalg.norm(normal)
    if not norm > 1e-9:
        raise ValueError(f'{where}: normal must not be zero')
    z = normal / norm
    # any frame whose z is the normal: x from the world axis least along it
    x = np.eye(3)[int(np.argmin(np.abs(z)))]
    x = x - (x @ z) * z
    x /= np.linalg.norm(x)
    return Shape(name, kind, np.column_stack([x, np.cross(z, x), z]), xyz, np.zeros(3),
                 friction)


def _number(value, what, positive):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f'{what} must be a number, got {value!r}') from None
    if not np.isfinite(v) or (v <= 0 if positive else v < 0):
        raise ValueError(f'{what} must be {"> 0" if positive else ">= 0"} and finite, got {v}')
    return v


def _vector(value, n, what):
    try:
        v = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f'{what} must be {n} numbers, got {value!r}') from None
    if v.shape != (n,) or not np.all(np.isfinite(v)):
        raise ValueError(f'{what} must be {n} finite numbers, got {value!r}')
    return v
