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
feedforward_node with config/feedforward.yaml (or your params file).

    ros2 launch robot_dynamics_ros feedforward.launch.py [params_file:=/path/to.yaml]
        [mode:=computed_torque] [command_topic:=/effort_controller/commands] [namespace:=arm]
        [urdf_file:=/path/arm.urdf.xacro] [xacro_args:="name:=value ..."]

The params file is the source of truth: ``mode:=`` overrides its mode only when given on the
command line. robot_description comes from the robot_description topic (robot_state_publisher),
or from urdf_file when given.
What this starts is decided by robot_dynamics_ros.nodes.launch_setup (tested without the launch
system); this file only turns it into launch actions.
"""
import tempfile

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from robot_dynamics_ros.nodes import launch_setup


def _nodes(context):
    given = {name: LaunchConfiguration(name).perform(context)
             for name, _, _ in launch_setup.feedforward_arguments()}
    folder = tempfile.mkdtemp(prefix='robot_dynamics_ros_launch_')     # dict parameters' files
    return [Node(package=n.package, executable=n.executable, name=n.name, namespace=n.namespace,
                 parameters=launch_setup.params_files(n, folder), remappings=list(n.remappings),
                 output='screen')
            for n in launch_setup.feedforward_nodes(**given)]


def generate_launch_description():
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=text)
         for name, default, text in launch_setup.feedforward_arguments()]
        + [OpaqueFunction(function=_nodes)])
