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
from .sensors import Sensors
from .simulator import (INTEGRATORS, START_MARGIN, SimulationDiverged, Simulator, initial_pose,
                        start_pose)

__all__ = ['Simulator', 'SimulationDiverged', 'SimulatedArm', 'Sensors', 'INTEGRATORS',
           'initial_pose', 'start_pose', 'START_MARGIN']
