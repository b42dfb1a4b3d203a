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
simulator_node's declarations: its parameters, topics and services.

The one source of each parameter's name, default and description: the node declares from it,
and ``--help``, the docs and the README's tables are rendered from it.
"""
from ..simulation import INTEGRATORS, START_MARGIN
from .shared_declarations import FILE_PARAMETERS

# name: (kind, default, description, read_only)
PARAMETERS = {
    'urdf_file': (str, '', 'URDF or .xacro file to simulate (published on robot_description; the '
                           'topic is then not read)', True),
    **FILE_PARAMETERS,
    'robot_description': (str, '', 'URDF string, when there is no urdf_file', True),
    'joints': ('str[]', [], 'command order (empty: the effort joints of the <ros2_control> '
                            'blocks, else every movable joint in model order)', True),
    'initial_positions': ('float[]', [], 'start and reset positions in joints order (empty: the '
                                         'initial_value of the <ros2_control> position state '
                                         'interfaces, else zero clamped to '
                                         f'{START_MARGIN:.0%} of the range inside the limits: '
                                         'off the stops)', False),
    'timestep': (float, 0.001, 'integration step (s)', True),
    'integrator': (str, 'semi_implicit_euler', f'one of {", ".join(INTEGRATORS)}', True),
    'publish_rate': (float, 500.0, 'joint_states rate (Hz of simulated time)', True),
    'command_timeout': (float, 0.0, 'torques go to zero when no command came for this long (s), '
                                    'as a drive with a command watchdog; 0: the last command '
                                    'holds, as ros2_control\'s ForwardCommandController keeps '
                                    'the last message it got', False),
    'enforce_command_limits': (bool, False, 'clamp the held effort command at every step\'s state '
                                            'as ros2_control_node\'s enforce_command_limits '
                                            'does (false by default in Jazzy): no effort '
                                            'further in the direction of motion past a '
                                            'position or velocity limit, and the '
                                            '<safety_controller> band where the URDF has one '
                                            '(docs: concepts/limits)', True),
    'real_time_factor': (float, 1.0, 'simulated seconds per wall second; 0: as fast as possible',
                         True),
    'publish_clock': (bool, False, 'publish the simulated time on /clock (always in lockstep)',
                      True),
    'lockstep': (bool, False, 'advance exactly one step per effort command received and publish '
                              'joint_states and /clock after it (deterministic closed-loop tests, '
                              'independent of CPU load); false: run paced to real_time_factor',
                 True),
    'lockstep_answers': (str, 'inverse_dynamics_controller/torques',
                         'in lockstep, the topic of stamped answers (sensor_msgs/JointState: '
                         'efforts by joint name, stamped with the joint state they answer, as '
                         'feedforward_node\'s ~/torques): one step per answer to the latest '
                         'state, so each command acts from the state it was computed from; '
                         'without a publisher on it, or empty: one step per effort command '
                         '(commands that get no answer leave it waiting, and it says so)',
                         True),
    'hold_until_command': (bool, True, 'hold the initial pose (brakes engaged) until the first '
                                       'effort command; false: integrate from the start', True),
    'paused': (bool, False, 'start paused, the simulated time standing (as Gazebo started '
                            'paused) until ~/pause false, or ~/step: the state still goes out '
                            '(every 0.1 s in lockstep), so peers can start and a test or a '
                            'demo send its first motion for a simulated time of its choosing',
               True),
    'damping': ('float[]', [], 'viscous damping per joint (empty: the URDF <dynamics damping>)',
                True),
    'friction': ('float[]', [], 'Coulomb friction per joint (empty: the URDF <dynamics friction>)',
                 True),
    'friction_asymmetry': ('float[]', [], 'a per joint: Coulomb (and static) friction fc + a '
                                          'moving forwards, fc - a backwards, |a| <= fc (one '
                                          'for all or one per model joint; empty: none)', True),
    'effort_offset': ('float[]', [], 'bias added to each reported effort, as a joint torque '
                                     'sensor has (N m or N; one for all or one per model joint)',
                      True),
    'effort_gain': ('float[]', [], 'torque per reported effort unit: effort = (applied + '
                                   'offset) / gain, a driver that reports motor current (one '
                                   'for all or one per model joint; empty: 1, torques)', True),
    'effort_noise': ('float[]', [], 'standard deviation of white noise on the reported efforts '
                                    '(in their unit; one or one per model joint)', True),
    'effort_resolution': ('float[]', [], 'reported efforts rounded to this step (0: not)',
                          True),
    'position_noise': ('float[]', [], 'standard deviation of white noise on the reported '
                                      'positions (rad or m)', True),
    'position_resolution': ('float[]', [], 'reported positions rounded to this step, an '
                                           'encoder\'s count (0: not)', True),
    'velocity_noise': ('float[]', [], 'standard deviation of white noise on the reported '
                                      'velocities', True),
    'noise_seed': (int, 0, 'seed of the noise (the same run reports the same noise)', True),
    'armature': ('float[]', [], 'rotor inertia reflected to each joint, added to the mass matrix '
                                'diagonal: one for all or one per model joint (kg m^2; kg for '
                                'prismatic joints; empty: none)', True),
    'limit_restitution': (float, 0.0, 'velocity kept (reversed) when a joint hits a position '
                                      'limit: 0 stops it (inelastic), 1 bounces it back '
                                      '(elastic)', True),
    'world_file': (str, '', 'YAML file of static shapes the arm touches (boxes, planes) and the '
                            'contact law (docs: concepts/contact); empty: no world. Set it '
                            'again at runtime to reload the file (a table moved or removed); '
                            'a file that does not load is refused', False),
    'mesh_package_paths': ('str[]', [], 'directories holding the packages that the '
                                        'description\'s package:// collision meshes name (besides '
                                        'the ament index)', True),
    'ft_sensor.joint': (str, '', 'a fixed joint of the description where a six-axis force/'
                                 'torque sensor reads the wrench its child side (the tool) '
                                 'exerts, published as force_torque_sensor_broadcaster does; '
                                 'empty: no sensor', True),
    'ft_sensor.bias': ('float[]', [], 'added to each reading [fx, fy, fz, tx, ty, tz] (N, N m; '
                                      'empty: none)', True),
    'ft_sensor.noise': ('float[]', [], 'standard deviation of white noise on each of the six '
                                       'components (empty: none)', True),
}
SUMMARY = ('An articulated-body (ABA) simulation of a URDF arm: effort commands in, '
           'joint_states out.')
# (kind, name, type, what): --help and the reference docs
INTERFACES = (
    ('subscribes', 'effort_controller/commands', 'std_msgs/msg/Float64MultiArray',
     'efforts in joints order; the last one holds (none for command_timeout > 0: zero '
     'torque)'),
    ('subscribes', 'inverse_dynamics_controller/torques', 'sensor_msgs/msg/JointState',
     'in lockstep (the lockstep_answers parameter): the controller\'s answers, stamped with the '
     'state they answer'),
    ('subscribes', 'robot_description', 'std_msgs/msg/String',
     'transient local; only without urdf_file and the parameter'),
    ('publishes', 'joint_states', 'sensor_msgs/msg/JointState',
     'positions, velocities and the efforts applied, at publish_rate'),
    ('publishes', '/clock', 'rosgraph_msgs/msg/Clock', 'with publish_clock or lockstep'),
    ('publishes', 'robot_description', 'std_msgs/msg/String',
     'transient local; from urdf_file or the parameter'),
    ('publishes', 'force_torque_sensor_broadcaster/wrench', 'geometry_msgs/msg/WrenchStamped',
     'with ft_sensor.joint: the sensor\'s reading in its frame (the joint\'s child link), '
     'with the joint_states'),
    ('publishes', '~/contacts', 'robot_dynamics_msgs/msg/Contacts',
     'with a world: the contacts (link, shape, point, force), with the joint_states'),
    ('publishes', '/diagnostics', 'diagnostic_msgs/msg/DiagnosticArray',
     'OK at 1 Hz, ERROR when the simulation halts'),
    ('services', '~/reset', 'std_srvs/srv/Trigger', 'initial pose, brakes on, fault cleared'),
    ('services', '~/pause', 'std_srvs/srv/SetBool', 'true pauses, false resumes'),
    ('services', '~/step', 'robot_dynamics_msgs/srv/Step', 'advance N steps while paused'),
    ('services', '~/apply_wrench', 'robot_dynamics_msgs/srv/ApplyWrench',
     'push a link, in its frame, for a duration of simulated time'),
)
