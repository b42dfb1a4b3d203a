"""feedforward_node with config/feedforward.yaml.

    ros2 launch robot_dynamics_ros feedforward.launch.py [mode:=computed_torque]
        [params_file:=/path/to.yaml] [command_topic:=/effort_controller/commands]

robot_description comes from the robot_description topic (robot_state_publisher).
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    default_params = PathJoinSubstitution(
        [FindPackageShare('robot_dynamics_ros'), 'config', 'feedforward.yaml'])
    return LaunchDescription([
        DeclareLaunchArgument('params_file', default_value=default_params,
                              description='parameters of inverse_dynamics_controller'),
        DeclareLaunchArgument('mode', default_value='gravity',
                              description='gravity | feedforward | computed_torque'),
        DeclareLaunchArgument('command_topic', default_value='effort_controller/commands',
                              description='the ForwardCommandController command topic'),
        Node(
            package='robot_dynamics_ros',
            executable='feedforward_node',
            name='inverse_dynamics_controller',
            output='screen',
            parameters=[LaunchConfiguration('params_file'),
                        {'mode': LaunchConfiguration('mode')}],
            remappings=[('effort_controller/commands', LaunchConfiguration('command_topic'))],
        ),
    ])
