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
Forward-dynamics simulation (ABA) without ROS: integration, friction, joint limits.

Calls ``dynamics``; imports no ROS (``nodes/simulator_node.py`` is its ROS adapter).
"""
from .arm import SimulatedArm
from .command_limits import CommandLimiter
from .sensors import Sensors
from .simulator import (INTEGRATORS, START_MARGIN, SimulationDiverged, Simulator, initial_pose,
                        start_pose)

__all__ = ['Simulator', 'SimulationDiverged', 'SimulatedArm', 'Sensors', 'CommandLimiter',
           'INTEGRATORS',
           'initial_pose', 'start_pose', 'START_MARGIN', 'warmup']

# a ball on a carriage (two prismatic joints) over a floor: the smallest arm that touches
_BALL = '''<robot name="warmup"><link name="base"/>
<joint name="x" type="prismatic"><parent link="base"/><child link="carriage"/>
<axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="100" velocity="10"/></joint>
<link name="carriage"><inertial><mass value="0.5"/>
<inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="z" type="prismatic"><parent link="carriage"/><child link="ball"/>
<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="100" velocity="10"/></joint>
<link name="ball"><inertial><mass value="1"/>
<inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial>
<collision><geometry><sphere radius="0.05"/></geometry></collision></link></robot>'''


def warmup():
    """Compile (or load from numba's cache) the simulator's kernels, contact included."""
    from ..dynamics import RobotModel, example_urdf
    from .geometry import arm_geometry
    from .world import World
    Simulator(RobotModel.from_urdf_file(example_urdf())).step([0.0, 0.0])
    model = RobotModel.from_urdf(_BALL)
    sim = Simulator(model, world=World.parse('shapes: [{type: plane, xyz: [0, 0, 0]}]'),
                    geometry=arm_geometry(model, _BALL), q0=[0.0, 0.02])
    sim.step([0.0, 0.0])        # in contact: the ball's centre 2 cm above the floor, radius 5 cm
