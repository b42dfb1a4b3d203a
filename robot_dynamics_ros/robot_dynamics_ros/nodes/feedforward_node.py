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
Serves ``~/inverse_dynamics`` (robot_dynamics_msgs/srv/InverseDynamics) and the
``~/follow_joint_trajectory`` action (``trajectory_action.py``). The rules of the loop
(state merging, timeouts, the observer, collisions, model changes, targets) live in
``control/loop.py``, the arithmetic in ``control/controller.py``, what the parameters mean in
``control/configuration.py``; their declarations are in ``feedforward_declarations.py``, the
output messages in ``feedforward_outputs.py``. This module wires them: parameters,
subscriptions, publishers, services and threads, and messages to and from the loop.
"""
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
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped
from robot_dynamics_msgs.msg import ActiveLimits, CollisionEvent
from robot_dynamics_msgs.srv import CheckTrajectory, EstimatePayload, InverseDynamics
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from ..control import (TASK_MODES, configuration, default_joints, payload_model,
                       unknown_joint_keys)
from ..control.loop import ControlLoop
from ..control.task_space import external_wrench
from ..dynamics import RobotModel, compile_kernels
from ..dynamics.transmitted import ChildSide
from .description import DescriptionSource, file_description
from .executors import (STREAM_DEPTH, BackgroundKernels, LoopThread, TurnClock, run_node,
                        seconds, side_node)
from .feedforward_declarations import (DYNAMIC_PREFIXES, INTERFACES, NOTES,  # noqa: F401
                                       PARAMETERS, SUMMARY, constraint, constraint_parameters)
from .feedforward_outputs import Outputs
from .launch_setup import CONTROLLER
from .logs import STARTED, Throttle
from .parameters import coerce_numbers, declare, say_unknown_overrides, shown_value, usage
from .payload_service import PayloadService
from .trajectory_action import TrajectoryAction

NODE_NAME = CONTROLLER

# what MomentumObserver.update runs (observer_follow: compiled on its first use before, 0.3-0.6 s
# of the node's loop at its second joint_states message: xarm7 fell at 2 x v_max meanwhile)
OBSERVER_KERNELS = ['observer_step', 'observer_follow']
JOINT_STATE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)  # the latest kept


def _locked(method):
    """Run ``method`` holding the node's lock (the control loop runs in a thread of its own)."""
    @functools.wraps(method)
    def wrapper(self, *args):
        with self.lock:
            return method(self, *args)
    return wrapper


def plant_clock(clock):
    """
    Return a callable: ``clock``'s time in seconds while it is simulated (use_sim_time), else None.

    Of the clock, not of the node: a bound method kept by the loop would keep a node whose
    construction failed alive until rclpy's shutdown destroys it half built (Kilted's context
    destroys the nodes it still holds).
    """
    def now():
        return clock.now().nanoseconds * 1e-9 if clock.ros_time_is_active else None
    return now


