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
Serves ``~/inverse_dynamics`` (robot_dynamics_msgs/srv/InverseDynamics). The rules of the loop
(state merging, timeouts, the observer, collisions, model changes, targets) live in
``control/loop.py``, the arithmetic in ``control/controller.py``; this module declares the
parameters, builds the controller from them, and translates messages to and from the loop.
"""
import array
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
from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped
from robot_dynamics_msgs.msg import CollisionEvent
from robot_dynamics_msgs.srv import CheckTrajectory, EstimatePayload, InverseDynamics
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from ..control import TASK_MODES, configuration, default_joints, payload_model, unknown_joint_keys
from ..control.loop import ControlLoop
from ..control.task_space import SINGULARITY_DAMPING
from ..dynamics import RobotModel, compile_kernels
from ..dynamics.frames import quaternion
from ..dynamics.kernels import compile_in_background, load_cached
from .common import (STARTED, STREAM_DEPTH, DescriptionSource, Throttle, TurnClock,
                     coerce_numbers, declare, file_description, loop_node, run_node, side_node,
                     usage)
from .feedforward_declarations import (DYNAMIC_PREFIXES, INTERFACES, NOTES,  # noqa: F401
                                       PARAMETERS, SUMMARY)
from .launch_setup import CONTROLLER
from .payload_service import PayloadService

NODE_NAME = CONTROLLER

OBSERVER_KERNELS = ['observer_step']            # what MomentumObserver.update runs
JOINT_STATE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)


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


class FeedforwardNode(Node):

    def __init__(self):
        super().__init__(NODE_NAME)
        self.values = {name: declare(self, name, kind, default, desc, ro)
                       for name, (kind, default, desc, ro) in PARAMETERS.items()}
        self.model = None
        self._declaring = False
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.throttle = Throttle(self.get_logger())
        self.loop = ControlLoop(self.throttle)      # the rules; this node wires them to ROS
        self.turn = TurnClock(self)

        problem = configuration.problem(self.values)
        if problem:
            raise SystemExit(f'[{NODE_NAME}] invalid parameter: {problem}')

        # the observer runs once its kernel is loaded; on a fresh install it compiles in a child
        # process (compile_in_background) while the commands flow
        self.observer_compiling = None
        self.out = None                   # preallocated messages (Outputs)
        self.wrench_pending = None        # (external torques, stamp) for ~/external_wrench
        self.cmd_pub = self.create_publisher(Float64MultiArray, 'effort_controller/commands', 10)
        self.torque_pub = self.create_publisher(JointState, '~/torques', STREAM_DEPTH)
        self.external_pub = self.create_publisher(JointState, '~/external_torques', STREAM_DEPTH)
        self.collision_pub = self.create_publisher(CollisionEvent, '~/collision', 10)
        self.pose_pub = self.create_publisher(PoseStamped, '~/current_pose', STREAM_DEPTH)
        self.wrench_pub = self.create_publisher(WrenchStamped, '~/external_wrench', STREAM_DEPTH)
        self.create_subscription(PoseStamped, '~/target_pose', self._on_target_pose, 10)
        self.create_subscription(TwistStamped, '~/target_twist', self._on_target_twist, 10)
        self.create_subscription(WrenchStamped, '~/target_wrench', self._on_target_wrench, 10)
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

    # what the payload service reads
    ctrl = property(lambda self: self.loop.ctrl, doc='the running Controller (None: no model)')
    observer = property(lambda self: self.loop.observer, doc='the MomentumObserver or None')
    observer_ready = property(lambda self: self.loop.observer_ready,
                              doc='the observer\'s kernel is loaded')

    def clock(self):
        """Return this node's ROS time in seconds (simulated with use_sim_time)."""
        return self.get_clock().now().nanoseconds * 1e-9

    def destroy_node(self):
        if self.observer_compiling is not None and self.observer_compiling.poll() is None:
            self.observer_compiling.kill()
        self.loop_node.destroy_node()
        self.service_node.destroy_node()
        return super().destroy_node()

    # ---- configuration -----------------------------------------------------------------------
    def _build(self, model, v, old=None):
        """Return (controller, observer, thresholds, effort gains) for ``v`` (ValueError)."""
        ctrl = configuration.controller(model, v)
        built = configuration.observer(ctrl, v, old)
        if built[0] is not None:
            self._observer_kernel()     # loaded, or compiling elsewhere from now on
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
        self._declaring = False
        # per-joint parameters given for joints this model does not have (a typo, another arm)
        for prefix in DYNAMIC_PREFIXES:
            names = [k[len(prefix):] for k in self._parameter_overrides if k.startswith(prefix)]
            for problem in unknown_joint_keys(model, names, prefix[:-1]):
                log.error(f'ignoring parameter {problem}')
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
            ctrl, observer, thresholds, effort_gain = self._build(model, values)
        except ValueError as e:
            log.error(f'robot_description from {source} does not fit the parameters: {e}; '
                      + ('keeping the previous model' if self.ctrl else 'still no model'))
            return
        self.values = values
        self.loop.use_model(ctrl, observer, thresholds, effort_gain, values, time.monotonic())
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
                     f'; task frame {ctrl.task["frame"]}' + (
                         '' if v['task.frame'] else ' (the default: set task.frame for another)')
                     if ctrl.mode in TASK_MODES else ''))
        # what the first command needs, compiled now (or loaded from numba's cache: ms); the
        # observer's kernel loaded from the cache, or compiled meanwhile in a child process (see
        # _build); the rest (another mode, the services) on first use
        observer_now = observer is not None and self.observer_ready     # see _build
        compile_kernels(['gravity_one', 'limit_command'] + (
            ['rnea_one'] if ctrl.mode != 'gravity' else []) + (
            ['task_command', 'placement_one'] if ctrl.mode in TASK_MODES else []))
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
                ctrl, observer, thresholds, effort_gain = self._build(model, v, self.observer)
            except ValueError as e:
                problem = str(e)
        if problem:
            return SetParametersResult(successful=False, reason=problem)
        self.values = v
        if model is not None:
            entering = ctrl.mode in TASK_MODES and (self.ctrl is None
                                                    or self.ctrl.mode != ctrl.mode)
            self.loop.use_parameters(ctrl, observer, thresholds, effort_gain, v,
                                     self.resolve_topic_name('~/target_pose'))
            if entering:
                compile_kernels(['task_command'])
            self.out = Outputs(ctrl)
        else:
            self.loop.values = v
        if new_description is not None:
            self.description.use(v['robot_description'], 'parameter robot_description',
                                 new_description)
        names = ', '.join(f'{p.name}={p.value}' for p in params if p.name != 'robot_description')
        self.get_logger().info(f'parameters set: {names or "robot_description"}')
        return SetParametersResult(successful=True)

    # ---- the observer's kernel ---------------------------------------------------------------
    def _observer_kernel(self):
        """
        Load the observer's kernel from numba's cache, or start compiling it (once) elsewhere.

        Compiling it here would hold up the commands (3.5 s on a fresh install; on another
        thread the GIL stalls them up to 0.27 s at a time): a child process compiles it into
        numba's cache while this one commands, and the observer starts when it is loaded.
        """
        if not self.loop.observer_ready and self.observer_compiling is None:
            if not load_cached(OBSERVER_KERNELS):
                self.loop.observer_ready = True
            else:
                self.observer_compiling = compile_in_background(OBSERVER_KERNELS,
                                                                self._on_observer_compiled)
                self.get_logger().info(
                    'observer: its kernel is not in numba\'s cache (a first start after an '
                    'install): compiling it in a separate process; external torques and '
                    'collision detection start when it is ready')

    def _on_observer_compiled(self, seconds, error):
        with self.lock:
            self.loop.observer_ready = True
            if error:
                self.get_logger().warning(
                    f'observer: compiling its kernel in a separate process failed ({error}); '
                    f'compiled here instead, {seconds:.1f} s after it was needed')
            else:
                self.get_logger().info(f'observer: kernel ready {seconds:.1f} s after it was '
                                       f'needed; external torques from the next joint_states on')

    # ---- inputs ------------------------------------------------------------------------------
    @_locked
    def _on_joint_states(self, msg):
        stamp = msg.header.stamp
        reply = self.loop.joint_states(msg.name, msg.position, msg.velocity, msg.effort,
                                       stamp.sec + 1e-9 * stamp.nanosec, time.monotonic(),
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

    @_locked
    def _on_trajectory(self, msg):
        stamp = msg.header.stamp
        self.loop.trajectory(lambda: self._trajectory_tables(msg), len(msg.points),
                             stamp.sec + 1e-9 * stamp.nanosec, self.clock,
                             self.resolve_topic_name('~/target_pose'))

    def _on_check_trajectory(self, req, res):
        if self.ctrl is None:
            res.success, res.message = False, 'no robot_description yet'
            return res
        s = req.start_state
        try:
            result = self.loop.check(self._trajectory_tables(req.trajectory),
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

    # ---- task-space targets ------------------------------------------------------------------
    @_locked
    def _on_target_pose(self, msg):
        if self.loop.target_accepted('target_pose', msg.header.frame_id):
            p, o = msg.pose.position, msg.pose.orientation
            self.loop.target_pose([p.x, p.y, p.z], [o.x, o.y, o.z, o.w], time.monotonic())

    @_locked
    def _on_target_twist(self, msg):
        if self.loop.target_accepted('target_twist', msg.header.frame_id):
            v, w = msg.twist.linear, msg.twist.angular
            self.loop.target_twist([v.x, v.y, v.z, w.x, w.y, w.z], time.monotonic())

    @_locked
    def _on_target_wrench(self, msg):
        if self.loop.target_accepted('target_wrench', msg.header.frame_id):
            f, t = msg.wrench.force, msg.wrench.torque
            self.loop.target_wrench([f.x, f.y, f.z, t.x, t.y, t.z])

    # ---- outputs -----------------------------------------------------------------------------
    def _send(self, reply, state_stamp=None):
        """
        Publish what one turn of the loop asks for.

        Outputs that answer a joint state carry its stamp; the others this node's clock.
        """
        loop, out, ctrl = self.loop, self.out, self.loop.ctrl
        if state_stamp is not None and not (state_stamp.sec or state_stamp.nanosec):
            state_stamp = None
        if reply.estimate:
            self.payload_service.take(ctrl.q, loop.estimate)
            if reply.publish_estimate:
                msg = out.external_msg
                out.external[0][:], out.external[1][:] = ctrl.q, ctrl.qd
                out.external[2][:] = loop.estimate
                msg.header.stamp = state_stamp = state_stamp or self.turn.stamp()
                self.external_pub.publish(msg)
                if ctrl.mode in TASK_MODES and ctrl.law is not None:
                    self.wrench_pending = (loop.estimate.copy(), state_stamp)
        if reply.collision is not None:
            over, r, thresholds, reaction = reply.collision
            event = CollisionEvent(name=[ctrl.base_model.joint_names[i] for i in over],
                                   external_torque=r.tolist(), threshold=thresholds.tolist(),
                                   reaction=reaction)
            event.header.stamp = state_stamp or self.turn.stamp()
            self.collision_pub.publish(event)
        if reply.command is not None:
            self._publish(reply, state_stamp if reply.answers_state else None)
        if self.wrench_pending is not None:
            self._publish_wrench()

    def _publish(self, reply, stamp):
        """Publish the command, ~/torques (every torques_every-th) and the task frame's pose."""
        ctrl, out = self.ctrl, self.out
        out.command[:] = reply.command
        self.cmd_pub.publish(out.command_msg)
        every = self.values['torques_every']
        if every and not self.loop.commands % every:
            if reply.desired is None:
                msg = out.torques_msg
                out.effort[:] = reply.command
            else:
                msg = out.desired_msg
                out.desired[0][:] = reply.desired[0][ctrl.cmd]
                out.desired[1][:] = reply.desired[1][ctrl.cmd]
                out.desired[2][:] = reply.command
            # the joint state these efforts answer, or now
            msg.header.stamp = stamp or self.turn.stamp()
            self.torque_pub.publish(msg)
        if reply.pose is not None:
            self._publish_pose(reply.pose, stamp)

    def _publish_pose(self, T, stamp):
        """~/current_pose: the task frame's pose (4x4) at the state the command answers."""
        msg = self.out.pose_msg
        msg.header.stamp = stamp or self.turn.stamp()
        p, o = msg.pose.position, msg.pose.orientation
        p.x, p.y, p.z = float(T[0, 3]), float(T[1, 3]), float(T[2, 3])
        o.x, o.y, o.z, o.w = map(float, quaternion(T))
        self.pose_pub.publish(msg)

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


def main(args=None):
    return run_node(FeedforwardNode, args, usage(
        'feedforward_node', NODE_NAME, SUMMARY, PARAMETERS, INTERFACES, NOTES))


if __name__ == '__main__':
    sys.exit(main())
