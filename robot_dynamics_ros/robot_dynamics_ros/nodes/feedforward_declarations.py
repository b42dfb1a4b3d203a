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
feedforward_node's declarations: its parameters, topics and services.

The one source of each parameter's name, default and description: the node declares from it,
and ``--help``, the docs and the README's tables are rendered from it. What a value of one
number or one word must be is its rule in ``control.configuration`` (``constraint``), which
the node checks values by and shows in the descriptors, ``--help`` and the docs.
"""
from ..control import (FORCE_DEFAULTS, LIMIT_DEFAULTS, MODES, OBSERVER_GAIN, PROJECTORS,
                       TASK_DEFAULTS, TIMEOUT_BEHAVIOURS, configuration)
from .shared_declarations import FILE_PARAMETERS


def constraint(name):
    """Return what a value of parameter ``name`` must be (its rule's text), or ''."""
    rule = configuration.rule(name)
    return rule.text if rule is not None else ''


# name: (kind, default, description, read_only). Also per model joint, declared once the model is
# known: default_positions.<joint> (float) and effort_limits.<joint> (float, the URDF's limit).
PARAMETERS = {
    'robot_description': (str, '', 'URDF, used when the robot_description topic has none', False),
    'urdf_file': (str, '', 'URDF or .xacro file to take the description from instead of the '
                           'robot_description topic (which is then not read) and parameter', True),
    **FILE_PARAMETERS,
    'mode': (str, 'gravity', f'one of {", ".join(MODES)}', False),
    'joints': ('str[]', [], 'commanded joints, the order of the command array (empty: the '
                            'effort joints of the <ros2_control> blocks, else every movable '
                            'joint in model order)', True),
    'kp': ('float[]', [100.0], 'computed_torque position gains: one for all or one per joint',
           False),
    'kd': ('float[]', [20.0], 'computed_torque velocity gains: one for all or one per joint',
           False),
    'hardware_compensates_gravity': (bool, False, 'subtract g(q) from the output', False),
    'state_timeout': (float, 0.1, 'joint_states older than this (s) trigger on_timeout; with '
                      'use_sim_time, stamped ones only if also this old in simulated time', False),
    'on_timeout': (str, 'gravity', f'what to command on stale joint_states: '
                                   f'{", ".join(TIMEOUT_BEHAVIOURS)} (gravity: g(q) at the last '
                                   f'known q, which holds an arm at rest; zero drops it)',
                   False),
    'rate': (float, 0.0, 'command rate in Hz; 0: on every joint_states message', True),
    'payload.link': (str, '', 'link carrying the payload (empty: none)', False),
    'payload.mass': (float, 0.0, 'payload mass (kg)', False),
    'payload.com': ('float[]', [0.0, 0.0, 0.0], 'payload centre of mass in the link frame (m)',
                    False),
    'payload.inertia': ('float[]', [0.0] * 6, 'payload inertia about its CoM: ixx ixy ixz iyy '
                                              'iyz izz (kg m^2)', False),
    'friction_compensation': (float, 0.0, 'share (0..1) of the joint friction added to the '
                                          'output: b qd + fc tanh(qd / '
                                          'friction_velocity_epsilon) + torque_offset, on the '
                                          'desired velocity along a trajectory, none while '
                                          'holding a pose, the one the target twist asks in '
                                          'the task modes, the measured one in gravity mode',
                                          False),
    'friction_velocity_epsilon': (float, 0.01, 'velocity scale of the smooth Coulomb sign (rad/s '
                                               'or m/s)', False),
    'damping': ('float[]', [], 'viscous friction b per model joint for the compensation (one for '
                               'all or one per joint; empty: the URDF <dynamics damping>)', False),
    'friction': ('float[]', [], 'Coulomb friction fc per model joint for the compensation (one '
                                'for all or one per joint; empty: the URDF <dynamics friction>)',
                 False),
    'torque_offset': ('float[]', [], 'torque offset fo per model joint, any sign (one for all or '
                                     'one per joint; empty: zero): a torque sensor\'s bias, or '
                                     'with fc a friction that differs with the direction (fc + fo '
                                     'forwards, fc - fo backwards), as identification finds',
                      False),
    'effort_gain': ('float[]', [1.0], 'torque per unit of the joint_states effort (one for all or '
                                      'one per model joint, > 0): 1 for efforts in N m; for a '
                                      'driver that reports motor current, the N m per A that '
                                      'identification with effort units current found',
                    False),
    'observer.enabled': (bool, True, 'estimate the external joint torques with the '
                                     'generalized-momentum observer, on ~/external_torques',
                         False),
    'observer.gain': ('float[]', [OBSERVER_GAIN], 'observer gain K_O (1/s; one for all or one per '
                                                  'model joint): the estimate follows the '
                                                  'external torques with time constant 1/K_O',
                      False),
    'observer.torque_source': (str, 'auto', 'the motor torques the observer takes: measured (the '
                                            'effort field of joint_states), commanded (what this '
                                            'node last sent, plus g(q) with '
                                            'hardware_compensates_gravity) or auto (measured '
                                            'when every model joint has an effort, else '
                                            'commanded)', False),
    'collision.thresholds': ('float[]', [0.0], 'a collision when an estimated external torque '
                                               'exceeds its threshold (N m; one for all or one '
                                               'per model joint; 0: not watched)', False),
    'collision.reaction': (str, 'hold', 'on a collision: none, hold (computed-torque hold of the '
                                        'pose at detection, trajectory dropped) or float '
                                        '(gravity compensation only); until ~/reset_collision',
                           False),
    'trajectory_scaling': (str, 'off', 'what to do with a trajectory the arm cannot manage (a '
                                       'torque or velocity over its limit, as ~/check_trajectory '
                                       'finds): off (run it), reject (refuse it) or scale '
                                       '(stretch every time_from_start by k*, the smallest '
                                       'factor that fits)', False),
    'allow_partial_joints_goal': (bool, False, 'FollowJointTrajectory goals may name some of the '
                                               'commanded joints; the others hold where they '
                                               'are (false: INVALID_JOINTS)', False),
    'allow_nonzero_velocity_at_trajectory_end': (bool, False, 'accept goals whose last point has '
                                                              'a velocity (false: INVALID_GOAL)',
                                                 False),
    'constraints.goal_time': (float, 0.0, 'FollowJointTrajectory goals without '
                                          'goal_time_tolerance: how long after the last point '
                                          '(s) the joints may take to come within their goal '
                                          'tolerance, then GOAL_TOLERANCE_VIOLATED (0: no limit)',
                              False),
    'constraints.stopped_velocity_tolerance': (float, 0.01, 'a goal succeeds once every joint is '
                                                            'slower than this (rad/s or m/s; 0: '
                                                            'not checked), for goals that give '
                                                            'no goal velocity tolerance', False),
    'action_monitor_rate': (float, 20.0, 'FollowJointTrajectory feedback rate (Hz)', False),
    'torques_every': (int, 1, 'publish ~/torques with every N-th command (0: never); a monitor '
                              'only, the commands go out either way (but simulator_node in '
                              'lockstep steps on each answer: 1 there)', False),
    'external_torques_every': (int, 1, 'publish ~/external_torques with every N-th estimate (0: '
                                       'never); the observer and collision detection run on '
                                       'every state either way', False),
    'armature': ('float[]', [], 'rotor inertia reflected to each joint, added to the mass matrix '
                                'diagonal: one for all or one per model joint (kg m^2; kg for '
                                'prismatic joints; empty: none)', True),
    'task.frame': (str, TASK_DEFAULTS['frame'], 'the link the task modes control (empty: a '
                                                'tool link on the deepest revolute commanded '
                                                'joint not a gripper\'s; named in the start-up '
                                                'log)', False),
    'task.stiffness': ('float[]', list(TASK_DEFAULTS['stiffness']),
                       'task-space stiffness K: x y z (N/m), then about x y z (N m/rad), root '
                       'axes; 0 on every axis: hand guiding; a change ramps over 0.5 s', False),
    'task.damping_ratio': ('float[]', list(TASK_DEFAULTS['damping_ratio']),
                           'damping ratio per axis (1 or 6 values; 1: critical): D = 2 zeta '
                           'sqrt(K Lambda_ii)', False),
    'task.min_damping': ('float[]', list(TASK_DEFAULTS['min_damping']),
                         'the least task-space damping (1 or 6 values: N s/m x3, N m s/rad x3): '
                         'with zero stiffness (hand guiding) the ratio gives none', False),
    'task.max_error': ('float[]', list(TASK_DEFAULTS['max_error']),
                       'the pose error is clipped to this (m, rad): a far target asks at most K '
                       'max_error', False),
    'task.max_torque_rate': ('float[]', [],
                             'deprecated: use limits.max_torque_rate (taken as it when that is '
                             'empty, with a warning)', False),
    'task.force_axes': ('float[]', [float(a) for a in FORCE_DEFAULTS['axes']],
                        'six 0/1: the axes (x y z, about x y z; root axes at the task frame) '
                        'whose force is regulated to ~/target_wrench instead of their pose '
                        '(docs: tutorials/force_control); all 0: none', False),
    'force.source': (str, FORCE_DEFAULTS['source'],
                     'what the force axes measure: sensor (a WrenchStamped on force.topic, the '
                     'tool\'s weight taken out) or observer (the momentum observer\'s estimate, '
                     'no sensor)', False),
    'force.topic': (str, FORCE_DEFAULTS['topic'],
                    'the force/torque sensor\'s WrenchStamped (frame_id: a link of the '
                    'description)', True),
    'force.gain': ('float[]', list(FORCE_DEFAULTS['gain']),
                   'speed per force error on the force axes (m/s per N x3, rad/s per N m x3; '
                   'one or six), at most 0.5 / the damping used (the loop\'s gain against a '
                   'rigid surface at most 0.5)', False),
    'force.integral_gain': ('float[]', list(FORCE_DEFAULTS['integral_gain']),
                            'integral of the force error (m/s per N s x3, rad/s per N m s x3), '
                            'with anti-windup: what the model gets wrong', False),
    'force.damping': ('float[]', list(FORCE_DEFAULTS['damping']),
                      'the velocity servo along the force axes (N s/m x3, N m s/rad x3)', False),
    'force.max_speed': ('float[]', list(FORCE_DEFAULTS['max_speed']),
                        'the force axes never move faster than this (m/s, rad/s): a slow '
                        'approach, no fling when the contact is lost', False),
    'force.timeout': (float, FORCE_DEFAULTS['timeout'], 'a sensor silent for this long (s): the '
                                                        'force axes hold their position', False),
    'task.target_timeout': (float, 0.5, 'a ~/target_twist stream silent for this long (s; '
                                        'simulated with use_sim_time) is taken as stopped: the '
                                        'target holds where it got to (0: never)', False),
    'nullspace.stiffness': ('float[]', list(TASK_DEFAULTS['nullspace_stiffness']),
                            'stiffness towards the posture in the task modes (N m/rad; one for '
                            'all or one per commanded joint)', False),
    'nullspace.damping_ratio': ('float[]', list(TASK_DEFAULTS['nullspace_damping_ratio']),
                                'damping ratio of the nullspace posture (one or one per '
                                'commanded joint)', False),
    'nullspace.posture': ('float[]', list(TASK_DEFAULTS['posture']),
                          'joint positions the nullspace holds, in joints order (empty: where '
                          'the joints were when the task mode became active)', False),
    'nullspace.projector': (str, TASK_DEFAULTS['projector'],
                            f'one of {", ".join(PROJECTORS)}: dynamic (no acceleration of the '
                            f'task frame) or kinematic (no static force at it)', False),
    'limits.position_margin': (float, LIMIT_DEFAULTS['position_margin'],
                               'the least distance (rad or m) between a joint\'s soft and hard '
                               'position limits, at most a quarter of its range: the soft '
                               'limits are the URDF <safety_controller>\'s, moved in to this, '
                               'else the hard limits less this; a joint is held inside its '
                               'soft limits in every mode', False),
    'limits.position_gain': (float, LIMIT_DEFAULTS['position_gain'],
                             'k_position (1/s) where the URDF gives none, and of the workspace '
                             'walls: the speed allowed towards a soft limit or wall is this '
                             'times the distance to it (and what a braking at half the effort '
                             'limit allows)', False),
    'limits.velocity_scale': (float, LIMIT_DEFAULTS['velocity_scale'],
                              'every joint moves at most this times its URDF velocity limit, in '
                              'every mode (0 < scale <= 1)', False),
    'limits.response_time': (float, LIMIT_DEFAULTS['response_time'],
                             'time constant (s) with which a joint or the frame is brought back '
                             'within a velocity bound (the gain is the inertia over it)', False),
    'limits.max_torque_rate': ('float[]', list(LIMIT_DEFAULTS['max_torque_rate']),
                               'in every mode each effort changes by at most this (N m/s; one '
                               'for all or one per commanded joint; empty: 20 times each '
                               'joint\'s effort limit, at least 1000): gains, mode, payload, '
                               'targets and trajectories changing at runtime are ramped; too '
                               'low for stiff gains, the loop oscillates', False),
    'limits.frame': (str, LIMIT_DEFAULTS['frame'], 'the link the workspace box and tool speed '
                                                   'limit hold (empty: the task frame)', False),
    'limits.workspace': ('float[]', list(LIMIT_DEFAULTS['workspace']),
                         'a box (m, root axes) that limits.frame\'s origin does not leave: x y z '
                         'of its lower corner, then of its upper (empty: no box); its faces are '
                         'virtual walls that push back', False),
    'limits.tool_speed': (float, LIMIT_DEFAULTS['tool_speed'], 'the most limits.frame\'s origin '
                                                               'may move (m/s; inf: no limit)',
                          False),
}
DYNAMIC_PREFIXES = ('default_positions.', 'effort_limits.')


def constraint_parameters(joints):
    """(name, description) of the per-joint tolerances of FollowJointTrajectory goals."""
    for j in joints:
        yield (f'constraints.{j}.trajectory', 'path tolerance of the joint\'s position (rad or m; '
                                              '0: not checked) for goals that give none')
        yield (f'constraints.{j}.goal', 'goal tolerance of the joint\'s position (rad or m; 0: '
                                        'not checked) for goals that give none')


SUMMARY = ('Effort commands from inverse dynamics (RNEA) for a URDF arm: gravity compensation, '
           'feedforward, computed torque, Cartesian impedance and operational-space control; '
           'an external-torque observer, collision detection, feasibility checks and payload '
           'estimation.')
# (kind, name, type, what): --help and the reference docs
INTERFACES = (
    ('subscribes', 'robot_description', 'std_msgs/msg/String',
     'transient local, as robot_state_publisher publishes it; not read with urdf_file'),
    ('subscribes', 'joint_states', 'sensor_msgs/msg/JointState',
     'best effort; merged per joint: each message updates the joints it names'),
    ('subscribes', '/clock', 'rosgraph_msgs/msg/Clock',
     'the simulated time, read with use_sim_time (taken with joint_states, in the loop\'s '
     'thread)'),
    ('subscribes', '~/joint_trajectory', 'trajectory_msgs/msg/JointTrajectory',
     'joint modes; sampled as joint_trajectory_controller does'),
    ('subscribes', '~/target_pose', 'geometry_msgs/msg/PoseStamped',
     'task modes; frame_id empty or the root link'),
    ('subscribes', '~/target_twist', 'geometry_msgs/msg/TwistStamped',
     'task modes, optional; root axes'),
    ('subscribes', '~/target_wrench', 'geometry_msgs/msg/WrenchStamped',
     'task modes; feedforward at the task frame, root axes; on task.force_axes the force asked'),
    ('subscribes', 'force_torque_sensor_broadcaster/wrench', 'geometry_msgs/msg/WrenchStamped',
     'the force.topic parameter: the force/torque sensor, for force.source sensor'),
    ('actions', '~/follow_joint_trajectory', 'control_msgs/action/FollowJointTrajectory',
     "joint modes; joint_trajectory_controller's contract: what MoveIt sends"),
    ('publishes', 'effort_controller/commands', 'std_msgs/msg/Float64MultiArray',
     'the efforts in joints order; remap to your ForwardCommandController'),
    ('publishes', '~/torques', 'sensor_msgs/msg/JointState',
     'the commanded efforts; along a trajectory also the desired state'),
    ('publishes', '~/external_torques', 'sensor_msgs/msg/JointState',
     "the observer's estimate in effort, the state it belongs to in position and velocity, "
     'model joints'),
    ('publishes', '~/collision', 'robot_dynamics_msgs/msg/CollisionEvent',
     'once per collision'),
    ('publishes', '~/active_limits', 'robot_dynamics_msgs/msg/ActiveLimits',
     'the limits (joint, wall, speed, effort, torque rate) that shape the command, when that '
     'changes; transient local'),
    ('publishes', '~/current_pose', 'geometry_msgs/msg/PoseStamped',
     'the task frame, with each command; task modes'),
    ('publishes', '~/external_wrench', 'geometry_msgs/msg/WrenchStamped',
     'the external torques as a wrench at the task frame, root axes; task modes'),
    ('services', '~/inverse_dynamics', 'robot_dynamics_msgs/srv/InverseDynamics',
     'efforts for a state and their gravity / Coriolis / inertial / friction split'),
    ('services', '~/check_trajectory', 'robot_dynamics_msgs/srv/CheckTrajectory',
     'torque and velocity feasibility of a trajectory and the time scale that fits'),
    ('services', '~/reset_collision', 'std_srvs/srv/Trigger', 'end the reaction to a collision'),
    ('services', '~/zero_ft_sensor', 'std_srvs/srv/Trigger',
     'zero the force/torque sensor\'s bias at rest (the tool\'s weight and the payload taken '
     'out)'),
    ('services', '~/estimate_payload', 'robot_dynamics_msgs/srv/EstimatePayload',
     'mass and centre of mass of a new tool from the observer at a few poses, each swept '
     'forwards and backwards; apply sets the payload parameters'),
)
NOTES = ('Also, per model joint once the model is known: default_positions.<joint> (float, 0.0: '
         'the position of a joint joint_states never names) and effort_limits.<joint> (float, '
         'the URDF limit: outputs are clamped to it); per commanded joint: '
         'constraints.<joint>.trajectory and constraints.<joint>.goal (float, 0.0: the path and '
         'goal position tolerances of FollowJointTrajectory goals that give none; 0: not '
         'checked).',
         'The monitoring streams ~/torques, ~/external_torques, ~/current_pose and '
         '~/external_wrench are built and published only while something subscribes to them '
         '(volatile topics: a message without a subscriber is lost anyway); the command, '
         '~/collision and ~/active_limits always.')
