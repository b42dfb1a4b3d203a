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
simulator_node (node ``dynamics_simulator``): an ABA simulation of the URDF arm over ROS 2.

Takes effort commands on ``effort_controller/commands`` (std_msgs/Float64MultiArray in ``joints``
order: the interface of ros2_control's ForwardCommandController), integrates the arm's forward
dynamics (``simulator.py``) at a fixed ``timestep`` and publishes ``joint_states`` (positions,
velocities, the efforts applied) at ``publish_rate`` and, with ``publish_clock``, ``/clock``.
The model comes from ``urdf_file``, the ``robot_description`` parameter or the transient-local
``robot_description`` topic; from a file or parameter it is also published on that topic (as
robot_state_publisher would), so a controller finds it. ``~/reset`` (std_srvs/Trigger) returns
to ``initial_positions``. The integration runs in its own thread, paced by the wall clock times
``real_time_factor`` (0: as fast as possible). Its parameters and interfaces are declared in
``simulator_declarations.py``.
"""
import sys
import threading
import time

import numpy as np
import rclpy
from builtin_interfaces.msg import Time
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, Vector3, WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from robot_dynamics_msgs.msg import Contacts
from robot_dynamics_msgs.srv import ApplyWrench, Step
from std_srvs.srv import SetBool, Trigger

from ..control import default_joints, shared_joints
from ..dynamics import PRISMATIC
from ..simulation import INTEGRATORS, Sensors, SimulatedArm, Simulator, initial_pose
from ..simulation.ft_sensor import FTSensor
from ..simulation.geometry import arm_geometry
from ..simulation.lockstep import LockstepAnswers
from ..simulation.sensors import FIELDS as SENSOR_FIELDS
from ..simulation.world import World
from .description import DESCRIPTION_QOS, DescriptionSource, file_description
from .executors import STREAM_DEPTH, LoopThread, run_node
from .launch_setup import SIMULATOR
from .logs import Throttle
from .messages import field_view
from .parameters import coerce_numbers, declare, say_unknown_overrides, usage
from .simulator_declarations import INTERFACES, PARAMETERS, SUMMARY

NODE_NAME = SIMULATOR
# s: the most the two perf_counter reads around a ROS clock read may differ for the pair to
# anchor the pacing (``_anchor``); a few tries, then the last pair
ANCHOR_SPREAD = 2e-4
ANCHOR_TRIES = 5


def carried_state(old, model, q0):
    """
    (q, qd, what) for a Simulator of ``model`` that takes over from ``old``.

    Joints both models have keep their position and velocity; a joint only the new model has
    starts at ``q0`` at rest.
    """
    q, qd = np.array(q0, dtype=float), np.zeros(model.n)
    mine, theirs = shared_joints(model, old.model)
    q[mine], qd[mine] = old.q[theirs], old.qd[theirs]
    new = [j for j in model.joint_names if j not in old.model.joint_names]
    return q, qd, 'the state before the description changed' + (
        f'; new joints {new} at their initial positions' if new else '')


class SimulatorNode(Node):

    def __init__(self):
        super().__init__(NODE_NAME)
        v = self.values = {name: declare(self, name, kind, default, desc, ro)
                           for name, (kind, default, desc, ro) in PARAMETERS.items()}
        problem = self._check(v)
        if problem:
            raise SystemExit(f'[{NODE_NAME}] invalid parameter: {problem}')
        say_unknown_overrides(self, 'simulator_node')
        try:
            self.world = World.from_file(v['world_file']) if v['world_file'] else World()
        except ValueError as e:
            raise SystemExit(f'[{NODE_NAME}] invalid parameter: {e}') from None
        self.lock = threading.Lock()
        self.arm = None                 # the SimulatedArm (None: no model yet)
        self._out = None                # (model, joint_states, its arrays, /clock): _messages
        self.halted = None              # why the simulation halted (None: running)
        self.paused = v['paused']
        self.granted = 0                # lockstep steps a paused simulation may still take
        self.reanchor = True
        self.schedule = None            # (ROS time ns, simulated s) of the pacing's anchor
        self.next_held = 0.0            # wall time of the next held-state message
        self.last_published = 0.0       # wall time the last state went out (lockstep's re-send)
        self.throttle = Throttle(self.get_logger())
        self.js_pub = self.create_publisher(JointState, 'joint_states', STREAM_DEPTH)
        self.clock_pub = (self.create_publisher(Clock, '/clock', 10)
                          if v['publish_clock'] or v['lockstep'] else None)
        self.diag_pub = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.ft_pub = (self.create_publisher(WrenchStamped,
                                             'force_torque_sensor_broadcaster/wrench',
                                             STREAM_DEPTH)
                       if v['ft_sensor.joint'] else None)
        self.contacts_pub = self.create_publisher(Contacts, '~/contacts', STREAM_DEPTH)
        self.ft_sensor = None           # the FTSensor of the model (None: no sensor)
        self.xml = None                 # the description simulated (its collision geometry)
        # the commands (and lockstep's answers) in a thread of their own, off the executor
        # that serves this node's services and parameters
        self.loop_thread = LoopThread(self)
        self.loop_thread.subscribe(Float64MultiArray, 'effort_controller/commands',
                                   self._on_command, 10)
        # lockstep one to one: the answer to the latest state (by its stamp) advances a step;
        # effort commands alone cannot say which state they answer, and every command that
        # answered none (a state published again while the controller started, a stale-state
        # command) left one more state in flight for good: commands acted 5 steps late
        self.answers = (v['lockstep_answers'] if v['lockstep'] and v['lockstep_answers']
                        else None)
        self.answers_seen = (0.0, False)    # (when checked, a publisher on the answers topic)
        # lockstep on answers: whether effort commands come without their answers (_resend)
        self.waiting = LockstepAnswers()
        if self.answers is not None:
            self.loop_thread.subscribe(JointState, self.answers, self._on_answer, 10)
        self.create_service(Trigger, '~/reset', self._on_reset)
        self.create_service(SetBool, '~/pause', self._on_pause)
        self.create_service(Step, '~/step', self._on_step)
        self.create_service(ApplyWrench, '~/apply_wrench', self._on_apply_wrench)
        self.add_pre_set_parameters_callback(lambda params: coerce_numbers(self, params))
        self.add_on_set_parameters_callback(self._on_set_parameters)
        xml, source = file_description(NODE_NAME, v['urdf_file'], v['xacro_args'])
        # given a file, the simulated arm is that file's: a description republished on the topic
        # (robot_state_publisher restarted, a comment added) must not rebuild it
        self.description = DescriptionSource(self, self._on_model, subscribe=xml is None)
        if xml is None:
            xml, source = v['robot_description'], 'parameter robot_description'
        if xml:
            if not self.description.use(xml, source):
                raise SystemExit(f'[{NODE_NAME}] the URDF from {source} is not usable')
            self.desc_pub = self.create_publisher(String, 'robot_description', DESCRIPTION_QOS)
            self.desc_pub.publish(String(data=xml))
            self.get_logger().info(f'publishing the URDF on {self.description.topic}')
        else:
            self.get_logger().info(f'waiting for robot_description on {self.description.topic}')
        self.running = True
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    @staticmethod
    def _check(v):
        if v['integrator'] not in INTEGRATORS:
            return f'integrator must be one of {INTEGRATORS}, got "{v["integrator"]}"'
        if not v['timestep'] > 0:
            return f'timestep must be > 0, got {v["timestep"]}'
        if not v['publish_rate'] > 0:
            return f'publish_rate must be > 0, got {v["publish_rate"]}'
        if not v['real_time_factor'] >= 0:
            return f'real_time_factor must be >= 0, got {v["real_time_factor"]}'
        if not v['command_timeout'] >= 0:
            return f'command_timeout must be >= 0 (0: the last command holds), got ' \
                   f'{v["command_timeout"]}'
        if not 0.0 <= v['limit_restitution'] <= 1.0:
            return f'limit_restitution must be in [0, 1], got {v["limit_restitution"]}'
        return None

    def _on_set_parameters(self, params):
        """
        Take the parameters that may change while running; refuse a bad value, keeping the old.

        command_timeout from the next step on; initial_positions for the next ``~/reset``;
        world_file reloads the world (refused, the old kept, if it does not load).
        """
        for p in params:
            if p.name == 'command_timeout':
                problem = self._check(dict(self.values, command_timeout=p.value))
                if problem:
                    return SetParametersResult(successful=False, reason=problem)
                self.values['command_timeout'] = float(p.value)
                continue
            if p.name == 'initial_positions':
                with self.lock:
                    arm = self.arm
                if arm is not None:
                    try:
                        q0, _ = initial_pose(arm.sim.model, arm.joints, p.value)
                    except ValueError as e:
                        return SetParametersResult(successful=False, reason=str(e))
                    with self.lock:
                        self.q0 = q0
                self.values['initial_positions'] = list(p.value)
                self.get_logger().info(f'initial_positions {list(p.value)}: from the next reset')
                continue
            if p.name != 'world_file':
                continue
            try:
                world = World.from_file(p.value) if p.value else World()
            except ValueError as e:
                self.get_logger().error(f'world_file not changed: {e}')
                return SetParametersResult(successful=False, reason=str(e))
            with self.lock:
                self.world = world
                if self.arm is not None:
                    self._use_world(self.arm.sim)
            self.get_logger().info(self._world_summary(world))
        return SetParametersResult(successful=True)

    def _use_world(self, sim):
        """Give ``sim`` the world (the lock held), its arm's geometry made the first time."""
        geometry = None
        if self.world.shapes and not sim.geometry.size and self.xml is not None:
            geometry = arm_geometry(sim.model, self.xml, self.values['mesh_package_paths'])
            for note in geometry.notes:
                self.get_logger().warning(f'contact: {note}')
            if not geometry.size:
                self.get_logger().error(
                    f'the world has shapes but {sim.model.name} has no usable <collision> '
                    f'geometry: nothing will touch them')
        sim.set_world(self.world, geometry)

    @staticmethod
    def _command_limits_summary(arm):
        soft = [j for j, b in zip(arm.joints, arm.limiter.velocity_band) if b]
        return ('; command limits enforced each step as ros2_control\'s enforce_command_limits '
                + (f'(the <safety_controller> band on {soft})' if soft else
                   '(saturation: no <safety_controller> in the description)'))

    @staticmethod
    def _world_summary(world):
        if not world.shapes:
            return f'world: none ({world.source})'
        c = world.contact
        return (f'world from {world.source}: ' + ', '.join(
            f'{s.type} "{s.name}"' for s in world.shapes) +
            f'; contact stiffness {c["stiffness"]:g} N/m per point, damping ratio '
            f'{c["damping_ratio"]:g}, friction {c["friction"]:g}')

    def _on_model(self, model, xml, source):
        v = self.values
        joints, why = ((tuple(v['joints']), 'the joints parameter') if v['joints']
                       else default_joints(model))
        try:
            unknown = [j for j in joints if j not in model.joint_names]
            if unknown:
                raise ValueError(f'joints {unknown} are not in the model')
            if v['armature']:
                model = model.with_armature(v['armature'])
            q0, pose = initial_pose(model, joints, v['initial_positions'])
            with self.lock:
                old = self.arm
            q, qd = q0, None
            if old is not None:
                # a description that changed while running: the arm stays where it is and keeps
                # moving as it was (the start pose only through ~/reset)
                q, qd, pose = carried_state(old.sim, model, q0)
            sim = Simulator(model, dt=v['timestep'], integrator=v['integrator'],
                            damping=v['damping'] or None, friction=v['friction'] or None, q0=q,
                            qd0=qd, restitution=v['limit_restitution'],
                            friction_asymmetry=v['friction_asymmetry'] or None)
            sensors = Sensors(model.n, seed=v['noise_seed'],
                              **{k: v[k] or None for k in SENSOR_FIELDS})
            ft_sensor = (FTSensor(model, xml, v['ft_sensor.joint'], v['ft_sensor.bias'],
                                  v['ft_sensor.noise'], seed=v['noise_seed'])
                         if v['ft_sensor.joint'] else None)
        except ValueError as e:
            self.get_logger().error(f'cannot simulate the model from {source}: {e}')
            return
        arm = SimulatedArm(sim, joints, sensors, braked=v['hold_until_command'],
                           enforce_command_limits=v['enforce_command_limits'])
        with self.lock:
            self.xml, self.ft_sensor = xml, ft_sensor
            self._use_world(sim)
            if old is not None:
                arm.take_over(old)
            else:
                self.halted = None
            self.arm, self.q0 = arm, q0
            self.reanchor = True
            self._units = ['m' if t == PRISMATIC else 'rad' for t in model.jtype]
        self.get_logger().info(
            f'simulating "{model.name}" ({model.n} joints) from {source}: dt {v["timestep"]} s, '
            f'{v["integrator"]}, ' + (
                (f'lockstep (one step per answer to the latest state on '
                 f'{self.resolve_topic_name(self.answers)}, else per effort command; '
                 if self.answers is not None else 'lockstep (one step per effort command; ')
                + 'joint_states and /clock after each); '
                if v['lockstep'] else
                f'joint_states at {v["publish_rate"]} Hz, real-time factor '
                f'{v["real_time_factor"] or "max"}; ') +
            f'command order {list(joints)} ({why}); '
            f'initial pose {np.round(sim.q, 4).tolist()} ({pose})' + (
                f'; armature {model.armature.tolist()} (kg m^2 or kg)' if v['armature'] else '')
            + (self._command_limits_summary(arm) if arm.limiter is not None else '')
            + ('; paused until ~/pause false' if self.paused else ''))
        self.get_logger().info(self._world_summary(self.world) + (
            f'; {sim.geometry.size} contact points on {len(sim.geometry.links)} links'
            if self.world.shapes else ''))
        if ft_sensor is not None:
            self.get_logger().info(
                f'force/torque sensor at {ft_sensor.joint} (frame {ft_sensor.frame}, '
                f'{ft_sensor.mass:.3g} kg below it) on '
                f'{self.resolve_topic_name("force_torque_sensor_broadcaster/wrench")}')

        if arm.braked:
            self.get_logger().info(
                f'holding the initial pose (brakes engaged) until the first effort command on '
                f'{self.resolve_topic_name("effort_controller/commands")}')

    def _on_command(self, msg):
        with self.lock:
            arm = self.arm
            if arm is None:
                return
            braked = arm.braked
            problem = arm.take(msg.data, time.monotonic())
            if problem:
                self.throttle.warning(problem, f'rejected command: {problem}')
                return
            if braked:
                self.get_logger().info('first effort command: releasing the brakes')
            if self.values['lockstep'] and self._may_step():
                if self._answered():
                    self.waiting.commanded()    # the answer to the latest state steps
                else:
                    self._lockstep()

    def _may_step(self):
        """Return whether lockstep may step: not halted; running, or paused with steps granted."""
        return self.halted is None and (not self.paused or self.granted > 0)

    def _lockstep(self):
        """Take one lockstep step and publish its state (the lock held)."""
        if self.paused:
            self.granted -= 1
        self._advance(1, stale_after=None)
        self.waiting.stepped()
        self._publish()

    def _answered(self):
        """Return whether lockstep steps on stamped answers (a publisher on their topic)."""
        if self.answers is None:
            return False
        now = time.monotonic()
        checked, live = self.answers_seen
        if now - checked > 1.0:         # the graph asked once a second, not per command
            live = self.count_publishers(self.resolve_topic_name(self.answers)) > 0
            self.answers_seen = (now, live)
        return live

    def _resend(self):
        """
        Lockstep: send the latest state again, nothing having stepped for 0.1 s (the lock held).

        Stepping on answers, with effort commands coming but no answer to the latest state
        UNANSWERED times in a row (simulation.lockstep), say so (every 10 s while it lasts): a
        controller that publishes on the answers topic but not with every command
        (feedforward_node's torques_every 0 or above 1) leaves lockstep waiting for good (0) or
        stepping once per re-send. Not a late answer (a stalled controller: once, then no
        command comes), nor a controller that waits for its first joint_states for less than a
        second (its on_timeout commands). Nothing else changes: stepping on commands then would
        take back the one-to-one steps (see _on_answer); the arm stands still meanwhile.
        """
        # (the graph asked only with a command waiting: asked at start-up, before a peer's
        # answers publisher is discovered, "none" would hold for a second)
        if self.waiting.awaiting and self._may_step() and self._answered() and \
                self.waiting.resent_state():
            self.throttle.warning(
                'unanswered',
                f'lockstep: effort commands come but no answer on '
                f'{self.resolve_topic_name(self.answers)} to the latest state '
                f'({self.waiting.unanswered} times in a row): waiting for one. The controller '
                f'answers on it with every command? (feedforward_node: only with '
                f'torques_every 1); has it joint_states yet?', 10.0)
        self._publish()

    def _on_answer(self, msg):
        """Lockstep: step once with the efforts that answer the latest state (by its stamp)."""
        with self.lock:
            arm = self.arm
            if arm is None or not self._may_step() or not arm.answers_latest(
                    (msg.header.stamp.sec, msg.header.stamp.nanosec)):
                return                  # the answer to an older state: it moves nothing
            braked = arm.braked
            problem = arm.take_answer(msg.name, msg.effort, time.monotonic())
            if problem:
                self.throttle.warning(f'answer: {problem}',
                                      f'{self.answers}: {problem}: not a step')
                return
            if braked:
                self.get_logger().info('first answer: releasing the brakes')
            self.waiting.answered()
            self._lockstep()

    def _on_reset(self, request, response):
        with self.lock:
            arm = self.arm
            if arm is None:
                response.success, response.message = False, 'no model yet'
                return response
            # a fresh start: no pushes, no command, the brakes on again (if they were at start)
            arm.reset(self.q0, braked=self.values['hold_until_command'])
            self.halted = None
            self.waiting.reset()
            self.granted = 0
            self.reanchor = True            # pace from now, not from the old start
            self._publish()
        self._diagnose()
        self.get_logger().info('reset to the initial pose' + (
            ' (brakes engaged until the next effort command)' if arm.braked else ''))
        response.success, response.message = True, 'reset to the initial pose'
        return response

    def _on_pause(self, request, response):
        with self.lock:
            changed = self.paused != request.data
            self.paused = bool(request.data)
            self.granted = 0
            self.reanchor = True            # resume paced from now
            t = self.arm.sim.t if self.arm is not None else 0.0
        response.success = True
        response.message = (f'{"paused" if self.paused else "running"} at t = {t:.4f} s'
                            + ('' if changed else ' (already)'))
        if changed:
            self.get_logger().info(response.message)
        self._diagnose()
        return response

    def _on_step(self, request, response):
        with self.lock:
            sim = self.arm.sim if self.arm is not None else None
            if sim is None:
                response.success, response.message = False, 'no model yet'
            elif not self.paused:
                response.success, response.message = False, 'not paused: call ~/pause first'
            elif self.halted is not None:
                response.success, response.message = False, f'halted: {self.halted}'
            elif self.values['lockstep']:
                # the closed loop goes on for N steps, each on the controller's answer, then
                # pauses again: a process that streams targets on simulated time (a test, a
                # demo) keeps pace with the simulation whatever the load (it grants the next
                # steps once it has sent what they need)
                self.granted += request.steps
                response.success = True
                response.message = (f'{request.steps} lockstep steps granted from t = '
                                    f'{sim.t:.4f} s ({self.granted} to go)')
                if self.granted:
                    self._publish()         # the state to answer, now
            else:
                done = self._advance(request.steps, stale_after=None)
                self._publish()
                response.success = self.halted is None
                response.message = (f'{done} steps to t = {sim.t:.4f} s' if response.success
                                    else f'halted after {done} steps: {self.halted}')
            response.time = sim.t if sim is not None else 0.0
        if self.halted is not None:
            self._diagnose()
        return response

    def _on_apply_wrench(self, request, response):
        w = request.wrench
        wrench = np.array([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z])
        with self.lock:
            arm = self.arm
            problem = 'no model yet' if arm is None else arm.push(request.link, wrench,
                                                                  request.duration)
            if problem:
                response.success, response.message = False, problem
                return response
            t = arm.sim.t
            response.stamp = self._stamp(t)
        response.success, response.time = True, t
        response.message = (f'removed the wrench on {request.link}' if not np.any(wrench) else
                            f'force {wrench[:3].tolist()} N, torque {wrench[3:].tolist()} N m on '
                            f'{request.link} from t = {t:.4f} s' + (
                                f' for {request.duration} s' if request.duration > 0 else
                                ' until replaced'))
        self.get_logger().info(response.message)
        return response

    # ---- the simulation ------------------------------------------------------------------------
    def _advance(self, steps, stale_after):
        """Step the arm (the lock held; see SimulatedArm.advance); halt if it diverged."""
        done, diverged = self.arm.advance(steps, time.monotonic(), stale_after)
        if diverged:
            self._halt(diverged)
        return done

    def _halt(self, reason):
        """Stop integrating (the lock held); the held state is published until ~/reset."""
        self.halted = reason
        self.get_logger().error(f'simulation stopped: {reason}; holding the last valid state '
                                f'(call ~/reset)')

    def _loop(self):
        """
        Run the simulation until shutdown.

        An unexpected error halts the simulation with its cause in the log and on /diagnostics
        (the thread lives on, ~/reset resumes); shutdown ends it quietly.
        """
        while self.running and rclpy.ok():
            try:
                self._simulate()
            except Exception as e:          # noqa: B902 - the thread must not die silently
                if not (self.running and rclpy.ok()):
                    return                  # the context went away under us: shutting down
                with self.lock:
                    self._halt(f'an error in the integration thread: {e!r}')
                self._diagnose()

    def _simulate(self):
        v = self.values
        rtf, dt = v['real_time_factor'], v['timestep']
        publish_every = max(1, int(round(1.0 / (v['publish_rate'] * dt))))
        held_period = 1.0 / v['publish_rate'] if v['publish_rate'] < 1e3 else 1e-3
        k = 0
        timed_out = False
        wall0, sim0 = time.perf_counter(), 0.0
        next_diagnostics = 0.0
        while self.running and rclpy.ok():
            now = time.monotonic()
            if now >= next_diagnostics:
                self._diagnose()
                next_diagnostics = now + 1.0
            with self.lock:
                arm = self.arm
                sim = arm.sim if arm is not None else None
                idle = sim is None or self.halted is not None or self.paused or v['lockstep']
                if sim is not None and idle and now >= self.next_held:
                    # halted or paused: a real arm still reports its joints (halted: at rest,
                    # brakes on). Lockstep, paused or not: the state again when none went out
                    # for 0.1 s, i.e. nothing stepped (the loop's first message, or one the
                    # controller lost; paused, the simulated time stands: a controller on it
                    # answering the same state at publish_rate is work for nothing, and more
                    # of it the longer a starved peer keeps the pause). Not "no command for
                    # 0.1 s": a controller without states commands its on_timeout torque every
                    # 50 ms, which a lost first state never ended
                    if not v['lockstep'] or self.halted is not None:
                        self._publish(held=self.halted is not None)
                        self.next_held = now + held_period
                    elif now - self.last_published > 0.1:
                        self._resend()
                        self.next_held = now + 0.1
                if not idle:
                    if self.reanchor:
                        wall0, sim0 = self._anchor(sim.t)
                        self.reanchor = False
                    # command_timeout 0: the last command holds however old (as a
                    # ForwardCommandController), else zero torque after it, as a watchdog
                    stale_after = v['command_timeout'] or None
                    if stale_after is None or arm.fresh(now, stale_after):
                        timed_out = False
                    elif arm.last_command is not None and not timed_out:
                        timed_out = True
                        self.get_logger().warning(
                            f'no command for {v["command_timeout"]} s: applying zero torque')
                    self._advance(1, stale_after=stale_after)
                    k += 1
                    if k % publish_every == 0 or self.halted is not None:
                        self._publish(held=self.halted is not None)
                    halted_now = self.halted is not None
                else:
                    halted_now = False
            if halted_now:
                self._diagnose()
            if idle:
                time.sleep(min(0.01, held_period))
                continue
            if rtf > 0:
                target = wall0 + (sim.t - sim0) / rtf
                lag = time.perf_counter() - target
                if lag > 0.1:
                    # too slow for this real-time factor: drop the lag rather than racing to
                    # catch up (which would starve the command callbacks)
                    self.throttle.warning('lag', f'simulation {lag * 1e3:.0f} ms behind real '
                                                 f'time (real_time_factor {rtf}): skipping ahead',
                                          10.0)
                    wall0, sim0 = self._anchor(sim.t)
                    continue
                left = target - time.perf_counter()
                if left > 0:
                    time.sleep(left)        # a little late at worst; no busy wait on 2 cores

    def _publish(self, held=False):
        """Publish joint_states (and /clock) of the arm now (the lock held; see its report)."""
        arm = self.arm
        q, qd, effort = arm.report(held)
        msg, fields, clock = self._messages(arm.sim.model)
        fields[0][:], fields[1][:], fields[2][:] = q, qd, effort
        msg.header.stamp = self._stamp(arm.sim.t, held)
        if self.clock_pub is not None:
            clock.clock = msg.header.stamp
            self.clock_pub.publish(clock)
            arm.latest_stamp = (msg.header.stamp.sec, msg.header.stamp.nanosec)
        sim = arm.sim
        # the force/torque reading before the joint state it goes with: a controller that takes
        # both in one wake-up (feedforward_node) then has the reading when it answers the state
        if self.ft_pub is not None and self.ft_sensor is not None:
            wrenches = sim.contact_wrenches()
            for link, w in sim.wrenches.items():
                wrenches[link] = wrenches.get(link, 0.0) + w
            f = self.ft_sensor.read(sim.q, sim.qd, np.zeros(sim.model.n) if held else arm.qdd,
                                    wrenches)
            wrench = WrenchStamped()
            wrench.header.stamp, wrench.header.frame_id = msg.header.stamp, self.ft_sensor.frame
            wrench.wrench.force = Vector3(x=f[0], y=f[1], z=f[2])
            wrench.wrench.torque = Vector3(x=f[3], y=f[4], z=f[5])
            self.ft_pub.publish(wrench)
        self.js_pub.publish(msg)
        self.last_published = time.monotonic()
        if self.world.shapes:
            contacts = sim.contacts()
            out = Contacts(link=[c['link'] for c in contacts],
                           shape=[c['shape'] for c in contacts],
                           position=[Point(x=c['position'][0], y=c['position'][1],
                                           z=c['position'][2]) for c in contacts],
                           force=[Vector3(x=c['force'][0], y=c['force'][1], z=c['force'][2])
                                  for c in contacts],
                           points=[c['points'] for c in contacts])
            out.header.stamp, out.header.frame_id = msg.header.stamp, sim.model.root_link
            self.contacts_pub.publish(out)

    def _messages(self, model):
        """
        Return the joint_states message of ``model`` (its arrays' numpy views) and the /clock one.

        Made once per model and filled for each publish (rclpy serializes on publish): no
        message, list or array built at each step (~15 % of the simulator's time a step).
        """
        if self._out is None or self._out[0] is not model:
            msg = JointState(name=list(model.joint_names))
            fields = [field_view(msg, f, model.n) for f in ('position', 'velocity', 'effort')]
            self._out = (model, msg, fields, Clock())
        return self._out[1:]

    def _anchor(self, t):
        """
        Pace and stamp from simulated time ``t`` on; return (perf_counter time, t) of one instant.

        The perf_counter time is the middle of the two reads around the ROS clock's, which
        ``schedule`` gets (ns) with ``t``: the same instant, within ANCHOR_SPREAD.

        The pacing runs on perf_counter and stamps on the ROS clock: a stall between the two
        reads (a loaded machine) put the schedule's anchors apart, and a re-pacing's jump in the
        stamps came out 83 ms where the lag dropped was over 0.1 s (fresh-clone CI beside a busy
        core). Read again when the two perf_counter reads around the ROS one are too far apart.
        """
        for _ in range(ANCHOR_TRIES):
            before = time.perf_counter()
            ros = self.get_clock().now().nanoseconds
            after = time.perf_counter()
            if after - before <= ANCHOR_SPREAD:
                break
        self.schedule = (ros, t)
        return 0.5 * (before + after), t

    def _stamp(self, t, held=False):
        """
        Return the stamp of the joint state at simulated time ``t`` (the lock held).

        In lockstep the simulated time (/clock). In real time the time the state holds at on the
        pacing's schedule, not the time it happens to go out: stamps a simulated step apart, as a
        driver stamps its samples. Publish times put a late wake-up's 6-13 ms between two states
        and the catching-up ones 0.02-0.05 ms apart (1 kHz, a loaded machine); the observer
        integrated the torques over those: 131 % of the peak command as phantom external torque
        on ur5. Held, paused or off real time: now.
        """
        if self.clock_pub is not None:
            sec, nsec = divmod(int(round(t * 1e9)), 10**9)
            return Time(sec=sec, nanosec=nsec)
        if (self.schedule is not None and self.values['real_time_factor'] == 1.0
                and not held and not self.paused):
            ros0, sim0 = self.schedule
            sec, nsec = divmod(ros0 + int(round((t - sim0) * 1e9)), 10**9)
            return Time(sec=sec, nanosec=nsec)
        return self.get_clock().now().to_msg()

    def _diagnose(self):
        """Publish the simulator's status on /diagnostics (as ROS drivers report theirs)."""
        with self.lock:
            sim, halted = (self.arm.sim if self.arm is not None else None), self.halted
            status = DiagnosticStatus(name=f'{self.get_name()}: simulation',
                                      hardware_id=sim.model.name if sim is not None else '')
            if sim is None:
                status.level, status.message = DiagnosticStatus.WARN, 'waiting for a model'
            elif halted is not None:
                status.level, status.message = DiagnosticStatus.ERROR, f'halted: {halted}'
            else:
                status.level = DiagnosticStatus.OK
                status.message = ('paused' if self.paused else
                                  'holding the initial pose (brakes engaged)' if self.arm.braked
                                  else 'lockstep' if self.values['lockstep'] else 'running')
            if sim is not None:
                status.values = [KeyValue(key='time (s)', value=f'{sim.t:.4f}')] + ([
                    KeyValue(key='contacts', value=', '.join(
                        f'{c["link"]} on {c["shape"]}: {np.linalg.norm(c["force"]):.3g} N'
                        for c in sim.contacts()) or 'none')] if self.world.shapes else []) + [
                    KeyValue(key=f'{j} position ({u}), velocity ({u}/s)',
                             value=f'{q:.6g}, {qd:.6g}')
                    for j, u, q, qd in zip(sim.model.joint_names, self._units, sim.q, sim.qd)]
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = self.get_clock().now().to_msg()
        try:
            self.diag_pub.publish(msg)
        except Exception:                   # noqa: B902 - shutting down: the publisher is gone
            pass

    def destroy_node(self):
        self.running = False
        if getattr(self, 'thread', None) is not None:
            self.thread.join(timeout=2.0)
        if getattr(self, 'loop_thread', None) is not None:
            self.loop_thread.destroy()
        super().destroy_node()


def main(args=None):
    return run_node(SimulatorNode, args, usage(
        'simulator_node', NODE_NAME, SUMMARY, PARAMETERS, INTERFACES))


if __name__ == '__main__':
    sys.exit(main())
