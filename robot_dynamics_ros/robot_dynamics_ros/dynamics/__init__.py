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
The math core of robot_dynamics_ros: rigid-body dynamics of fixed-base URDF trees.

No ROS import here; usable as a plain library::

    from robot_dynamics_ros.dynamics import RobotModel, rnea
    model = RobotModel.from_urdf_file('arm.urdf')   # or 'arm.urdf.xacro', xacro_args=[...]
    tau = rnea(model, q, qd, qdd)
"""
from .algorithms import (aba, bias_torques, coriolis_matrix, crba, gravity_torques, momentum,
                         momentum_and_beta, rnea)
from .frames import (dynamically_consistent_inverse, frame_bias_acceleration, frame_jacobian,
                     frame_placement, operational_space_inertia)
from .kernels import compile_kernels
from .model import PRISMATIC, REVOLUTE, RobotModel, mcI, plux
from .urdf import load_description, parse_xacro_args

__all__ = ['RobotModel', 'rnea', 'gravity_torques', 'bias_torques', 'crba', 'aba', 'warmup',
           'compile_kernels', 'frame_placement', 'frame_jacobian', 'frame_bias_acceleration',
           'operational_space_inertia', 'dynamically_consistent_inverse',
           'coriolis_matrix', 'momentum', 'momentum_and_beta',
           'REVOLUTE', 'PRISMATIC', 'mcI', 'plux', 'example_urdf', 'load_description',
           'parse_xacro_args']


def example_urdf(name='planar_2r'):
    """Path of a URDF shipped in the package (``planar_2r``: the lecture notes' 2R arm)."""
    from importlib.resources import files
    path = files('robot_dynamics_ros') / 'urdf' / f'{name}.urdf'
    if not path.is_file():
        raise FileNotFoundError(f'no shipped URDF named {name!r}')
    return str(path)


def warmup():
    """Compile (or load from numba's cache) every kernel the public functions use."""
    import numpy as np
    model = RobotModel.from_urdf_file(example_urdf())
    n = model.n
    for shape in ((n,), (2, n)):
        q = np.full(shape, 0.1)
        tau = rnea(model, q, q, q)
        rnea(model, q, q, q, f_ext={'link2': np.ones(shape[:-1] + (6,))})
        gravity_torques(model, q)
        bias_torques(model, q, q)
        crba(model, q)
        aba(model, q, q, tau)
        aba(model, q, q, tau, f_ext={'link2': np.ones(shape[:-1] + (6,))})
        frame_placement(model, q, 'link2')
        frame_jacobian(model, q, 'link2')
    q = np.full(n, 0.1)
    frame_bias_acceleration(model, q, q, 'link2')
    coriolis_matrix(model, q, q)
    momentum(model, q, q)
    momentum_and_beta(model, q, q)
    # the identification's (identify, excite, ~/estimate_payload)
    from .regressor import regressor
    regressor(model, q, q, q)
    regressor(model, np.full((2, n), 0.1), np.full((2, n), 0.1), np.full((2, n), 0.1))
