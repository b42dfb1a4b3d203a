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
The arm's ``<collision>`` geometry as the simulator's contact sees it: spheres on its bodies.

Each collision element becomes contact spheres (a centre on a body, a radius; radius zero is a
point) whose penetration into a world shape makes a contact:

- ``sphere``: one sphere, exact;
- ``box``: its 8 corners, exact against a plane and a box's faces (a convex polyhedron
  touches a plane first with a vertex); an edge across a world box's edge is not seen;
- ``cylinder``: 16 points on each rim circle: against a plane the deepest point is off by at
  most r (1 - cos(pi/16)) = 1.9 % of the radius;
- ``mesh``: the vertices of its convex hull (coal computes it), at most ``MESH_POINTS``
  spread over it (farthest-point sampling): a stated approximation; concave parts are
  filled. A mesh that cannot be found is skipped with a note naming it.

Links fixed to the root (the base) do not move: their geometry makes no contact.
"""
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from ..dynamics.model import xml_origin

MESH_POINTS = 48
CYLINDER_POINTS = 16


@dataclass(frozen=True)
class ArmGeometry:
    """
    Contact spheres: ``body`` (P,) index, ``points`` (P, 3) in body coordinates, ``radius``.

    ``link`` (P,) indexes ``links``, the URDF link each came from; ``notes`` say what was
    skipped or approximated.
    """

    body: np.ndarray
    points: np.ndarray
    radius: np.ndarray
    link: np.ndarray
    links: tuple
    notes: tuple = ()

    @property
    def size(self):
        return len(self.body)


def no_geometry():
    return ArmGeometry(np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0),
                       np.zeros(0, dtype=np.int64), ())


def resolve_mesh(uri, package_dirs=()):
    """
    Find the file of a mesh ``filename``: ``package://pkg/path``, ``file://path`` or a path.

    A package is looked for in each of ``package_dirs`` (a directory holding ``pkg/``), then in
    the ament index (its share directory). None when no file is found.
    """
    if uri.startswith('file://'):
        path = uri[len('file://'):]
        return path if os.path.isfile(path) else None
    if not uri.startswith('package://'):
        return uri if os.path.isfile(uri) else None
    package, _, rest = uri[len('package://'):].partition('/')
    for d in package_dirs:
        path = os.path.join(d, package, rest)
        if os.path.isfile(path):
            return path
    try:
        from ament_index_python.packages import get_package_share_directory
        path = os.path.join(get_package_share_directory(package), rest)
    except Exception:   # not installed, or no ament index at all
        return None
    return path if os.path.isfile(path) else None


def mesh_points(path, scale=(1.0, 1.0, 1.0), count=MESH_POINTS):
    """At most ``count`` vertices of the convex hull of the mesh in ``path``, spread over it."""
    import coal
    mesh = coal.MeshLoader().load(path, np.asarray(scale, dtype=float))
    mesh.buildConvexHull(False, 'Qt')
    hull = np.array(mesh.convex.points(), dtype=float).reshape(-1, 3)
    return farthest_points(hull, count)


def farthest_points(points, count):
    """``count`` of ``points`` spread over them: each the farthest from those chosen before."""
    if len(points) <= count:
        return points
    chosen = [int(np.argmax(np.linalg.norm(points - points.mean(axis=0), axis=1)))]
    distance = np.linalg.norm(points - points[chosen[0]], axis=1)
    while len(chosen) < count:
        k = int(np.argmax(distance))
        chosen.append(k)
        distance = np.minimum(distance, np.linalg.norm(points - points[k], axis=1))
    return points[chosen]


def _primitive(geometry, where, package_dirs, notes):
    """(points (k, 3) in the element's frame, radius) of one <geometry>, or None (noted)."""
    shape = next(iter(geometry), None)
    if shape is None:
        notes.append(f'{where}: an empty <geometry>, skipped')
        return None
    try:
        if shape.tag == 'sphere':
            return np.zeros((1, 3)), float(shape.get('radius'))
        if shape.tag == 'box':
            half = np.array([float(v) for v in shape.get('size').split()]) / 2
            corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1)
                                for sz in (-1, 1)], dtype=float)
            return corners * half, 0.0
        if shape.tag == 'cylinder':
            r, length = float(shape.get('radius')), float(shape.get('length'))
            a = np.linspace(0, 2 * np.pi, CYLINDER_POINTS, endpoint=False)
            rim = np.column_stack([r * np.cos(a), r * np.sin(a), np.zeros_like(a)])
            return np.vstack([rim + [0, 0, -length / 2], rim + [0, 0, length / 2]]), 0.0
        if shape.tag == 'mesh':
            uri = shape.get('filename', '')
            scale = [float(v) for v in (shape.get('scale') or '1 1 1').split()]
            path = resolve_mesh(uri, package_dirs)
            if path is None:
                notes.append(f'{where}: mesh "{uri}" not found (give the directory holding its '
                             f'package in mesh_package_paths): no contact for it')
                return None
            return mesh_points(path, scale), 0.0
    except (TypeError, ValueError, AttributeError) as e:
        notes.append(f'{where}: unreadable <{shape.tag}> ({e}), skipped')
        return None
    except Exception as e:      # the mesh loader's own errors (a file it cannot read)
        notes.append(f'{where}: cannot load the mesh ({e}), skipped')
        return None
    notes.append(f'{where}: <{shape.tag}> is not supported (sphere, box, cylinder, mesh), '
                 f'skipped')
    return None


def arm_geometry(model, xml, package_dirs=()):
    """Make the contact spheres of the ``<collision>`` elements of ``model``'s URDF ``xml``."""
    root = ET.fromstring(xml.encode('utf-8'))
    body, points, radius, link_of, links, notes = [], [], [], [], [], []
    for link in root.findall('link'):
        name = link.get('name')
        if name not in model.link_names:
            continue
        b, X = model.link_frame(name)
        if b < 0:
            continue                # fixed to the root: it never moves into anything
        # the link frame in body coordinates: X = plux(R^T, p)
        R = X[:3, :3].T
        px = -R @ X[3:, :3]                       # skew(p) = -E^T X[3:, :3], E = R^T
        p = np.array([px[2, 1], px[0, 2], px[1, 0]])
        for k, collision in enumerate(link.findall('collision')):
            geometry = collision.find('geometry')
            where = f'link "{name}" <collision> {k}'
            got = None if geometry is None else _primitive(geometry, where, package_dirs, notes)
            if got is None:
                continue
            pts, r = got
            xyz, Ro = xml_origin(collision)
            in_body = (pts @ Ro.T + xyz) @ R.T + p
            if name not in links:
                links.append(name)
            body += [b] * len(in_body)
            points.append(in_body)
            radius += [r] * len(in_body)
            link_of += [links.index(name)] * len(in_body)
    if not points:
        out = no_geometry()
        return ArmGeometry(out.body, out.points, out.radius, out.link, (), tuple(notes))
    return ArmGeometry(np.array(body, dtype=np.int64), np.vstack(points), np.array(radius),
                       np.array(link_of, dtype=np.int64), tuple(links), tuple(notes))
