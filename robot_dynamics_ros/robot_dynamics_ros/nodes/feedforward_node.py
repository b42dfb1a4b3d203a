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
feedforward_node (node ``inverse_dynamics_controller``): effort commands from inverse dynamics.

Subscribes: ``robot_description`` (transient local; parameter fallback), ``/joint_states``,
``~/joint_trajectory``. Publishes: ``effort_controller/commands`` (std_msgs/Float64MultiArray in
``joints`` order, for ros2_control's ForwardCommandController with interface_name effort; remap
it), ``~/torques`` (sensor_msgs/JointState: desired position and velocity, commanded effort;
stamped with the joint state the efforts answer, or the time they were computed).
Serves ``~/inverse_dynamics`` (robot_dynamics_msgs/srv/InverseDynamics). The arithmetic lives in
``control/controller.py``; this module only translates messages.

joint_states are merged per joint (an arm and its gripper may publish separately); the state is
stale as soon as a commanded joint's last update is older than ``state_timeout``.
"""
import array
import collections
import functools
import sys
import threading
import time

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.time import Time
from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped
from robot_dynamics_msgs.msg import CollisionEvent
from robot_dynamics_msgs.srv import CheckTrajectory, EstimatePayload, InverseDynamics
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from ..control import (MODES, PROJECTORS, TASK_DEFAULTS, TASK_MODES, TIMEOUT_BEHAVIOURS,
                       Controller, default_joints, payload_model, unknown_joint_keys)
from ..control import REACTIONS, MomentumObserver, over_threshold, per_joint
from ..control.task_space import SINGULARITY_DAMPING
from ..dynamics import RobotModel, compile_kernels, gravity_torques
from ..dynamics.frames import quaternion
from ..dynamics.kernels import compile_in_background, load_cached
from .common import (FILE_PARAMETERS, STARTED, STREAM_DEPTH, DescriptionSource, Throttle,
                     coerce_numbers, declare, file_description, log_at, loop_node, run_node,
                     side_node, usage)
from .launch_setup import CONTROLLER
from .payload_service import PayloadService

NODE_NAME = CONTROLLER
BUMPLESS = 0.2          # s over which the efforts move to a new model's (a description change)
# A trajectory is sampled at the stamp of the joint state each command answers (what the arm did
# then), not at this node's clock when the command is computed: with simulated time the clock
# comes on /clock through another callback and can lag the states by tens of ms, then jump
# (measured: 80 ms, steps of 150 N m on the 2R arm in lockstep). A stamp further than this from
# the clock is of another time base (a driver on the system clock, a node on simulated time):
# the clock is taken then, with a warning.
STAMP_TOLERANCE = 0.5   # s

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
    'state_timeout': (float, 0.1, 'joint_states older than this (s) trigger on_timeout', False),
    'on_timeout': (str, 'zero', f'what to command on stale joint_states: '
                                f'{", ".join(TIMEOUT_BEHAVIOURS)}', False),
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
                                          'desired velocity along a trajectory, else the '
                                          'measured one', False),
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
    'observer.gain': ('float[]', [50.0], 'observer gain K_O (1/s; one for all or one per model '
                                         'joint): the estimate follows the external torques '
                                         'with time constant 1/K_O', False),
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
    'torques_every': (int, 1, 'publish ~/torques with every N-th command (0: never); a monitor '
                              'only, the commands go out either way', False),
    'external_torques_every': (int, 1, 'publish ~/external_torques with every N-th estimate (0: '
                                       'never); the observer and collision detection run on '
                                       'every state either way', False),
    'armature': ('float[]', [], 'rotor inertia reflected to each joint, added to the mass matrix '
                                'diagonal: one for all or one per model joint (kg m^2; kg for '
                                'prismatic joints; empty: none)', True),
    'task.frame': (str, TASK_DEFAULTS['frame'], 'the link the task modes control (empty: the '
                                                'child link of the deepest revolute commanded '
                                                'joint)', False),
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
    'task.max_torque_rate': ('float[]', list(TASK_DEFAULTS['max_torque_rate']),
                             'in the task modes each commanded effort changes by at most this '
                             '(N m/s; one for all or one per commanded joint)', False),
    'task.target_timeout': (float, 0.5, 'a ~/target_twist stream silent for this long (s) is '
                                        'taken as stopped: the target holds its last pose (0: '
                                        'never)', False),
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
}
DYNAMIC_PREFIXES = ('default_positions.', 'effort_limits.')
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
    ('subscribes', '~/joint_trajectory', 'trajectory_msgs/msg/JointTrajectory',
     'joint modes; sampled as joint_trajectory_controller does'),
    ('subscribes', '~/target_pose', 'geometry_msgs/msg/PoseStamped',
     'task modes; frame_id empty or the root link'),
    ('subscribes', '~/target_twist', 'geometry_msgs/msg/TwistStamped',
     'task modes, optional; root axes'),
    ('subscribes', '~/target_wrench', 'geometry_msgs/msg/WrenchStamped',
     'task modes; feedforward at the task frame, root axes'),
    ('publishes', 'effort_controller/commands', 'std_msgs/msg/Float64MultiArray',
     'the efforts in joints order; remap to your ForwardCommandController'),
    ('publishes', '~/torques', 'sensor_msgs/msg/JointState',
     'the commanded efforts; along a trajectory also the desired state'),
    ('publishes', '~/external_torques', 'sensor_msgs/msg/JointState',
     "the observer's estimate in effort, the state it belongs to in position and velocity, "
     'model joints'),
    ('publishes', '~/collision', 'robot_dynamics_msgs/msg/CollisionEvent',
     'once per collision'),
    ('publishes', '~/current_pose', 'geometry_msgs/msg/PoseStamped',
     'the task frame, with each command; task modes'),
    ('publishes', '~/external_wrench', 'geometry_msgs/msg/WrenchStamped',
     'the external torques as a wrench at the task frame, root axes; task modes'),
    ('services', '~/inverse_dynamics', 'robot_dynamics_msgs/srv/InverseDynamics',
     'efforts for a state and their gravity / Coriolis / inertial / friction split'),
    ('services', '~/check_trajectory', 'robot_dynamics_msgs/srv/CheckTrajectory',
     'torque and velocity feasibility of a trajectory and the time scale that fits'),
    ('services', '~/reset_collision', 'std_srvs/srv/Trigger', 'end the reaction to a collision'),
    ('services', '~/estimate_payload', 'robot_dynamics_msgs/srv/EstimatePayload',
     'mass and centre of mass of a new tool from the observer at a few poses (swept where the '
     'model has friction); apply sets the payload parameters'),
)
NOTES = ('Also, per model joint once the model is known: default_positions.<joint> (float, 0.0: '
         'the position of a joint joint_states never names) and effort_limits.<joint> (float, '
         'the URDF limit: outputs are clamped to it).',)

TORQUE_SOURCES = ('auto', 'measured', 'commanded')
OBSERVER_KERNELS = ['observer_step']            # what MomentumObserver.update runs
SCALINGS = ('off', 'reject', 'scale')
JOINT_STATE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
# A task stiffness K on an axis of task-space inertia Lambda has the natural frequency
# w = sqrt(K / Lambda); with the loop's period T (joint_states to command, and the delay that
# comes with it) a w T above this is worth a warning: the critically damped loop's damping gain
# 2 w acts a period late (the case: a bare URDF wrist, 0.001 kg m^2 at 30 N m/rad, w T
# = 0.17-0.35 at 1-2 ms, oscillated).
BANDWIDTH_LIMIT = 0.1
# joint_states without a model for this long (s) is worth a warning; a healthy launch gets its
# description a little after the first joint_states (DDS matching), up to ~2.9 s measured
NO_MODEL_GRACE = 3.0


def _locked(method):
    """Run ``method`` holding the node's lock (the control loop runs in a thread of its own)."""
    @functools.wraps(method)
    def wrapper(self, *args):
        with self.lock:
            return method(self, *args)
    return wrapper


