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
``real_time_factor`` (0: as fast as possible).
"""
import sys
import threading
import time

import numpy as np
import rclpy
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger

from ..control import default_joints
from ..simulation import INTEGRATORS, SimulationDiverged, Simulator, initial_pose
from .common import (DESCRIPTION_QOS, DescriptionSource, Throttle, coerce_numbers, declare,
                     run_node, usage)

NODE_NAME = 'dynamics_simulator'

PARAMETERS = {
    'urdf_file': (str, '', 'URDF file to simulate (also published on robot_description)', True),
    'robot_description': (str, '', 'URDF string, when there is no urdf_file', True),
    'joints': ('str[]', [], 'command order (empty: the effort joints of the <ros2_control> '
                            'blocks, else every movable joint in model order)', True),
    'initial_positions': ('float[]', [], 'start and reset positions in joints order (empty: the '
                                         'initial_value of the <ros2_control> position state '
                                         'interfaces, else zero clamped into the limits)', False),
    'timestep': (float, 0.001, 'integration step (s)', True),
    'integrator': (str, 'semi_implicit_euler', f'one of {", ".join(INTEGRATORS)}', True),
    'publish_rate': (float, 500.0, 'joint_states rate (Hz of simulated time)', True),
    'command_timeout': (float, 0.1, 'torques go to zero when no command came for this long (s)',
                        False),
    'real_time_factor': (float, 1.0, 'simulated seconds per wall second; 0: as fast as possible',
                         True),
    'publish_clock': (bool, False, 'publish the simulated time on /clock', True),
    'hold_until_command': (bool, True, 'hold the initial pose (brakes engaged) until the first '
                                       'effort command; false: integrate from the start', True),
    'damping': ('float[]', [], 'viscous damping per joint (empty: the URDF <dynamics damping>)',
                True),
    'friction': ('float[]', [], 'Coulomb friction per joint (empty: the URDF <dynamics friction>)',
                 True),
    'armature': ('float[]', [], 'rotor inertia reflected to each joint, added to the mass matrix '
                                'diagonal: one for all or one per model joint (kg m^2; kg for '
                                'prismatic joints; empty: none)', True),
    'limit_restitution': (float, 0.0, 'velocity kept (reversed) when a joint hits a position '
                                      'limit: 0 stops it (inelastic), 1 bounces it back '
                                      '(elastic)', True),
}
INTERFACES = (
    'subscribes: effort_controller/commands (std_msgs/Float64MultiArray, in joints order), '
    'robot_description (std_msgs/String, transient local; without urdf_file)',
    'publishes:  joint_states (sensor_msgs/JointState), /clock (with publish_clock), '
    'robot_description (from urdf_file or the parameter)',
    'services:   ~/reset (std_srvs/Trigger)')


class SimulatorNode(Node):

    def __init__(self):
        super().__init__(NODE_NAME)
        v = self.values = {name: declare(self, name, kind, default, desc, ro)
                           for name, (kind, default, desc, ro) in PARAMETERS.items()}
        problem = self._check(v)
        if problem:
            raise SystemExit(f'[{NODE_NAME}] invalid parameter: {problem}')
        self.lock = threading.Lock()
        self.sim = None
        self.joints = ()
        self.cmd_idx = None
        self.command = None
        self.last_command = None
        self.halted = False
        self.braked = False             # holding the initial pose until the first command
        self.reanchor = True
        self.throttle = Throttle(self.get_logger())
        self.js_pub = self.create_publisher(JointState, 'joint_states', 10)
        self.clock_pub = self.create_publisher(Clock, '/clock', 10) if v['publish_clock'] else None
        self.create_subscription(Float64MultiArray, 'effort_controller/commands',
                                 self._on_command, 10)
        self.create_service(Trigger, '~/reset', self._on_reset)
        self.add_pre_set_parameters_callback(lambda params: coerce_numbers(self, params))
        self.description = DescriptionSource(self, self._on_model)
        xml, source = v['robot_description'], 'parameter robot_description'
        if v['urdf_file']:
            try:
                with open(v['urdf_file'], encoding='utf-8') as f:
                    xml, source = f.read(), f'file {v["urdf_file"]}'
            except OSError as e:
                raise SystemExit(f'[{NODE_NAME}] cannot read urdf_file {v["urdf_file"]}: '
                                 f'{e.strerror}') from None
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
        if not v['command_timeout'] > 0:
            return f'command_timeout must be > 0, got {v["command_timeout"]}'
        if not 0.0 <= v['limit_restitution'] <= 1.0:
            return f'limit_restitution must be in [0, 1], got {v["limit_restitution"]}'
        return None

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
            sim = Simulator(model, dt=v['timestep'], integrator=v['integrator'],
                            damping=v['damping'] or None, friction=v['friction'] or None, q0=q0,
                            restitution=v['limit_restitution'])
        except ValueError as e:
            self.get_logger().error(f'cannot simulate the model from {source}: {e}')
            return
        with self.lock:
            self.sim, self.joints, self.q0 = sim, joints, q0
            self.cmd_idx = np.array([model.index(j) for j in joints], dtype=np.int64)
            self.command, self.last_command, self.halted = None, None, False
            self.braked = v['hold_until_command']
            self.reanchor = True
        self.get_logger().info(
            f'simulating "{model.name}" ({model.n} joints) from {source}: dt {v["timestep"]} s, '
            f'{v["integrator"]}, joint_states at {v["publish_rate"]} Hz, real-time factor '
            f'{v["real_time_factor"] or "max"}; command order {list(joints)} ({why}); '
            f'initial pose {np.round(q0, 4).tolist()} ({pose})' + (
                f'; armature {model.armature.tolist()} (kg m^2 or kg)' if v['armature'] else ''))
        if v['hold_until_command']:
            self.get_logger().info(
                f'holding the initial pose (brakes engaged) until the first effort command on '
                f'{self.resolve_topic_name("effort_controller/commands")}')

    def _on_command(self, msg):
        with self.lock:
            if self.sim is None:
                return
            data = np.asarray(msg.data, dtype=float)
            if data.shape != (len(self.joints),):
                self.throttle.warning('len', f'rejected command: {data.size} values for '
                                             f'{len(self.joints)} joints {list(self.joints)}')
                return
            if not np.all(np.isfinite(data)):
                self.throttle.warning('nan', 'rejected command: NaN or Inf')
                return
            self.command = data
            self.last_command = time.monotonic()
            if self.braked:
                self.braked = False
                self.get_logger().info('first effort command: releasing the brakes')

    def _on_reset(self, request, response):
        with self.lock:
            if self.sim is None:
                response.success, response.message = False, 'no model yet'
                return response
            self.sim.reset(self.q0)
            self.command, self.last_command, self.halted = None, None, False
            self.braked = self.values['hold_until_command']     # brakes on again
            self.reanchor = True            # pace from now, not from the old start
        self.get_logger().info('reset to initial_positions')
        response.success, response.message = True, 'reset to initial_positions'
        return response

    # ---- the simulation thread ---------------------------------------------------------------
    def _loop(self):
        """
        Run the simulation until shutdown.

        An unexpected error halts the simulation with its cause in the log (the thread lives on,
        ~/reset resumes); shutdown ends it quietly.
        """
        while self.running and rclpy.ok():
            try:
                self._simulate()
            except Exception as e:          # noqa: B902 - the thread must not die silently
                if not (self.running and rclpy.ok()):
                    return                  # the context went away under us: shutting down
                with self.lock:
                    self.halted = True
                self.get_logger().error(f'simulation stopped by an error in the integration '
                                        f'thread: {e!r}; holding the last state (call ~/reset)')

    def _simulate(self):
        v = self.values
        rtf, dt = v['real_time_factor'], v['timestep']
        publish_every = max(1, int(round(1.0 / (v['publish_rate'] * dt))))
        k = 0
        timed_out = False
        wall0, sim0 = time.perf_counter(), 0.0
        while self.running and rclpy.ok():
            with self.lock:
                sim = self.sim
                if sim is None or self.halted:
                    pass
                else:
                    if self.reanchor:
                        wall0, sim0, self.reanchor = time.perf_counter(), sim.t, False
                    tau = np.zeros(sim.model.n)
                    fresh = (self.last_command is not None and
                             time.monotonic() - self.last_command <= v['command_timeout'])
                    if fresh:
                        tau[self.cmd_idx] = self.command
                        timed_out = False
                    elif self.last_command is not None and not timed_out:
                        timed_out = True
                        self.get_logger().warning(
                            f'no command for {v["command_timeout"]} s: applying zero torque')
                    try:
                        if self.braked:             # the brakes hold the pose; time runs on
                            sim.t += sim.dt
                        else:
                            sim.step(tau)
                    except SimulationDiverged as e:
                        self.halted = True
                        self.get_logger().error(f'simulation stopped: {e}; holding the last '
                                                f'valid state (call ~/reset)')
                    k += 1
                    if k % publish_every == 0 or self.halted:
                        self._publish(sim)
            if sim is None or self.halted:
                time.sleep(0.01)
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
                    wall0, sim0 = time.perf_counter(), sim.t
                    continue
                left = target - time.perf_counter()
                if left > 0:
                    time.sleep(left)        # a little late at worst; no busy wait on 2 cores

    def _publish(self, sim):
        msg = JointState(name=list(sim.model.joint_names), position=sim.q.tolist(),
                         velocity=sim.qd.tolist(), effort=sim.applied.tolist())
        sec, nsec = divmod(int(round(sim.t * 1e9)), 10**9)
        if self.clock_pub is not None:
            c = Clock()
            c.clock.sec, c.clock.nanosec = sec, nsec
            self.clock_pub.publish(c)
            msg.header.stamp = c.clock
        else:
            msg.header.stamp = self.get_clock().now().to_msg()
        self.js_pub.publish(msg)

    def destroy_node(self):
        self.running = False
        if getattr(self, 'thread', None) is not None:
            self.thread.join(timeout=2.0)
        super().destroy_node()


def main(args=None):
    return run_node(SimulatorNode, args, usage(
        'simulator_node', NODE_NAME, 'An articulated-body (ABA) simulation of a URDF arm: effort '
        'commands in, joint_states out.', PARAMETERS, INTERFACES))


if __name__ == '__main__':
    sys.exit(main())
