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
A soak: both nodes in closed loop for minutes on any arm, with faults injected in turn.

simulator_node simulates the arm (from its URDF file) and feedforward_node controls it in
computed torque, as ``robot-dynamics launch simulation`` starts them. Round after round, each
fault is injected and then a valid trajectory to a new target is sent: NaN and out-of-order
trajectories, a burst of 200 trajectories, a joint_states publisher of foreign joints and one of
NaN positions, the simulator paused, an invalid and a valid parameter change, a wrench on the
last link, malformed inverse-dynamics requests, a malformed description, and the description
republished with a comment.
Every assertion is counted and reported:

- every effort command finite and within the URDF's effort limits (the real arm's);
- back on target (each joint within ``--tolerance``) after each valid trajectory;
- each invalid input refused, with a message (the node's log, the service's or parameter's answer);
- both nodes alive all along; memory (RSS) growth from the end of the first round to the end;
- a clean exit at the end (SIGINT: status 0, no traceback).

    python bench/soak.py [--minutes 10] [--arm ur_description/urdf/ur10_robot.urdf]
        [--controller-param NAME:=VALUE ...]

``--controller-param`` passes parameters to the controller, e.g. a deliberately broken limit
(``effort_limits.shoulder_lift_joint:=1000.0``) to see the soak catch it. ``--lockstep`` runs
the simulator in lockstep (a step of the rate's period per command, simulated time; the
controller on it): the faults and their answers without the loop's timing, which a busy machine
disturbs (a controller starved to 20 ms between commands makes its PD gains chatter: that is
the real-time soak's to show). Exit status 1 when an assertion failed.
"""
import argparse
import collections
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchlib import call_service, local_ros, node_exe

MEMORY_GROWTH_MIB = 10.0        # allowed RSS growth of a node, end of round 1 to the end


def rss_mib(pid):
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024.0
    return float('nan')


class Soak:
    """The nodes, the test's rclpy side, and the tally of assertions."""

    def __init__(self, urdf, folder, controller_params, tolerance, seed, rate=1000.0,
                 lockstep=False):
        import rclpy
        from rcl_interfaces.srv import SetParameters
        from robot_dynamics_msgs.srv import ApplyWrench, InverseDynamics
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray, String
        from std_srvs.srv import SetBool
        from trajectory_msgs.msg import JointTrajectory

        from robot_dynamics_ros.dynamics import RobotModel
        self.rclpy, self.msgs = rclpy, dict(
            JointState=JointState, String=String, JointTrajectory=JointTrajectory,
            SetBool=SetBool, ApplyWrench=ApplyWrench, InverseDynamics=InverseDynamics,
            SetParameters=SetParameters)
        self.rng = random.Random(seed)
        self.tolerance = tolerance
        with open(urdf, encoding='utf-8') as f:
            self.urdf = f.read()
        self.model = RobotModel.from_urdf(self.urdf)
        self.joints = list(self.model.joint_names)
        self.limits = np.array(self.model.effort_limits)
        lo, hi = self.model.position_limits.T
        self.home = np.clip(np.zeros(self.model.n), lo, hi)
        self.lo, self.hi = lo, hi
        self.folder = folder
        self.logs = {n: os.path.join(folder, f'{n}.log') for n in ('simulator', 'controller')}
        # in lockstep the simulator steps 1 / rate per command and publishes /clock
        steps = ['-p', 'lockstep:=true', '-p', f'timestep:={1.0 / rate}'] if lockstep else []
        self.procs = {
            'simulator': self._start('simulator_node', [
                '-p', f'urdf_file:={urdf}', '-p', f'publish_rate:={float(rate)}', *steps],
                'simulator'),
            'controller': self._start('feedforward_node', [
                '-p', 'mode:=computed_torque', '-p', 'kp:=[400.0]', '-p', 'kd:=[40.0]',
                '-p', f'use_sim_time:={str(lockstep).lower()}',
                *sum((['-p', p] for p in controller_params), [])], 'controller'),
        }
        rclpy.init()
        self.node = rclpy.create_node('soak')
        # one executor that keeps the node and takes each stream's waiting messages at once, a
        # 2 ms pause between wake-ups: rclpy.spin_once(node) per message took 37 s of CPU in a
        # minute's soak, a third of what the two nodes took, on the machine they run on
        from robot_dynamics_ros.nodes.executors import DrainingExecutor
        self.executor = DrainingExecutor()
        self.executor.add_node(self.node)
        self.q = None
        self.stamp = self.first = 0.0   # the arm's time (s) of the latest and first states
        self.commands = self.republished = 0
        self.counts = collections.Counter()      # assertion -> checks
        self.failures = collections.defaultdict(list)
        self.node.create_subscription(JointState, 'joint_states', self._on_state, 10)
        self.node.create_subscription(Float64MultiArray, 'effort_controller/commands',
                                      self._on_command, 100)
        self.traj = self.node.create_publisher(JointTrajectory,
                                               'inverse_dynamics_controller/joint_trajectory', 10)
        self.js = self.node.create_publisher(JointState, 'joint_states', 10)
        from robot_dynamics_ros.nodes.description import DESCRIPTION_QOS
        self.desc = self.node.create_publisher(String, 'robot_description', DESCRIPTION_QOS)
        self.pause = self.node.create_client(SetBool, 'dynamics_simulator/pause')
        self.wrench = self.node.create_client(ApplyWrench, 'dynamics_simulator/apply_wrench')
        self.inverse = self.node.create_client(InverseDynamics,
                                               'inverse_dynamics_controller/inverse_dynamics')
        self.params = self.node.create_client(SetParameters,
                                              'inverse_dynamics_controller/set_parameters')

    def _start(self, exe, args, name):
        log = open(self.logs[name], 'w')
        return subprocess.Popen([node_exe(exe), '--ros-args', *args], stdout=log,
                                stderr=subprocess.STDOUT)

    # ---- what is watched all along -----------------------------------------------------------
    def _on_state(self, msg):
        # the arm's states only: the NaN ones this soak injects (stamped 0) taken for the arm's
        # made reach() start its wait at time 0 and judge at once (CI of 4ee877f, in lockstep:
        # 'after nan joint states: 0.2551 rad from the target', the trajectory just sent)
        if list(msg.name) == self.joints and all(map(math.isfinite, msg.position)):
            self.q = np.array(msg.position)
            self.stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
            self.first = self.first or self.stamp

    def _on_command(self, msg):
        tau = np.array(msg.data)
        self.commands += 1
        ok = tau.shape == self.limits.shape and bool(np.all(np.isfinite(tau))) and bool(
            np.all(np.abs(tau) <= self.limits * (1 + 1e-9)))
        self.check('commands finite and within the effort limits', ok,
                   lambda: f'{np.round(tau, 3).tolist()} (limits {self.limits.tolist()})')

    def check(self, what, ok, detail=lambda: ''):
        self.counts[what] += 1
        if not ok and len(self.failures[what]) < 5:
            self.failures[what].append(f'{time.strftime("%H:%M:%S")} {detail()}')
        elif not ok:
            self.failures[what].append('')

    def spin(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.005)
            time.sleep(0.002)
        for name, p in self.procs.items():
            self.check('nodes alive', p.poll() is None, lambda: f'{name} exited {p.returncode}')

    def log_grows(self, name, text, before, seconds=2.0):
        """Whether ``text`` appears in a node's log after offset ``before`` within ``seconds``."""
        end = time.monotonic() + seconds
        while True:
            with open(self.logs[name], errors='replace') as f:
                if text in f.read()[before:]:
                    return True
            if time.monotonic() > end:
                return False
            self.spin(0.05)

    def log_size(self, name):
        return os.path.getsize(self.logs[name])

    def call(self, client, request, timeout=5.0):
        return call_service(self.node, client, request, timeout)

    # ---- trajectories ------------------------------------------------------------------------
    def trajectory(self, points, names=None):
        from trajectory_msgs.msg import JointTrajectoryPoint
        msg = self.msgs['JointTrajectory'](joint_names=list(names or self.joints))
        for positions, t in points:
            p = JointTrajectoryPoint(positions=[float(x) for x in positions])
            p.time_from_start.sec, p.time_from_start.nanosec = int(t), int((t % 1) * 1e9)
            msg.points.append(p)
        return msg

    def target(self):
        span = np.minimum(0.4, (self.hi - self.lo) / 4)
        return np.clip(self.home + np.array([self.rng.uniform(-s, s) for s in span]),
                       self.lo + 0.05, self.hi - 0.05)

    def reach(self, why):
        """Send a valid trajectory to a new target; 3 s of the arm's time on it must be there."""
        goal = self.target()
        sent = self.stamp
        self.traj.publish(self.trajectory([(goal, 2.0)]))
        # the arm's time: the wall's in real time; in lockstep as fast as the loop goes (a
        # minute of wall time at most: a simulator that stopped fails the check below)
        end = time.monotonic() + 60.0
        while self.stamp < sent + 3.0 and time.monotonic() < end:
            self.spin(0.05)
        err = np.abs(self.q - goal).max() if self.q is not None else math.inf
        self.check('back on target after a valid trajectory', err < self.tolerance,
                   lambda: f'after {why}: {err:.4f} rad from the target')

    def refused(self, what, name, text, inject):
        before = self.log_size(name)
        inject()
        self.check('invalid inputs refused with a message', self.log_grows(name, text, before),
                   lambda: f'{what}: no "{text}" in the {name} log')

    # ---- the faults --------------------------------------------------------------------------
    def fault_nan_trajectory(self):
        goal = self.target()
        goal[0] = math.nan
        self.refused('a NaN trajectory', 'controller', 'rejected trajectory',
                     lambda: self.traj.publish(self.trajectory([(goal, 1.0)])))

    def fault_out_of_order_trajectory(self):
        a, b = self.target(), self.target()
        self.refused('an out-of-order trajectory', 'controller', 'rejected trajectory',
                     lambda: self.traj.publish(self.trajectory([(a, 1.5), (b, 0.5)])))

    def fault_burst(self):
        for _ in range(200):
            self.traj.publish(self.trajectory([(self.target(), 1.0)]))
        self.spin(0.5)

    def fault_foreign_joint_states(self):
        msg = self.msgs['JointState'](name=['not_a_joint', 'gripper_finger'], position=[0.1, 0.2])
        for _ in range(50):
            self.js.publish(msg)
            self.spin(0.01)
        self.spin(0.5)

    def fault_nan_joint_states(self):
        msg = self.msgs['JointState'](name=self.joints, position=[math.nan] * len(self.joints),
                                      velocity=[0.0] * len(self.joints))

        def inject():
            for _ in range(20):
                self.js.publish(msg)
                self.spin(0.01)
        self.refused('NaN joint_states', 'controller', 'rejected joint_states', inject)

    def fault_paused_simulator(self):
        answer = self.call(self.pause, self.msgs['SetBool'].Request(data=True))
        self.check('the simulator pauses and resumes', answer is not None and answer.success)
        self.spin(1.0)
        answer = self.call(self.pause, self.msgs['SetBool'].Request(data=False))
        self.check('the simulator pauses and resumes', answer is not None and answer.success)

    def set_param(self, name, value):
        from rclpy.parameter import Parameter
        answer = self.call(self.params, self.msgs['SetParameters'].Request(
            parameters=[Parameter(name, value=value).to_parameter_msg()]))
        return None if answer is None else answer.results[0]

    def fault_invalid_parameter(self):
        result = self.set_param('kp', [-5.0])
        self.check('invalid inputs refused with a message', result is not None and (
            not result.successful) and bool(result.reason), lambda: f'kp [-5.0]: {result}')

    def fault_valid_parameter(self):
        for kp in ([300.0], [400.0]):
            result = self.set_param('kp', kp)
            self.check('valid parameter changes taken', result is not None and result.successful,
                       lambda: f'kp {kp}: {result}')
            self.spin(0.3)

    def fault_wrench(self):
        from geometry_msgs.msg import Wrench
        link = self.model.link_names[-1]
        w = Wrench()
        w.force.z = -200.0          # enough to ask more than the shoulder of a UR5 has
        request = self.msgs['ApplyWrench'].Request(link=link, wrench=w, duration=0.5)
        answer = self.call(self.wrench, request)
        self.check('the simulator takes a wrench', answer is not None and answer.success)
        self.spin(0.7)

    def fault_malformed_service_request(self):
        request = self.msgs['InverseDynamics'].Request(name=self.joints[:1],
                                                       position=[0.0, 1.0, 2.0])
        answer = self.call(self.inverse, request)
        self.check('invalid inputs refused with a message', answer is not None and (
            not answer.success) and bool(answer.message), lambda: f'inverse_dynamics: {answer}')

    def fault_republished_description(self):
        # another comment each time: the very same text again is not even looked at
        self.republished += 1
        comment = f'<!-- republished {self.republished} --></robot>'
        self.refused('the description republished with a comment', 'controller',
                     'has the same dynamics as the model in use',
                     lambda: self.desc.publish(self.msgs['String'](
                         data=self.urdf.replace('</robot>', comment))))

    def fault_invalid_description(self):
        self.refused('a malformed description', 'controller', 'invalid robot_description',
                     lambda: self.desc.publish(self.msgs['String'](data='<robot name="x">')))

    FAULTS = ('nan_trajectory', 'out_of_order_trajectory', 'burst', 'foreign_joint_states',
              'nan_joint_states', 'paused_simulator', 'invalid_parameter', 'valid_parameter',
              'wrench', 'malformed_service_request', 'invalid_description',
              'republished_description')

    # ---- the run ----------------------------------------------------------------------------
    def run(self, minutes):
        start = time.monotonic()
        ready = time.monotonic() + 120
        while self.q is None or self.commands < 100:
            self.spin(0.1)
            if time.monotonic() > ready:
                raise SystemExit('soak: the loop did not start; logs in ' + self.folder)
        self.reach('start-up')
        rounds, faults, memory = 0, 0, None
        while True:
            for fault in self.FAULTS:
                getattr(self, f'fault_{fault}')()
                faults += 1
                self.reach(fault.replace('_', ' '))
            rounds += 1
            if memory is None:
                memory = {n: rss_mib(p.pid) for n, p in self.procs.items()}
            if time.monotonic() - start > minutes * 60:
                break
        growth = {n: rss_mib(p.pid) - memory[n] for n, p in self.procs.items()}
        for name, mib in growth.items():
            self.check(f'memory growth under {MEMORY_GROWTH_MIB} MiB', mib < MEMORY_GROWTH_MIB,
                       lambda: f'{name}: {mib:+.1f} MiB')
        return rounds, faults, growth, time.monotonic() - start

    def stop(self):
        self.executor.shutdown()
        self.node.destroy_node()
        self.rclpy.shutdown()
        for name, p in self.procs.items():
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for name, p in self.procs.items():
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            with open(self.logs[name], errors='replace') as f:
                text = f.read()
            self.check('clean exit at the end', p.returncode == 0 and 'Traceback' not in text,
                       lambda: f'{name}: status {p.returncode}')


def run(minutes, urdf, controller_params=(), tolerance=0.02, seed=1, say=print, rate=1000.0,
        lockstep=False):
    """
    Run the soak; return (summary lines, failed assertions {what: [details]}).

    ``rate``: Hz of the simulator's joint_states, hence of the controller's commands;
    ``lockstep``: the simulator steps 1 / rate per command (simulated time).
    """
    folder = tempfile.mkdtemp(prefix='soak_')
    soak = Soak(urdf, folder, controller_params, tolerance, seed, rate, lockstep)
    try:
        rounds, faults, growth, took = soak.run(minutes)
    finally:
        soak.stop()
    failed = {k: v for k, v in soak.failures.items() if v}
    stepping = ' in lockstep' if lockstep else ''
    lines = [f'soak of {os.path.basename(urdf)} on {os.environ.get("ROS_DISTRO", "?")}: '
             f'{took:.0f} s at {rate:g} Hz{stepping}, {rounds} rounds, {faults} faults '
             f'injected, {soak.commands} effort commands, {soak.stamp - soak.first:.0f} s of '
             f'the arm\'s time; memory growth '
             + ', '.join(f'{n} {m:+.1f} MiB' for n, m in growth.items())]
    for what, n in sorted(soak.counts.items()):
        bad = len(soak.failures.get(what, []))
        lines.append(f'  {what}: {n - bad} of {n} held' + (
            ' -- FAILED: ' + '; '.join(d for d in soak.failures[what][:5] if d) if bad else ''))
    if failed:
        lines.append(f'logs kept in {folder}')
    else:
        import shutil
        shutil.rmtree(folder, ignore_errors=True)
    return lines, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().split('\n\n')[0])
    ap.add_argument('--minutes', type=float, default=10.0)
    ap.add_argument('--arm', default='ur_description/urdf/ur10_robot.urdf',
                    help='example-robot-data path under robots/, or a URDF file')
    ap.add_argument('--controller-param', action='append', default=[], metavar='NAME:=VALUE')
    ap.add_argument('--tolerance', type=float, default=0.02,
                    help='rad (or m) from the target after each valid trajectory')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--rate', type=float, default=1000.0,
                    help='Hz of joint_states and commands (a UR driver: 500)')
    ap.add_argument('--lockstep', action='store_true',
                    help='the simulator in lockstep: a step of 1 / rate per command')
    args = ap.parse_args()
    urdf = local_ros(args.arm)
    lines, failed = run(args.minutes, urdf, args.controller_param, args.tolerance, args.seed,
                        rate=args.rate, lockstep=args.lockstep)
    print('[report] ' + '\n'.join(lines))
    print(f'[target] soak of {args.minutes:g} min: {len(failed)} assertions failed (target 0) '
          + ('met' if not failed else 'MISSED'))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