def _field_view(msg, field, n):
    """
    Set a float64[] ``field`` of ``msg`` to n zeros; return a numpy view of the message's array.

    Writing the view updates the message: no conversion, allocation or per-element check per
    publish (the field's setter would copy a new array each time).
    """
    setattr(msg, field, array.array('d', bytes(8 * n)))
    return np.frombuffer(getattr(msg, field), dtype=np.float64)


class Outputs:
    """The messages the control loop publishes, built once per controller and refilled."""

    def __init__(self, ctrl):
        k, n = len(ctrl.joints), ctrl.base_model.n
        self.command_msg = Float64MultiArray()
        self.command = _field_view(self.command_msg, 'data', k)
        # ~/torques: efforts only, or with the desired state when there is a trajectory
        self.torques_msg = JointState(name=list(ctrl.joints))
        self.effort = _field_view(self.torques_msg, 'effort', k)
        self.desired_msg = JointState(name=list(ctrl.joints))
        self.desired = [_field_view(self.desired_msg, f, k)
                        for f in ('position', 'velocity', 'effort')]
        self.external_msg = JointState(name=list(ctrl.base_model.joint_names))
        self.external = [_field_view(self.external_msg, f, n)
                         for f in ('position', 'velocity', 'effort')]
        self.pose_msg = PoseStamped()
        self.pose_msg.header.frame_id = ctrl.base_model.root_link
        self.wrench_msg = WrenchStamped()
        self.wrench_msg.header.frame_id = ctrl.base_model.root_link
        self.commands = self.estimates = 0       # counts, for torques_every and the like


