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

The params file is the source of truth: ``mode:=`` overrides its mode only when given on the
command line. robot_description comes from the robot_description topic (robot_state_publisher).
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def _controller(context):
    overrides = {}
    mode = LaunchConfiguration('mode').perform(context)
    if mode:                        # only when given: else the params file decides
        overrides['mode'] = mode
    return [Node(
        package='robot_dynamics_ros',
        executable='feedforward_node',
        name='inverse_dynamics_controller',
        namespace=LaunchConfiguration('namespace'),
        output='screen',
        parameters=[LaunchConfiguration('params_file')] + ([overrides] if overrides else []),
        remappings=[('effort_controller/commands', LaunchConfiguration('command_topic'))],
    )]


def generate_launch_description():
    default_params = PathJoinSubstitution(
        [FindPackageShare('robot_dynamics_ros'), 'config', 'feedforward.yaml'])
    return LaunchDescription([
        DeclareLaunchArgument('params_file', default_value=default_params,
                              description='parameters of inverse_dynamics_controller'),
        DeclareLaunchArgument('mode', default_value='',
                              description='gravity | feedforward | computed_torque; empty: the '
                                          'params file\'s mode'),
        DeclareLaunchArgument('command_topic', default_value='effort_controller/commands',
                              description='the ForwardCommandController command topic'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='namespace of the node (and of its relative topics)'),
        OpaqueFunction(function=_controller),
    ])