class FeedforwardNode(Node):

    def __init__(self):
        super().__init__(NODE_NAME)
        self.values = {name: declare(self, name, kind, default, desc, ro,
                                     configuration.rule(name))
                       for name, (kind, default, desc, ro) in PARAMETERS.items()}
        self.model = None
        self._declaring = False
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.throttle = Throttle(self.get_logger())
        # the rules; this node wires them to ROS
        self.loop = ControlLoop(self.throttle, plant_clock=plant_clock(self.get_clock()))
        self.turn = TurnClock(self)

        problem = configuration.problem(self.values)
        if problem:
            raise SystemExit(f'[{NODE_NAME}] invalid parameter: {problem}')
        say_unknown_overrides(self, 'feedforward_node', DYNAMIC_PREFIXES + ('constraints.',))

        # the observer runs once its kernel is loaded; on a fresh install it compiles in a child
        # process while the commands flow
        self.observer_kernel = BackgroundKernels(
            self.get_logger(), OBSERVER_KERNELS, 'observer',
            'external torques and collision detection', self._observer_kernel_ready)
        self.out = None                   # preallocated messages (Outputs)
        self.cmd_pub = self.create_publisher(Float64MultiArray, 'effort_controller/commands', 10)
        self.torque_pub = self.create_publisher(JointState, '~/torques', STREAM_DEPTH)
        self.external_pub = self.create_publisher(JointState, '~/external_torques', STREAM_DEPTH)
        self.collision_pub = self.create_publisher(CollisionEvent, '~/collision', 10)
        self.pose_pub = self.create_publisher(PoseStamped, '~/current_pose', STREAM_DEPTH)
        self.wrench_pub = self.create_publisher(WrenchStamped, '~/external_wrench', STREAM_DEPTH)
        self.limits_pub = self.create_publisher(ActiveLimits, '~/active_limits', LATCHED)
        self.create_subscription(PoseStamped, '~/target_pose', self._on_target_pose, 10)
        self.create_subscription(TwistStamped, '~/target_twist', self._on_target_twist, 10)
        self.create_subscription(WrenchStamped, '~/target_wrench', self._on_target_wrench, 10)
        self.create_service(Trigger, '~/reset_collision', self._on_reset_collision)
        self.create_service(Trigger, '~/zero_ft_sensor', self._on_zero_ft_sensor)
        # callbacks of this node and of the loop thread take turns
        self.lock = threading.RLock()
        # the loop's streams, taken in its thread in this order when several wait: the time,
        # the force/torque sensor of force.source sensor (force_torque_sensor_broadcaster's: a
        # reading handled on this node's executor fell behind the states, issue 53), the states
        self.loop_thread = LoopThread(self)
        self.loop_thread.take_clock()
        self.loop_thread.subscribe(WrenchStamped, self.values['force.topic'], self._on_ft_wrench,
                                   STREAM_DEPTH)
        self.loop_thread.subscribe(JointState, 'joint_states', self._on_joint_states,
                                   JOINT_STATE_QOS)
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
        self.trajectory_action = TrajectoryAction(self)      # on a side node: <name>_actions
        self.action_node = self.trajectory_action.side
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

    # what the payload service reads
    ctrl = property(lambda self: self.loop.ctrl, doc='the running Controller (None: no model)')
    observer = property(lambda self: self.loop.observer, doc='the MomentumObserver or None')
    observer_ready = property(lambda self: self.loop.observer_ready,
                              doc='the observer\'s kernel is loaded')

    def clock(self):
        """Return this node's ROS time in seconds (simulated with use_sim_time)."""
        return self.get_clock().now().nanoseconds * 1e-9

    def destroy_node(self):
        self.observer_kernel.stop()
        self.trajectory_action.destroy()
        self.loop_thread.destroy()
        self.service_node.destroy_node()
        return super().destroy_node()

    # ---- configuration -----------------------------------------------------------------------
    def _build(self, model, v, old=None):
        """Return (controller, observer, its ObserverSettings) for ``v`` (ValueError)."""
        ctrl = configuration.controller(model, v)
        for line in configuration.deprecations(v):
            self.throttle.once(('deprecated', line), line)
        built = configuration.observer(ctrl, v, old)
        if built[0] is not None:        # loaded, or compiling elsewhere from now on
            self.loop.set_observer_ready(self.observer_kernel.need())
        return (ctrl, *built)

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
        commanded = configuration.commanded_joints(model, self.values)
        for name, what in constraint_parameters(commanded):
            if not self.has_parameter(name):
                self.values[name] = declare(self, name, float, 0.0, what,
                                            rule=configuration.rule(name))
                problem = configuration.problem(self.values)
                if problem and problem.startswith(name):        # a value given at start-up
                    log.error(f'ignoring parameter {problem}; 0.0 is used')
                    self.values[name] = 0.0
                    self.set_parameters([Parameter(name, value=0.0)])
        self._declaring = False
        # per-joint parameters given for joints this model does not have (a typo, another arm)
        for prefix in DYNAMIC_PREFIXES:
            names = [k[len(prefix):] for k in self._parameter_overrides if k.startswith(prefix)]
            for problem in unknown_joint_keys(model, names, prefix[:-1]):
                log.error(f'ignoring parameter {problem}')
        for name in self._parameter_overrides:
            if name.startswith('constraints.') and not self.has_parameter(name):
                log.error(f'ignoring parameter {name}: constraints.<joint>.trajectory and '
                          f'constraints.<joint>.goal take a commanded joint ({list(commanded)})')
        values = self.values
        t = time.monotonic()
        try:
            payload_model(model, configuration.payload(values))
        except ValueError as e:
            log.error(f'ignoring the payload parameters: {e}')
            values = dict(values, **{'payload.link': '', 'payload.mass': 0.0})
            self._declaring = True          # so that `ros2 param get` tells what is used
            self.set_parameters([Parameter('payload.link', value=''),
                                 Parameter('payload.mass', value=0.0)])
            self._declaring = False
        try:
            ctrl, observer, observing = self._build(model, values)
        except ValueError as e:
            log.error(f'robot_description from {source} does not fit the parameters: {e}; '
                      + ('keeping the previous model' if self.ctrl else 'still no model'))
            return
        self.values = values
        self.loop.use_model(ctrl, observer, observing, values, time.monotonic())
        self.model = model
        self.out = Outputs(ctrl)
        why = ('the joints parameter' if self.values['joints']
               else default_joints(model)[1])
        v = self.values
        log.info(f'model "{model.name}" from {source}: {model.n} joints; command order '
                 f'{list(ctrl.joints)} ({why})' + (
                     f'; payload {v["payload.mass"]} kg on {v["payload.link"]}'
                     if v['payload.link'] and v['payload.mass'] > 0 else '') + (
                     f'; armature {ctrl.base_model.armature.tolist()} (kg m^2 or kg)'
                     if v['armature'] else '') + (
                     f'; task frame {ctrl.task.frame}' + (
                         '' if v['task.frame'] else ' (the default: set task.frame for another)')
                     if ctrl.mode in TASK_MODES else ''))
        # what the first command needs (the mode's, the limits layer's), compiled now (or loaded
        # from numba's cache: ms); the
        # observer's kernel loaded from the cache, or compiled meanwhile in a child process (see
        # _build); the rest (another mode, the services) on first use
        observer_now = observer is not None and self.observer_ready     # see _build
        compile_kernels(['gravity_one', 'limit_command', 'limit_terms', 'joints_clear',
                         'joint_bounds',
                         'rnea_one', 'crba_one'] + (
            ['task_command', 'feedback_within'] if ctrl.mode in TASK_MODES else []) + (
            ['placement_one'] if ctrl.mode in TASK_MODES or ctrl.limit_layer.watches_frame
            else []) + (['jacobian_one'] if ctrl.limit_layer.watches_frame else []))
        log.info(f'kernels for mode {ctrl.mode}' + (' and the observer' if observer_now else '') +
                 f' ready in {time.monotonic() - t:.2f} s; {time.monotonic() - STARTED:.2f} s '
                 f'since the start of the process')

    @_locked
    def _on_set_parameters(self, params):
        if self._declaring:
            return SetParametersResult(successful=True)
        v = dict(self.values)
        for p in params:
            v[p.name] = p.value
        problem = configuration.problem(v)
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
                ctrl, observer, observing = self._build(model, v, self.observer)
                problem = self.loop.limits_refusal(ctrl)
            except ValueError as e:
                problem = str(e)
        if problem:
            return SetParametersResult(successful=False, reason=problem)
        self.values = v
        if model is not None:
            entering = ctrl.mode in TASK_MODES and (self.ctrl is None
                                                    or self.ctrl.mode != ctrl.mode)
            self.loop.use_parameters(ctrl, observer, observing, v,
                                     self.resolve_topic_name('~/target_pose'))
            if entering:
                compile_kernels(['task_command'])
            self.out = Outputs(ctrl)
        else:
            self.loop.use_values(v)
        if new_description is not None:
            self.description.use(v['robot_description'], 'parameter robot_description',
                                 new_description)
        names = ', '.join(f'{p.name}={shown_value(p.value)}' for p in params
                          if p.name != 'robot_description')
        self.get_logger().info(f'parameters set: {names or "robot_description"}')
        return SetParametersResult(successful=True)

    @_locked
    def _observer_kernel_ready(self):
        self.loop.set_observer_ready(True)

    # ---- inputs ------------------------------------------------------------------------------
    @_locked
    def _on_joint_states(self, msg):
        stamp = msg.header.stamp
        reply = self.loop.joint_states(msg.name, msg.position, msg.velocity, msg.effort,
                                       seconds(stamp), time.monotonic(),
                                       self.turn.reset())
        if reply is not None:
            self._send(reply, stamp)

    @_locked
    def _on_rate(self):
        reply = self.loop.rate_tick(time.monotonic(), self.turn.reset())
        if reply is not None:
            self._send(reply)

    @_locked
    def _watchdog(self):
        self.turn.reset()
        reply = self.loop.watchdog(time.monotonic())
        if reply is not None:
            self._send(reply)

    @staticmethod
    def _trajectory_tables(msg):
        """(names, times, positions, velocities, accelerations, efforts) of a message."""
        times = [seconds(p.time_from_start) for p in msg.points]
        tables = []
        for field in ('velocities', 'accelerations', 'effort'):
            sizes = {len(getattr(p, field)) > 0 for p in msg.points}
            if len(sizes) > 1:
                raise ValueError(f'{field} must be given for every point or for none')
            tables.append([list(getattr(p, field)) for p in msg.points] if True in sizes
                          else None)
        return (list(msg.joint_names), times, [list(p.positions) for p in msg.points],
                *tables)

    @_locked
    def _on_trajectory(self, msg):
        self.loop.trajectory(lambda: self._trajectory_tables(msg), len(msg.points),
                             seconds(msg.header.stamp), self.clock,
                             self.resolve_topic_name('~/target_pose'))

    def _on_check_trajectory(self, req, res):
        if self.ctrl is None:
            res.success, res.message = False, 'no robot_description yet'
            return res
        s = req.start_state
        try:
            result = self.loop.check(self._trajectory_tables(req.trajectory)[:5],
                                     (s.name, s.position, s.velocity),
                                     req.sample_period or 1e-3)
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

    @_locked
    def _on_reset_collision(self, request, response):
        response.success, response.message = self.loop.reset_collision()
        return response

    # ---- the force/torque sensor ---------------------------------------------------------------
    @_locked
    def _on_ft_wrench(self, msg):
        """
        Take a force/torque reading for the force axes.

        Its frame_id names the link below which the tool hangs (its weight is taken out); the
        reading's time is its stamp (the joint states' clock), or the arrival time unstamped.
        """
        ctrl = self.loop.ctrl
        if ctrl is None:
            return
        frame, topic = msg.header.frame_id, self.resolve_topic_name(self.values['force.topic'])
        src = ctrl.memory.sensor
        if src is None or src.side.frame != frame or src.side.model is not ctrl.model:
            try:
                side = ChildSide(ctrl.model, self.description.xml, frame)
            except ValueError as e:
                self.throttle.warning('ft frame', f'{topic}: frame_id: {e}: readings ignored')
                return
            v = self.values
            payload = ((v['payload.link'], v['payload.mass'], np.asarray(v['payload.com']))
                       if v['payload.link'] else None)
            src = ctrl.use_sensor(side, payload)
        f, t = msg.wrench.force, msg.wrench.torque
        stamp = seconds(msg.header.stamp)
        problem = src.take([f.x, f.y, f.z, t.x, t.y, t.z],
                           stamp if stamp > 0 else time.monotonic())
        if problem:
            self.throttle.warning('ft value', f'{topic}: {problem}: ignored')

    @_locked
    def _on_zero_ft_sensor(self, request, response):
        ctrl = self.loop.ctrl
        src = ctrl.memory.sensor if ctrl is not None else None
        if src is None or src.reading is None:
            response.success = False
            topic = self.resolve_topic_name(self.values['force.topic'])
            response.message = f'no reading on {topic} yet'
            return response
        bias = src.zero(ctrl.q)
        response.success = True
        response.message = (f'bias {np.round(bias, 4).tolist()} (N, N m; {src.side.frame}): the '
                            f'reading less the weight of {src.side.mass:.3g} kg below '
                            f'{src.side.frame}' + (' and the payload' if src.payload else ''))
        self.get_logger().info(f'zero_ft_sensor: {response.message}')
        return response

    # ---- task-space targets ------------------------------------------------------------------
    @_locked
    def _on_target_pose(self, msg):
        if self.loop.target_accepted('target_pose', msg.header.frame_id):
            p, o = msg.pose.position, msg.pose.orientation
            stamp = seconds(msg.header.stamp)
            self.loop.target_pose([p.x, p.y, p.z], [o.x, o.y, o.z, o.w], time.monotonic(),
                                  stamp if stamp > 0 else None)

    @_locked
    def _on_target_twist(self, msg):
        if self.loop.target_accepted('target_twist', msg.header.frame_id):
            v, w = msg.twist.linear, msg.twist.angular
            self.loop.target_twist([v.x, v.y, v.z, w.x, w.y, w.z], time.monotonic())

    @_locked
    def _on_target_wrench(self, msg):
        if self.loop.target_accepted('target_wrench', msg.header.frame_id):
            f, t = msg.wrench.force, msg.wrench.torque
            self.loop.target_wrench([f.x, f.y, f.z, t.x, t.y, t.z], time.monotonic())

    # ---- outputs -----------------------------------------------------------------------------
    def _send(self, reply, state_stamp=None):
        """
        Publish what one turn of the loop asks for.

        Outputs that answer a joint state carry its stamp; the others this node's clock.
        """
        loop, out, ctrl = self.loop, self.out, self.loop.ctrl
        if state_stamp is not None and not (state_stamp.sec or state_stamp.nanosec):
            state_stamp = None
        wrench = None                   # after the command: it is not on the loop's path
        self.payload_service.watch(ctrl)
        # the streams beside the command (volatile: a message no one has subscribed to is lost
        # anyway) are built and published only while someone listens (_listened)
        if reply.estimate:
            self.payload_service.take(ctrl.q, ctrl.qd, loop.estimate)
            if reply.publish_estimate:
                state_stamp = state_stamp or self.turn.stamp()
                if _listened(self.external_pub):
                    self.external_pub.publish(out.external_of(ctrl.q, ctrl.qd, loop.estimate,
                                                              state_stamp))
                if ctrl.mode in TASK_MODES and ctrl.law is not None and \
                        _listened(self.wrench_pub):
                    wrench = state_stamp
        if reply.collision is not None:
            self.collision_pub.publish(out.collision_of(*reply.collision,
                                                        state_stamp or self.turn.stamp()))
        if reply.command is not None:
            stamp = (state_stamp if reply.answers_state else None) or self.turn.stamp()
            self.cmd_pub.publish(out.command_of(reply.command))
            every = self.values['torques_every']
            if every and not loop.commands % every and _listened(self.torque_pub):
                self.torque_pub.publish(out.torques_of(reply.command, reply.desired, stamp))
            if reply.pose is not None and _listened(self.pose_pub):
                self.pose_pub.publish(out.pose_of(reply.pose, stamp))
            if reply.limits is not None:
                self.limits_pub.publish(ActiveLimits(
                    header=Header(stamp=stamp, frame_id=''), name=[a[0] for a in reply.limits],
                    kind=[a[1] for a in reply.limits]))
        if wrench is not None:
            # the external torques as the wrench a person pushing the task frame applies
            F = external_wrench(ctrl.law.jacobian[:, ctrl.cmd], loop.estimate[ctrl.cmd])
            self.wrench_pub.publish(out.wrench_of(F, wrench))


def _listened(publisher):
    """
    Return whether any subscription matches ``publisher``.

    Far cheaper than building and publishing a message to no one (d3c8652 has the figures).
    """
    return publisher.get_subscription_count() > 0


def main(args=None):
    return run_node(FeedforwardNode, args, usage(
        'feedforward_node', NODE_NAME, SUMMARY, PARAMETERS, INTERFACES, NOTES, constraint))


if __name__ == '__main__':
    sys.exit(main())