class FeedforwardNode(Node):

    def __init__(self):
        super().__init__(NODE_NAME)
        self.values = {name: declare(self, name, kind, default, desc, ro)
                       for name, (kind, default, desc, ro) in PARAMETERS.items()}
        self.ctrl = None
        self.bump = None            # [offset, start] while a model change fades in
        self.model = None
        self.state_stamp = None
        self.stale = None               # the stale (or missing) commanded joints being reported
        # recent intervals (s) between commanded-joint updates
        self.gaps = collections.deque(maxlen=20)
        self.last_update = None
        self._warned = set()
        self._no_model_since = None         # when joint_states first came without a model
        self.throttle = Throttle(self.get_logger())
        self._declaring = False
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)

        problem = self._check(self.values)
        if problem:
            raise SystemExit(f'[{NODE_NAME}] invalid parameter: {problem}')

        self.observer, self.thresholds = None, None
        # the observer runs once its kernel is loaded; on a fresh install it compiles in a child
        # process (compile_in_background) while the commands flow
        self.observer_ready, self.observer_compiling = False, None
        self.watched = False            # any collision threshold > 0
        self._observed = None             # the time of the observer's last sample
        self.efforts = self.effort_seen = self.motor = None     # model order
        self.collided = False
        self.armed = False                # collision detection (see _observe)
        self.out = None                   # preallocated messages (Outputs)
        self.cmd_pub = self.create_publisher(Float64MultiArray, 'effort_controller/commands', 10)
        self.torque_pub = self.create_publisher(JointState, '~/torques', STREAM_DEPTH)
        self.external_pub = self.create_publisher(JointState, '~/external_torques', STREAM_DEPTH)
        self.collision_pub = self.create_publisher(CollisionEvent, '~/collision', 10)
        self.pose_pub = self.create_publisher(PoseStamped, '~/current_pose', STREAM_DEPTH)
        self.wrench_pub = self.create_publisher(WrenchStamped, '~/external_wrench', STREAM_DEPTH)
        self.create_subscription(PoseStamped, '~/target_pose', self._on_target_pose, 10)
        self.create_subscription(TwistStamped, '~/target_twist', self._on_target_twist, 10)
        self.create_subscription(WrenchStamped, '~/target_wrench', self._on_target_wrench, 10)
        self.wrench_pending = None      # (external torques, stamp) for ~/external_wrench
        self.target_time = None         # monotonic time of the last target pose or twist
        self.target_streaming = False   # targets coming within task.target_timeout of each other
        self.create_service(Trigger, '~/reset_collision', self._on_reset_collision)
        # callbacks of this node and of loop_node (joint_states, its own thread) take turns
        self.lock = threading.RLock()
        self.loop_node = loop_node(self, 'joint_states')
        self.loop_node.create_subscription(JointState, self.resolve_topic_name('joint_states'),
                                           self._on_joint_states, JOINT_STATE_QOS)
        self.create_subscription(JointTrajectoryMsg, '~/joint_trajectory', self._on_trajectory, 10)
        self.create_service(InverseDynamics, '~/inverse_dynamics', self._on_inverse_dynamics)
        self.create_service(CheckTrajectory, '~/check_trajectory', self._on_check_trajectory)
        # seconds long: on a node of its own that spin runs on two threads of its own, so that
        # nothing of this node waits for it and a second call is refused while one runs
        self.payload_service = PayloadService(self)
        self.service_node = side_node(self, 'services')
        self.service_node.create_service(
            EstimatePayload, self.resolve_service_name('~/estimate_payload'),
            self.payload_service, callback_group=ReentrantCallbackGroup())
        self.add_pre_set_parameters_callback(lambda params: coerce_numbers(self, params))
        self.add_on_set_parameters_callback(self._on_set_parameters)
        xml, source = file_description(NODE_NAME, self.values['urdf_file'],
                                       self.values['xacro_args'])
        self.description = DescriptionSource(self, self._on_model, subscribe=xml is None)
        if xml is None:
            xml, source = self.values['robot_description'], 'parameter robot_description'

        log = self.get_logger()
        log.info(f'mode {self.values["mode"]}; commands on '
                 f'{self.resolve_topic_name("effort_controller/commands")}, state from '
                 f'{self.resolve_topic_name("joint_states")}; state_timeout '
                 f'{self.values["state_timeout"]} s -> {self.values["on_timeout"]}; '
                 + (f'rate {self.values["rate"]} Hz' if self.values['rate'] > 0
                    else 'a command per joint_states message'))
        if xml and not self.description.use(xml, source) and source.startswith('file'):
            raise SystemExit(f'[{NODE_NAME}] the URDF from {source} is not usable')
        if self.description.xml is None:
            log.info(f'waiting for robot_description on {self.description.topic} '
                     f'(or the robot_description parameter); publishing nothing until then')
        period = min(max(self.values['state_timeout'] / 2, 0.005), 0.05)
        self.create_timer(period, self._watchdog, clock=self._steady)
        if self.values['rate'] > 0:
            self.create_timer(1.0 / self.values['rate'], self._on_rate, clock=self._steady)

    def destroy_node(self):
        if self.observer_compiling is not None and self.observer_compiling.poll() is None:
            self.observer_compiling.kill()
        self.loop_node.destroy_node()
        self.service_node.destroy_node()
        return super().destroy_node()

    # ---- configuration -----------------------------------------------------------------------
    @staticmethod
    def _check(v):
        if v['mode'] not in MODES:
            return f'mode must be one of {MODES}, got "{v["mode"]}"'
        if v['on_timeout'] not in TIMEOUT_BEHAVIOURS:
            return f'on_timeout must be one of {TIMEOUT_BEHAVIOURS}, got "{v["on_timeout"]}"'
        if not v['state_timeout'] > 0:
            return f'state_timeout must be > 0, got {v["state_timeout"]}'
        if not v['rate'] >= 0:
            return f'rate must be >= 0, got {v["rate"]}'
        if v['observer.torque_source'] not in TORQUE_SOURCES:
            return (f'observer.torque_source must be one of {TORQUE_SOURCES}, got '
                    f'"{v["observer.torque_source"]}"')
        if v['trajectory_scaling'] not in SCALINGS:
            return (f'trajectory_scaling must be one of {SCALINGS}, got '
                    f'"{v["trajectory_scaling"]}"')
        for name in ('torques_every', 'external_torques_every'):
            if not v[name] >= 0:
                return f'{name} must be >= 0 (0: never), got {v[name]}'
        if v['nullspace.projector'] not in PROJECTORS:
            return (f'nullspace.projector must be one of {PROJECTORS}, got '
                    f'"{v["nullspace.projector"]}"')
        if not v['task.target_timeout'] >= 0:
            return f'task.target_timeout must be >= 0 (0: never), got {v["task.target_timeout"]}'
        if v['collision.reaction'] not in REACTIONS:
            return (f'collision.reaction must be one of {REACTIONS}, got '
                    f'"{v["collision.reaction"]}"')
        return None

    def _observer(self, ctrl, v, old=None):
        """
        Return (observer or None, thresholds, effort gains) for ``ctrl``'s model.

        ValueError when the parameters do not fit it.
        """
        n = ctrl.model.n
        gain = per_joint(v['observer.gain'], n, 'observer.gain', allow_zero=False)
        thresholds = per_joint(v['collision.thresholds'], n, 'collision.thresholds')
        effort_gain = per_joint(v['effort_gain'], n, 'effort_gain', allow_zero=False)
        if not v['observer.enabled']:
            return None, thresholds, effort_gain
        self._observer_kernel()         # loaded, or compiling elsewhere from now on
        if old is not None and np.array_equal(old.model._model, ctrl.model._model) and \
                np.array_equal(old.gain, gain):
            old.max_interval = v['state_timeout']
            return old, thresholds, effort_gain     # the same model and gains: keep its state
        # across a gap longer than state_timeout (the torques changed unseen) r is held
        return (MomentumObserver(ctrl.model, gain, max_interval=v['state_timeout']), thresholds,
                effort_gain)

    def _controller(self, model, v):
        """Build a Controller for ``model`` and parameter values ``v`` (ValueError: no fit)."""
        joints = v['joints'] or default_joints(model)[0]
        limits = {j: v[f'effort_limits.{j}'] for j in model.joint_names
                  if f'effort_limits.{j}' in v and v[f'effort_limits.{j}'] != model.effort_limits[
                      model.index(j)]}
        defaults = {j: v[f'default_positions.{j}'] for j in model.joint_names
                    if f'default_positions.{j}' in v}
        try:
            return Controller(model, joints=joints, mode=v['mode'], kp=v['kp'], kd=v['kd'],
                              hardware_compensates_gravity=v['hardware_compensates_gravity'],
                              effort_limits=limits, default_positions=defaults,
                              payload=self._payload(v), armature=v['armature'] or None,
                              friction_compensation=v['friction_compensation'],
                              damping=v['damping'] or None, friction=v['friction'] or None,
                              friction_velocity_epsilon=v['friction_velocity_epsilon'],
                              torque_offset=v['torque_offset'] or None, task=self._task(v))
        except KeyError as e:
            raise ValueError(str(e).strip('"')) from None

    @_locked
    def _on_model(self, model, xml, source):
        log = self.get_logger()
        self._declaring = True       # declaring runs _on_set_parameters: nothing to apply yet
        for j in model.joint_names:
            for name, default, what in (
                    (f'default_positions.{j}', 0.0, 'position used when joint_states lack it'),
                    (f'effort_limits.{j}', float(model.effort_limits[model.index(j)]),
                     'clamp of the output (default: the URDF effort limit)')):
                if not self.has_parameter(name):
                    self.values[name] = declare(self, name, float, default, what)
        self._declaring = False
        # per-joint parameters given for joints this model does not have (a typo, another arm)
        for prefix in DYNAMIC_PREFIXES:
            names = [k[len(prefix):] for k in self._parameter_overrides if k.startswith(prefix)]
            for problem in unknown_joint_keys(model, names, prefix[:-1]):
                log.error(f'ignoring parameter {problem}')
        values = self.values
        t = time.monotonic()
        try:
            payload_model(model, self._payload(values))
        except ValueError as e:
            log.error(f'ignoring the payload parameters: {e}')
            values = dict(values, **{'payload.link': '', 'payload.mass': 0.0})
            self._declaring = True          # so that `ros2 param get` tells what is used
            self.set_parameters([Parameter('payload.link', value=''),
                                 Parameter('payload.mass', value=0.0)])
            self._declaring = False
        try:
            ctrl = self._controller(model, values)
            observer, thresholds, effort_gain = self._observer(ctrl, values)
        except ValueError as e:
            log.error(f'robot_description from {source} does not fit the parameters: {e}; '
                      + ('keeping the previous model' if self.ctrl else 'still no model'))
            return
        self.values = values
        old = self.ctrl
        if old is not None:
            # a description that changed while running: the arm is where it is, and what it was
            # doing goes on where the new model has its joints; the efforts move from the old
            # model's to the new one's over BUMPLESS seconds (_bumpless)
            if ctrl.joints == old.joints and self.out.commands:
                self.bump = [self.out.command.copy(), None]
            ctrl.take_state(old)
            ctrl.take_task(old)
            dropped = ctrl.take_motion(old)
            if dropped:
                log.warning(f'the running trajectory is dropped: {dropped}; holding position')
            elif ctrl.trajectory is not None:
                log.info('the running trajectory goes on with the new model')
        self.model, self.ctrl = model, ctrl
        self.observer, self.thresholds, self.collided = observer, thresholds, False
        self.effort_gain = effort_gain
        self.armed = False
        self.watched = bool((thresholds > 0).any())
        self.efforts, self.effort_seen = np.zeros(model.n), np.zeros(model.n, dtype=bool)
        self._observed_tau = np.zeros((2, model.n))     # the observer's torques, friction
        self.motor = np.zeros(model.n)
        self.stale, self.last_update = None, None
        self.gaps.clear()
        self.out = Outputs(ctrl)
        self.model_time = time.monotonic()
        why = ('the joints parameter' if self.values['joints']
               else default_joints(model)[1])
        v = self.values
        log.info(f'model "{model.name}" from {source}: {model.n} joints; command order '
                 f'{list(ctrl.joints)} ({why})' + (
                     f'; payload {v["payload.mass"]} kg on {v["payload.link"]}'
                     if v['payload.link'] and v['payload.mass'] > 0 else '') + (
                     f'; armature {ctrl.base_model.armature.tolist()} (kg m^2 or kg)'
                     if v['armature'] else '') + (
                     f'; task frame {ctrl.task["frame"]}' + (
                         '' if v['task.frame'] else ' (the default: set task.frame for another)')
                     if ctrl.mode in TASK_MODES else ''))
        # what the first command needs, compiled now (or loaded from numba's cache: ms); the
        # observer's kernel loaded from the cache, or compiled meanwhile in a child process (see
        # _observer); the rest (another mode, the services) on first use
        observer_now = observer is not None and self.observer_ready     # see _observer
        compile_kernels(['gravity_one', 'limit_command'] + (
            ['rnea_one'] if ctrl.mode != 'gravity' else []) + (
            ['task_command', 'placement_one'] if ctrl.mode in TASK_MODES else []))
        log.info(f'kernels for mode {ctrl.mode}' + (' and the observer' if observer_now else '') +
                 f' ready in {time.monotonic() - t:.2f} s; {time.monotonic() - STARTED:.2f} s '
                 f'since the start of the process')

    @staticmethod
    def _task(v):
        return dict(frame=v['task.frame'], stiffness=v['task.stiffness'],
                    damping_ratio=v['task.damping_ratio'], min_damping=v['task.min_damping'],
                    max_error=v['task.max_error'],
                    max_torque_rate=v['task.max_torque_rate'],
                    nullspace_stiffness=v['nullspace.stiffness'],
                    nullspace_damping_ratio=v['nullspace.damping_ratio'],
                    posture=v['nullspace.posture'], projector=v['nullspace.projector'])

    @staticmethod
    def _payload(v):
        return {'link': v['payload.link'], 'mass': v['payload.mass'],
                'com': v['payload.com'], 'inertia': v['payload.inertia']}

    @_locked
    def _on_set_parameters(self, params):
        if self._declaring:
            return SetParametersResult(successful=True)
        v = dict(self.values)
        for p in params:
            v[p.name] = p.value
        problem = self._check(v)
        model = self.model
        new_description = None
        if problem is None and any(p.name == 'robot_description' for p in params) \
                and v['robot_description']:
            try:
                new_description = RobotModel.from_urdf(v['robot_description'])
            except (ValueError, KeyError) as e:
                problem = f'robot_description does not parse: {e}'
        if problem is None and model is not None:
            try:
                ctrl = self._controller(model, v)
                observer, thresholds, effort_gain = self._observer(ctrl, v, self.observer)
            except ValueError as e:
                problem = str(e)
        if problem:
            return SetParametersResult(successful=False, reason=problem)
        self.values = v
        if model is not None:
            old = self.ctrl
            if old is not None:
                ctrl.take_state(old)
                ctrl.reaction, ctrl.reaction_q = old.reaction, old.reaction_q
                if ctrl.joints == old.joints and ctrl.mode not in TASK_MODES:
                    ctrl.trajectory = old.trajectory
                    if ctrl.mode == old.mode:
                        ctrl.hold = old.hold
                elif old.trajectory is not None:
                    self.get_logger().info(f'mode {ctrl.mode}: the running trajectory is '
                                           f'dropped; the task target is the frame\'s pose now')
                ctrl.take_task(old)
                if ctrl.mode in TASK_MODES and ctrl.mode != old.mode:
                    compile_kernels(['task_command'])
                    self.get_logger().info(
                        f'mode {ctrl.mode}: frame {ctrl.task["frame"]}, target its pose now; '
                        f'targets on {self.resolve_topic_name("~/target_pose")}')
            self.ctrl = ctrl
            self.observer, self.thresholds = observer, thresholds
            self.effort_gain = effort_gain
            self.watched = bool((thresholds > 0).any())
            self.out = Outputs(ctrl)
        if new_description is not None:
            self.description.use(v['robot_description'], 'parameter robot_description',
                                 new_description)
        names = ', '.join(f'{p.name}={p.value}' for p in params if p.name != 'robot_description')
        self.get_logger().info(f'parameters set: {names or "robot_description"}')
        return SetParametersResult(successful=True)

    # ---- inputs ------------------------------------------------------------------------------
    def _once(self, key, message, level='warning'):
        if key not in self._warned:
            self._warned.add(key)
            log_at(self.get_logger(), level, message)

    @_locked
    def _on_joint_states(self, msg):
        ctrl, now = self.ctrl, time.monotonic()
        if ctrl is None:
            if self._no_model_since is None:
                self._no_model_since = now
            elif now - self._no_model_since >= NO_MODEL_GRACE:
                self._once('no-model', f'joint_states have arrived for {NO_MODEL_GRACE:g} s but '
                                       f'there is no valid robot_description yet: publishing '
                                       f'nothing')
            return
        try:
            n_model, n_cmd = ctrl.update_state(msg.name, msg.position, msg.velocity, now)
        except ValueError as e:
            self.throttle.warning(('state', str(e).split(' ')[0]),
                                  f'rejected joint_states: {e}')
            return
        if n_model == 0:
            self.throttle.warning('foreign', f'joint_states names none of the model\'s joints '
                                             f'({list(msg.name)[:4]}...): ignored')
            return
        if self.observer is not None and len(msg.effort) == len(msg.name):
            self._take_efforts(msg)
        if n_cmd == 0:
            return              # e.g. a gripper's own stream: state updated, no command of its own
        if self.last_update is not None:
            self.gaps.append(now - self.last_update)
        self.last_update = now
        self.state_stamp = msg.header.stamp
        if self.observer is not None and self.observer_ready and not ctrl.missing_joints():
            # before the command (what acted up to this state is the last one sent): run after
            # it, the estimate competes for the CPU with the driver reading the command
            self._observe(msg.header.stamp, self.motor)
        if self.values['rate'] == 0:
            self._command(now)
            if self.wrench_pending is not None:
                self._publish_wrench()

    def _take_efforts(self, msg):
        model_idx, msg_idx = self.ctrl.state_map(msg.name)
        effort = np.asarray(msg.effort, dtype=float)[msg_idx]
        ok = np.isfinite(effort)
        self.efforts[model_idx[ok]] = effort[ok]
        self.effort_seen[model_idx[ok]] = True

    # ---- the observer and collisions ----------------------------------------------------------
    def _observer_kernel(self):
        """
        Load the observer's kernel from numba's cache, or start compiling it (once) elsewhere.

        Compiling it here would hold up the commands (3.5 s on a fresh install; on another
        thread the GIL stalls them up to 0.27 s at a time): a child process compiles it into
        numba's cache while this one commands, and the observer starts when it is loaded.
        """
        if not self.observer_ready and self.observer_compiling is None:
            if not load_cached(OBSERVER_KERNELS):
                self.observer_ready = True
            else:
                self.observer_compiling = compile_in_background(OBSERVER_KERNELS,
                                                                self._on_observer_compiled)
                self.get_logger().info(
                    'observer: its kernel is not in numba\'s cache (a first start after an '
                    'install): compiling it in a separate process; external torques and '
                    'collision detection start when it is ready')

    def _on_observer_compiled(self, seconds, error):
        with self.lock:
            self.observer_ready = True
            if error:
                self.get_logger().warning(
                    f'observer: compiling its kernel in a separate process failed ({error}); '
                    f'compiled here instead, {seconds:.1f} s after it was needed')
            else:
                self.get_logger().info(f'observer: kernel ready {seconds:.1f} s after it was '
                                       f'needed; external torques from the next joint_states on')

    def _observe(self, stamp, motor):
        """
        Update the external-torque estimate with this state; detect and react to collisions.

        ``motor``: the commanded torques that acted up to this state (model order). A reaction
        acts from the next command on.
        """
        ctrl, v = self.ctrl, self.values
        source = v['observer.torque_source']
        measured = self.effort_seen.all()
        if source == 'measured' and not measured:
            missing = [j for j, seen in zip(ctrl.base_model.joint_names, self.effort_seen)
                       if not seen]
            self.throttle.warning('effort', f'observer.torque_source is measured but joint_states '
                                            f'carry no effort for {missing}: no estimate')
            return
        # what moves the arm: the drives' torques less the joints' friction and offset as
        # modelled (identified: what an effort reads beyond the rigid-body torques)
        tau, friction = self._observed_tau
        if source == 'measured' or (source == 'auto' and measured):
            np.multiply(self.efforts, self.effort_gain, out=tau)
        else:
            tau[:] = motor
        tau -= ctrl.model_friction(ctrl.qd, out=friction)
        t = (stamp.sec + 1e-9 * stamp.nanosec if stamp.sec or stamp.nanosec
             else self.get_clock().now().nanoseconds * 1e-9)
        skipped = self.observer.skipped
        r = self.observer.update(ctrl.q, ctrl.qd, tau, t)
        if self.observer.skipped > skipped:
            gap = (t - (self._observed or t)) * 1e3
            what = (f'joint_states interval of {gap:.1f} ms, far above the recent ones' if gap > 0
                    else f'joint_states stamped {-gap:.1f} ms before the previous ones')
            self.throttle.info('observer gap', f'observer: {what}: estimate held over it '
                                               f'({self.observer.skipped} so far)', 30.0)
        self._observed = t
        self.payload_service.take(ctrl.q, r)
        # the estimate in effort, with the state it belongs to in position and velocity
        every, out = v['external_torques_every'], self.out
        out.estimates += 1
        header_stamp = stamp if (stamp.sec or stamp.nanosec) else None
        if every and not out.estimates % every:
            msg = out.external_msg
            out.external[0][:], out.external[1][:], out.external[2][:] = ctrl.q, ctrl.qd, r
            msg.header.stamp = header_stamp = (header_stamp or
                                               self.get_clock().now().to_msg())
            self.external_pub.publish(msg)
            if ctrl.mode in TASK_MODES and ctrl.law is not None:
                # after this state's command when commanding per state (the estimate runs before
                # it; the wrench, ~40 us with its message, need not)
                self.wrench_pending = (r.copy(), header_stamp)
                if self.values['rate'] != 0:
                    self._publish_wrench()
        # detection is armed once the estimate has settled (5 / K_O of samples since it started)
        # under the thresholds: what held the arm until then (brakes, drives the commands do not
        # reach yet) shows as external torques and must not count as a collision
        over = self._detected(r) if self.watched else ()
        if len(over) and not self.collided:
            self.collided = True
            names = [ctrl.base_model.joint_names[i] for i in over]
            reaction = v['collision.reaction']
            event = CollisionEvent(name=names,
                                   external_torque=r[over].tolist(),
                                   threshold=self.thresholds[over].tolist(), reaction=reaction)
            event.header.stamp = header_stamp or self.get_clock().now().to_msg()
            self.collision_pub.publish(event)
            if reaction != 'none':
                ctrl.react(reaction, ctrl.q)
            self.get_logger().error(
                f'collision: external torques {np.round(r[over], 3).tolist()} N m on {names} over '
                f'the thresholds {self.thresholds[over].tolist()}; reaction {reaction}' +
                (' until ~/reset_collision' if reaction != 'none' else ''))

    def _publish_wrench(self):
        """
        ~/external_wrench: the external torques r as the wrench at the task frame (root axes).

        F = (J J^T + mu 1)^-1 J r, the damped pseudo-inverse of J^T on the commanded joints:
        what a person pushing the frame applies (the torques J^T F explain r best).
        """
        ctrl, (r, stamp) = self.ctrl, self.wrench_pending
        self.wrench_pending = None
        if ctrl.law is None:
            return
        J = ctrl.law.jacobian[:, ctrl.cmd]
        F = np.linalg.solve(J @ J.T + SINGULARITY_DAMPING * np.eye(6), J @ r[ctrl.cmd])
        msg = self.out.wrench_msg
        msg.header.stamp = stamp
        w = msg.wrench
        w.force.x, w.force.y, w.force.z = float(F[0]), float(F[1]), float(F[2])
        w.torque.x, w.torque.y, w.torque.z = float(F[3]), float(F[4]), float(F[5])
        self.wrench_pub.publish(msg)

    def _detected(self, r):
        """Arm or disarm collision detection; return the joints over threshold that count."""
        if not self.observer.settled():
            self.armed = False
            return ()
        over = over_threshold(r, self.thresholds)
        if self.armed:
            return over
        if len(over):
            names = [self.ctrl.base_model.joint_names[i] for i in over]
            self.throttle.warning('not armed', f'collision detection not armed yet: external '
                                  f'torques {np.round(r[over], 2).tolist()} N m on {names} over '
                                  f'the thresholds since the estimate started (brakes on? '
                                  f'commands not reaching the drives?); it arms once they are '
                                  f'under')
            return ()
        self.armed = True
        self.get_logger().info('collision detection armed: the external torque estimate has '
                               'settled under the thresholds')
        return ()

    @_locked
    def _on_reset_collision(self, request, response):
        ctrl = self.ctrl
        if ctrl is None:
            response.success, response.message = False, 'no robot_description yet'
            return response
        was = ctrl.reaction
        ctrl.clear_reaction()
        self.collided = False
        response.success = True
        response.message = ('collision reaction ended' if was else 'no collision reaction was '
                            'active') + ('; collision detection armed' if self.armed else
                                         '; collision detection arms once the estimate has '
                                         'settled under the thresholds')
        self.get_logger().info(response.message)
        return response

    def _stale(self, now):
        """
        Commanded joints that are missing or stale now (empty when the state is fresh).

        Logs the transitions, throttled.
        """
        ctrl = self.ctrl
        missing = ctrl.missing_joints()
        timeout = self.values['state_timeout']
        if missing:
            if now - self.model_time > timeout:     # not the first few ms of two streams
                self._once(('missing', self.model.name),
                           f'no joint_states yet for {missing}: commanding '
                           f'{self.values["on_timeout"]} torque until every commanded joint '
                           f'has been received once', 'info')
            return missing
        stale = ctrl.stale_joints(now, timeout)
        if stale and self.stale != stale:
            age = now - ctrl.updated[[ctrl.base_model.index(j) for j in stale]].max()
            self.throttle.warning(('stale', tuple(stale)),
                                  f'joint_states of {stale} are {age:.3f} s old (state_timeout '
                                  f'{timeout} s): commanding {self.values["on_timeout"]} torque')
            self._slow_warning(timeout)
        elif not stale and self.stale:
            self.throttle.info('back', 'joint_states are back: commanding again')
        self.stale = stale
        return stale

    def _slow_warning(self, timeout):
        """joint_states that arrive slower than 1/state_timeout go stale between messages."""
        if len(self.gaps) < 5:
            return
        gap = float(np.median(self.gaps))
        if gap > timeout:
            self.throttle.warning(
                'slow', f'joint_states arrive at {1 / gap:.1f} Hz (every {gap * 1e3:.0f} ms), '
                        f'slower than 1/state_timeout = {1 / timeout:.1f} Hz: the state goes '
                        f'stale between messages; raise the state_timeout parameter above '
                        f'{2 * gap:.2f} s or publish joint_states faster', 30.0)

    @staticmethod
    def _trajectory_tables(msg):
        """(names, times, positions, velocities, accelerations) of a message (ValueError)."""
        times = [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in msg.points]
        tables = []
        for field in ('velocities', 'accelerations'):
            sizes = {len(getattr(p, field)) > 0 for p in msg.points}
            if len(sizes) > 1:
                raise ValueError(f'{field} must be given for every point or for none')
            tables.append([list(getattr(p, field)) for p in msg.points] if True in sizes
                          else None)
        return (list(msg.joint_names), times, [list(p.positions) for p in msg.points],
                *tables)

    def _scaled(self, tables):
        """
        Apply trajectory_scaling to a trajectory arriving now (ValueError: refused).

        Returns the tables to run, stretched when needed.
        """
        mode, ctrl = self.values['trajectory_scaling'], self.ctrl
        if mode == 'off':
            return tables
        t0 = time.perf_counter()
        result = ctrl.check_trajectory(*tables, q=ctrl.q, qd=ctrl.qd)
        took = (time.perf_counter() - t0) * 1e3
        k = result.min_time_scale
        if result.feasible:
            self.get_logger().info(f'trajectory check ({took:.1f} ms): {result.message()}')
            return tables
        if mode == 'reject' or not np.isfinite(k):
            raise ValueError(f'{result.message()} (trajectory_scaling {mode})')
        names, times, positions, velocities, accelerations = tables
        stretched = (names, [x * k for x in times], positions,
                     None if velocities is None else (np.asarray(velocities) / k).tolist(),
                     None if accelerations is None else
                     (np.asarray(accelerations) / k**2).tolist())
        self.get_logger().warning(
            f'trajectory stretched by k* = {k:.4g} to {times[-1] * k:.3f} s (was '
            f'{times[-1]:.3f} s): the {result.limiting_kind} limit of {result.limiting_joint} '
            f'at t = {result.limiting_time:.3f} s (check {took:.1f} ms)')
        return stretched

    @_locked
    def _on_trajectory(self, msg):
        log = self.get_logger()
        if self.ctrl is not None and not msg.points:
            self.ctrl.trajectory = None
            self.ctrl.hold = None
            log.info('empty trajectory: stopping the current one and holding position')
            return
        if self.ctrl is not None and self.ctrl.mode in TASK_MODES:
            log.error(f'rejected trajectory: mode {self.ctrl.mode} follows '
                      f'{self.resolve_topic_name("~/target_pose")}, not joint trajectories '
                      f'(set mode to computed_torque or feedforward for those)')
            return
        if self.ctrl is None or self.ctrl.missing_joints():
            log.error('rejected trajectory: ' + (
                'no robot_description yet' if self.ctrl is None
                else f'no joint_states yet for {self.ctrl.missing_joints()}'))
            return
        now = self._time(self.get_clock().now())       # where the arm is in time
        stamp = Time.from_msg(msg.header.stamp).nanoseconds * 1e-9
        start = now if stamp == 0 else stamp
        try:
            names, times, *tables = self._scaled(self._trajectory_tables(msg))
            traj = self.ctrl.set_trajectory(
                names, times, *tables, start_time=start, now=now, q=self.ctrl.q,
                qd=self.ctrl.qd)
        except ValueError as e:
            log.error(f'rejected trajectory: {e}; keeping the previous behaviour')
            return
        log.info(f'trajectory accepted: {len(times)} points ({traj.kind}) for '
                 f'{list(traj.joint_names)}, ends in {traj.end_time - now:.2f} s')

    def _on_check_trajectory(self, req, res):
        ctrl = self.ctrl
        if ctrl is None:
            res.success, res.message = False, 'no robot_description yet'
            return res
        try:
            names, times, positions, velocities, accelerations = \
                self._trajectory_tables(req.trajectory)
            if not req.trajectory.points:
                raise ValueError('the trajectory has no point')
            period = req.sample_period or 1e-3
            # the start: start_state where it names a joint, else the first point (trajectory
            # joints) or the latest joint_states / default_positions (the others)
            model = ctrl.base_model
            q, qd = ctrl.q.copy(), np.zeros(model.n)
            for j, name in enumerate(names):
                if name in model._index:
                    q[model.index(name)] = positions[0][j] if len(positions[0]) > j else 0.0
                    if velocities is not None and len(velocities[0]) > j:
                        qd[model.index(name)] = velocities[0][j]
            s = req.start_state
            if len(s.position) != len(s.name) or len(s.velocity) not in (0, len(s.name)):
                raise ValueError(f'start_state has {len(s.name)} names, {len(s.position)} '
                                 f'positions and {len(s.velocity)} velocities')
            for k, name in enumerate(s.name):
                if name not in model._index:
                    raise ValueError(f'start_state names unknown joint {name}')
                v = s.velocity[k] if len(s.velocity) else 0.0
                if not (np.isfinite(s.position[k]) and np.isfinite(v)):
                    raise ValueError(f'start_state of {name} is not finite')
                q[model.index(name)] = s.position[k]
                qd[model.index(name)] = v
            result = ctrl.check_trajectory(names, times, positions, velocities, accelerations,
                                           q=q, qd=qd, sample_period=period)
        except ValueError as e:
            res.success, res.message = False, str(e)
            return res
        res.success, res.message = True, result.message()
        res.feasible, res.min_time_scale = bool(result.feasible), float(result.min_time_scale)
        res.name = list(result.names)
        res.peak_effort, res.peak_effort_time = (result.peak_effort.tolist(),
                                                 result.peak_effort_time.tolist())
        res.effort_limit = result.effort_limit.tolist()
        res.peak_velocity = result.peak_velocity.tolist()
        res.velocity_limit = result.velocity_limit.tolist()
        return res

    @_locked
    def _on_inverse_dynamics(self, req, res):
        res.name = list(req.name)
        if self.ctrl is None:
            res.success, res.message = False, 'no robot_description yet'
            return res
        try:
            if len(req.external_wrench) != len(req.wrench_link):
                raise ValueError(f'{len(req.external_wrench)} external_wrench for '
                                 f'{len(req.wrench_link)} wrench_link')
            wrenches = {}
            for link, w in zip(req.wrench_link, req.external_wrench):
                wrenches[link] = np.array([w.force.x, w.force.y, w.force.z,
                                           w.torque.x, w.torque.y, w.torque.z])
            effort, g, c, inertial, friction = self.ctrl.inverse_dynamics(
                req.name, req.position, req.velocity, req.acceleration, wrenches)
        except ValueError as e:
            res.success, res.message = False, str(e)
            return res
        res.success, res.message = True, ''
        res.effort, res.gravity = effort.tolist(), g.tolist()
        res.coriolis, res.inertial = c.tolist(), inertial.tolist()
        res.friction = friction.tolist()
        return res

    # ---- outputs -----------------------------------------------------------------------------
    def _publish(self, tau, desired=None, stamp=None, now=None):
        ctrl, out = self.ctrl, self.out
        out.command[:] = tau
        self.cmd_pub.publish(out.command_msg)
        if self.observer is not None and self.values['observer.torque_source'] != 'measured':
            # what the drives apply until the next command: the observer's commanded torques
            self.motor[:] = 0.0
            self.motor[ctrl.cmd] = tau
            if ctrl.hardware_compensates_gravity:
                self.motor += gravity_torques(ctrl.model, ctrl.q)
        every = self.values['torques_every']
        out.commands += 1
        if not every or out.commands % every:
            return
        if desired is None:
            msg = out.torques_msg
            out.effort[:] = tau
        else:
            msg = out.desired_msg
            out.desired[0][:] = desired[0][ctrl.cmd]
            out.desired[1][:] = desired[1][ctrl.cmd]
            out.desired[2][:] = tau
        if stamp is not None and (stamp.sec or stamp.nanosec):
            msg.header.stamp = stamp          # the joint state these efforts answer
        else:
            msg.header.stamp = (now or self.get_clock().now()).to_msg()
        self.torque_pub.publish(msg)

    def _command(self, now=None):
        if self._timeout_if_stale(time.monotonic() if now is None else now):
            return
        ctrl = self.ctrl
        # ROS time: for the trajectory, and the stamp when the state has none (or rate > 0)
        stamped = self.values['rate'] == 0 and (self.state_stamp.sec or self.state_stamp.nanosec)
        stamp = self.get_clock().now() if (ctrl.trajectory is not None or not stamped) else None
        t = 0.0 if stamp is None else self._time(stamp)
        des = ctrl.desired(t, ctrl.q) if ctrl.mode not in TASK_MODES else None
        at = (self.state_stamp.sec + 1e-9 * self.state_stamp.nanosec if stamped
              else time.monotonic())           # the state's time: the task modes' rate limit
        if ctrl.mode in TASK_MODES:
            self._target_timeout(now if now is not None else time.monotonic())
        tau, clamped = ctrl.command(ctrl.q, ctrl.qd, t, des, at)
        if self.bump is not None:
            tau = self._bumpless(tau)
        if clamped.any():
            names = [j for j, c in zip(ctrl.joints, clamped) if c]
            self.throttle.warning('clamp', f'effort clamped to the limits on {names}')
        self._publish(tau, des, self.state_stamp if self.values['rate'] == 0 else None, stamp)
        if ctrl.mode in TASK_MODES and ctrl.reaction is None:
            self._publish_pose(ctrl.law.pose, self.state_stamp if stamped else None)

    def _publish_pose(self, T, stamp):
        """~/current_pose: the task frame's pose (4x4) at the state the command answers."""
        msg = self.out.pose_msg
        msg.header.stamp = stamp or self.get_clock().now().to_msg()
        p, o = msg.pose.position, msg.pose.orientation
        p.x, p.y, p.z = float(T[0, 3]), float(T[1, 3]), float(T[2, 3])
        o.x, o.y, o.z, o.w = map(float, quaternion(T))
        self.pose_pub.publish(msg)

    # ---- task-space targets ------------------------------------------------------------------
    def _task_message(self, msg, topic):
        """Return the controller if a target message can be taken (else log why, None)."""
        ctrl = self.ctrl
        if ctrl is None:
            self.throttle.warning(('target', topic), f'ignored ~/{topic}: no robot_description '
                                                     f'yet')
            return None
        if ctrl.mode not in TASK_MODES:
            self.throttle.warning(('target', topic), f'ignored ~/{topic}: mode {ctrl.mode} '
                                  f'takes joint trajectories; targets need mode '
                                  f'cartesian_impedance or operational_space')
            return None
        frame = msg.header.frame_id
        if frame not in ('', ctrl.base_model.root_link):
            self.throttle.warning(('target frame', topic, frame),
                                  f'refused ~/{topic} in frame "{frame}": targets are in the '
                                  f'root link "{ctrl.base_model.root_link}" (or an empty '
                                  f'frame_id)')
            return None
        if ctrl.missing_joints():
            self.throttle.warning(('target', topic), f'ignored ~/{topic}: no joint_states yet '
                                  f'for {ctrl.missing_joints()}')
            return None
        return ctrl

    def _target_arrived(self, twist=False):
        """
        Note a target's arrival: poses coming within task.target_timeout are a stream.

        A twist is a stream by itself: a velocity holds until the next one, so a lone twist (or
        the last of a stream whose messages came late) times out too (before, a twist after a
        silence set a target velocity that never expired: the hand stood 9.5 mm off its target,
        damping against it, seen in CI under load).
        """
        now = time.monotonic()
        timeout = self.values['task.target_timeout']
        self.target_streaming = twist or (self.target_time is not None and
                                          now - self.target_time <= timeout)
        self.target_time = now

    @_locked
    def _on_target_pose(self, msg):
        ctrl = self._task_message(msg, 'target_pose')
        if ctrl is None:
            return
        p, o = msg.pose.position, msg.pose.orientation
        try:
            norm = ctrl.set_task_pose([p.x, p.y, p.z], [o.x, o.y, o.z, o.w])
        except ValueError as e:
            self.throttle.warning(('target value', str(e)[:24]), f'refused ~/target_pose: {e}; '
                                  f'keeping the previous target')
            return
        if abs(norm - 1.0) > 1e-3:
            self.throttle.warning('quaternion', f'~/target_pose: quaternion of norm {norm:.4g} '
                                                f'normalised')
        far = np.linalg.norm(ctrl.task_pose()[:3, 3] - ctrl.task_target[0])
        if far > ctrl.task['max_error'][0]:
            self.throttle.info('far', f'~/target_pose is {far:.3f} m away: the error is clipped '
                                      f'to task.max_error {ctrl.task["max_error"][0]} m')
        self._target_arrived()

    @_locked
    def _on_target_twist(self, msg):
        ctrl = self._task_message(msg, 'target_twist')
        if ctrl is None:
            return
        v, w = msg.twist.linear, msg.twist.angular
        try:
            ctrl.set_task_twist([v.x, v.y, v.z, w.x, w.y, w.z], time.monotonic())
        except ValueError as e:
            self.throttle.warning('twist value', f'refused ~/target_twist: {e}')
            return
        self._target_arrived(twist=True)

    @_locked
    def _on_target_wrench(self, msg):
        ctrl = self._task_message(msg, 'target_wrench')
        if ctrl is None:
            return
        f, t = msg.wrench.force, msg.wrench.torque
        try:
            ctrl.set_task_wrench([f.x, f.y, f.z, t.x, t.y, t.z])
        except ValueError as e:
            self.throttle.warning('wrench value', f'refused ~/target_wrench: {e}')

    def _target_timeout(self, now):
        """Hold the target when its stream was silent for task.target_timeout (one warning)."""
        timeout = self.values['task.target_timeout']
        if not (timeout and self.target_streaming and now - self.target_time > timeout):
            return
        self.target_streaming = False
        self.ctrl.hold_task_target()
        self.get_logger().warning(f'the target stream stopped ({now - self.target_time:.2f} s '
                                  f'without ~/target_pose or ~/target_twist, task.target_timeout '
                                  f'{timeout} s): holding the target at its last pose')

    def _time(self, clock):
        """
        Return the time (s) a trajectory is at: the latest joint state's stamp, else ``clock``.

        The stamp when commanding on every joint state (rate 0) and it lies within
        STAMP_TOLERANCE of the clock; else the clock (with a warning when the stamp is off).
        """
        t = clock.nanoseconds * 1e-9
        if self.values['rate'] != 0 or not (self.state_stamp.sec or self.state_stamp.nanosec):
            return t
        at = self.state_stamp.sec + 1e-9 * self.state_stamp.nanosec
        if abs(at - t) <= STAMP_TOLERANCE:
            return at
        self.throttle.warning('time base', f'joint_states stamps are {at - t:+.3f} s from this '
                                           f'node\'s clock (use_sim_time?): timing the '
                                           f'trajectory by the clock')
        return t

    def _bumpless(self, tau):
        """
        After a model change: the last effort of the old model, fading into the new one's.

        The first command after the change repeats the old model's last one; the difference
        between the two decays linearly to zero over BUMPLESS seconds (bumpless transfer).
        """
        now = time.monotonic()
        if self.bump[1] is None:
            self.bump = [self.bump[0] - tau, now]       # the step the change would make
        s = (now - self.bump[1]) / BUMPLESS
        if s >= 1.0:
            self.bump = None
            return tau
        limits = self.ctrl.limits
        return np.clip(tau + self.bump[0] * (1.0 - s), -limits, limits)

    def _timeout_if_stale(self, now):
        """
        Publish the on_timeout command when commanded joints are missing or stale (True).

        On_timeout gravity uses the last known q (none before any joint was received).
        """
        if not self._stale(now):
            return False
        q = self.ctrl.q if self.ctrl.received.any() else None
        self._publish(self.ctrl.timeout_command(self.values['on_timeout'], q))
        return True

    @_locked
    def _on_rate(self):
        if self.ctrl is not None:
            self._command()

    @_locked
    def _watchdog(self):
        if self.ctrl is None:
            return
        now = time.monotonic()
        if ('defaults', self.model.name) not in self._warned and self.ctrl.received.any() \
                and now - self.model_time > self.values['state_timeout']:
            ctrl = self.ctrl
            unseen = [j for j, seen in zip(ctrl.base_model.joint_names, ctrl.received)
                      if not seen and j not in ctrl.joints]     # missing commanded: _stale
            if unseen:
                defaults = [float(ctrl.default_q[ctrl.base_model.index(j)]) for j in unseen]
                self.get_logger().info(f'no joint_states for {unseen}: they stay at '
                                       f'default_positions {defaults}')
            self._warned.add(('defaults', self.model.name))      # checked once per model
        if not self._timeout_if_stale(now) and self.ctrl.mode in TASK_MODES:
            self._target_timeout(now)
            self._bandwidth()

    def _bandwidth(self):
        """Warn when the task stiffness asks a bandwidth the loop's period cannot hold."""
        law = self.ctrl.law
        if law is None or len(self.gaps) < 5:
            return
        period = float(np.median(self.gaps))
        lam = np.maximum(np.diag(law.lambda_), 1e-12)
        w = np.sqrt(law.stiffness / lam)
        axis = int(np.argmax(w))
        if w[axis] * period > BANDWIDTH_LIMIT:
            names = ('x', 'y', 'z', 'rotation x', 'rotation y', 'rotation z')
            self.throttle.warning(
                'bandwidth', f'task.stiffness {law.stiffness[axis]:g} on {names[axis]} with a '
                f'task-space inertia of {lam[axis]:.3g} ({"kg" if axis < 3 else "kg m^2"}) is a '
                f'natural frequency of {w[axis]:.0f} rad/s: {w[axis] * period:.2f} rad per '
                f'loop period ({period * 1e3:.1f} ms), above {BANDWIDTH_LIMIT}: the loop may '
                f'oscillate; lower the stiffness, or set armature (the rotor inertia) if the '
                f'URDF lacks it', 30.0)


def main(args=None):
    return run_node(FeedforwardNode, args, usage(
        'feedforward_node', NODE_NAME, SUMMARY, PARAMETERS, INTERFACES, NOTES))


if __name__ == '__main__':
    sys.exit(main())
