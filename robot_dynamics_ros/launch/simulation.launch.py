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
The closed loop: simulator_node (ABA) and feedforward_node (computed torque) on one arm.

    ros2 launch robot_dynamics_ros simulation.launch.py [urdf_file:=/path/arm.urdf]
        [mode:=feedforward] [with_state_publisher:=true]

simulator_node publishes the URDF on robot_description (transient local), so the controller
finds it; with_state_publisher also starts robot_state_publisher (TF for RViz) on a real install.
config/simulation.yaml is the source of truth (computed_torque); mode:= overrides it when given.
Send a trajectory to /inverse_dynamics_controller/joint_trajectory.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def _controller(context, params):
    mode = LaunchConfiguration('mode').perform(context)
    return [Node(package='robot_dynamics_ros', executable='feedforward_node',
                 name='inverse_dynamics_controller', output='screen',
                 parameters=[params] + ([{'mode': mode}] if mode else []))]


def generate_launch_description():
    share = FindPackageShare('robot_dynamics_ros')
    params = PathJoinSubstitution([share, 'config', 'simulation.yaml'])
    urdf = LaunchConfiguration('urdf_file')
    return LaunchDescription([
        DeclareLaunchArgument('urdf_file',
                              default_value=PathJoinSubstitution(
                                  [share, 'urdf', 'planar_2r.urdf'])),
        DeclareLaunchArgument('mode', default_value='',
                              description='override the YAML\'s mode (computed_torque)'),
        DeclareLaunchArgument('with_state_publisher', default_value='false',
                              description='also start robot_state_publisher (TF)'),
        Node(package='robot_dynamics_ros', executable='simulator_node', name='dynamics_simulator',
             output='screen', parameters=[params, {'urdf_file': urdf}]),
        OpaqueFunction(function=_controller, args=[params]),
        Node(package='robot_state_publisher', executable='robot_state_publisher',
             name='robot_state_publisher', output='screen',
             condition=IfCondition(LaunchConfiguration('with_state_publisher')),
             parameters=[{'robot_description': ParameterValue(Command(['cat ', urdf]),
                                                              value_type=str)}],
             remappings=[('robot_description', 'robot_description_rsp')]),
    ])
