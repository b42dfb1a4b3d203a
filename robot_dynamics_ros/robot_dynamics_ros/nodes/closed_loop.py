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
Drive simulator_node and feedforward_node in closed loop over DDS and record the motion.

``run()`` starts both nodes as processes (DDS on loopback, a private ROS_DOMAIN_ID unless one is
set), waits until the loop runs, sends a quintic rest-to-rest trajectory to the controller and
records desired and actual positions and the commanded torques. ``run_task()`` runs the
controller in a task mode instead and streams a square of target poses (with their twist) to
``~/target_pose``; ``run_press()`` presses a probe on a simulated table with force control and
slides it. ``closed-loop-demo`` (``tools/demo.py``) prints and plots what they return.
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np


def _env():
    env = dict(os.environ)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env.setdefault('ROS_DOMAIN_ID', str(random.randint(30, 99)))
    return env


def _exe(name):
    exe = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    if exe is None:
        raise SystemExit(f'closed-loop-demo: {name} is not installed')
    return exe


def _ros_list(values):
    return '[' + ', '.join(repr(float(v)) for v in values) + ']'


class _Loop:
    """simulator_node and feedforward_node as processes with their logs, and this one's node."""

    def __init__(self, urdf_path, q_start, sim_params, ctrl_params, log_dir=None):
        import rclpy
        self.log_dir = log_dir or tempfile.mkdtemp(prefix='closed-loop-demo-')
        self.logs = [open(os.path.join(self.log_dir, f'{n}.log'), 'w')
                     for n in ('simulator', 'controller')]
        sim = dict(urdf_file=urdf_path, initial_positions=_ros_list(q_start),
                   publish_rate=1000.0, **sim_params)
        self.sim_params = sim
        self.procs = [
            subprocess.Popen(
                [_exe(exe), '--ros-args', *[a for k, v in params.items()
                                            for a in ('-p', f'{k}:={v}')]],
                stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
            for exe, params, log in (('simulator_node', sim, self.logs[0]),
                                     ('feedforward_node', ctrl_params, self.logs[1]))]
        from .executors import DrainingExecutor
        rclpy.init()
        self.rclpy, self.node = rclpy, rclpy.create_node('closed_loop_demo')
        # one executor that keeps the node and takes each stream's messages in one go: rclpy's
        # spin_once(node) took one message a topic per wake-up, adding and removing the node
        # every call, and the demo spent about as much CPU as the two nodes it drives
        self.executor = DrainingExecutor()
        self.executor.add_node(self.node)

    def spin_for(self, seconds, until=None, period=0.01):
        """Spin for ``seconds``, or until ``until()``; return whether it came (True without)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=period)
            if until is not None and until():
                return True
        return until is None

    def reset_simulator(self):
        """Put the simulated arm back at its start, at rest (the simulator's ~/reset)."""
        from std_srvs.srv import Trigger
        reset = self.node.create_client(Trigger, '/dynamics_simulator/reset')
        if not reset.wait_for_service(timeout_sec=10.0):
            raise RuntimeError('simulator_node has no reset service; logs in ' + self.log_dir)
        future = reset.call_async(Trigger.Request())
        self.spin_for(10.0, future.done)

    def stream(self, duration, send, now, *, paced=False, interval=0.01, timeout=60.0,
               stall=None):
        """
        Call ``send(t)`` every ``interval`` s of ``now()`` for ``duration`` s; return the start.

        ``t`` counts from the start. ``paced`` (the simulator in lockstep, ``now`` its /clock):
        the simulator is paused and granted ``interval`` s of steps after each send (its
        ``~/step``), so each send is for the very simulated time it acts from, whatever this
        process's lag. Free-running, a stream starved beside a busy core fell behind the
        simulation: the controller carried a target on past a corner of the square (26.6 mm off,
        fresh-clone CI with the other distribution's tests beside it). ``stall`` (at, seconds):
        this process stops for ``seconds`` of wall time after the send for ``at``, as a busy
        core stalls it (tests).
        """
        steps = 0
        if paced:
            from robot_dynamics_msgs.srv import Step
            from .simulator_declarations import PARAMETERS
            dt = float(self.sim_params.get('timestep', PARAMETERS['timestep'][1]))
            steps = max(1, int(round(interval / dt)))
            interval = steps * dt
            t0, stepper = self._pause()
        else:
            t0 = now()
        next_send, granted = t0, None
        deadline = time.monotonic() + timeout + 10 * duration
        while now() - t0 < duration - 1e-9:
            if time.monotonic() > deadline:
                raise RuntimeError(f'the run took over {timeout:g} s; logs in {self.log_dir}')
            if granted is not None and granted.done() and not granted.result().success:
                raise RuntimeError(f'the simulator stepped no further: '
                                   f'{granted.result().message}; logs in {self.log_dir}')
            t = now()
            if t >= next_send - 1e-9:
                send(next_send - t0 if paced else t - t0)
                if stall is not None and next_send - t0 >= stall[0] - 1e-9:
                    time.sleep(stall[1])
                    stall = None
                next_send += interval
                if paced:
                    granted = stepper.call_async(Step.Request(steps=steps))
            self.spin_for(0.001, period=0.001)
        return t0

    def _pause(self):
        """Pause the lockstep simulator; return its simulated time and a ~/step client."""
        from robot_dynamics_msgs.srv import Step
        from std_srvs.srv import SetBool
        pause = self.node.create_client(SetBool, '/dynamics_simulator/pause')
        stepper = self.node.create_client(Step, '/dynamics_simulator/step')
        for client, request in ((pause, SetBool.Request(data=True)),
                                (stepper, Step.Request(steps=0))):
            if not client.wait_for_service(timeout_sec=10.0):
                raise RuntimeError(f'simulator_node has no {client.srv_name}; logs in '
                                   f'{self.log_dir}')
            future = client.call_async(request)
            if not self.spin_for(10.0, future.done) or not future.result().success:
                raise RuntimeError(f'{client.srv_name} failed; logs in {self.log_dir}')
        return future.result().time, stepper

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        self.rclpy.shutdown()
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        for f in self.logs:
            f.close()


def square(start, side, period, t):
    """
    Return (position, velocity) at time t on a square with one corner at ``start``.

    In the root's x-y plane: start -> +x -> +x +y -> +y -> start, each side in period / 4 at
    constant speed; after ``period`` it stays at the start.
    """
    corners = np.array([[0.0, 0.0], [side, 0.0], [side, side], [0.0, side], [0.0, 0.0]])
    leg = period / 4.0
    p = np.array(start, dtype=float).copy()
    if not 0.0 <= t < period:
        return p, np.zeros(3)
    k = int(t // leg)
    a, b = corners[k], corners[k + 1]
    p[:2] += a + (b - a) * (t - k * leg) / leg
    v = (b - a) / leg
    return p, np.array([v[0], v[1], 0.0])


def run_task(urdf_path, q_start, *, mode='cartesian_impedance', frame='', side=0.1, period=8.0,
             laps=1, stiffness=(1000.0, 1000.0, 1000.0, 50.0, 50.0, 50.0), armature=0.1,
             friction_compensation=1.0, lockstep=False, log_dir=None, timeout=60.0, stall=None):
    """
    Run the controller in a task mode and move its frame round a square; return the record.

    The square (``square``) lies in the root's x-y plane, one corner at the frame's start
    position, with the start orientation held; the nullspace holds the start posture. Targets
    (pose and twist) stream at 100 Hz, ``laps`` times round. Records ~/current_pose, the target
    and ~/external_wrench.

    In real time the loop's delay is whatever the machine gives: operational_space at 1000 N/m
    (a critically damped 31.6 rad/s on every axis) loses its phase margin at a sustained 20 ms.
    With ``lockstep`` the simulator steps once per answer, on simulated time (/clock), which the
    targets and the record follow, paused between two targets (``_Loop.stream``): the same run
    whatever the load, to within the steps a target may take to reach the controller.
    """
    os.environ.update(_env())
    from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped
    from rosgraph_msgs.msg import Clock

    from ..dynamics import RobotModel
    from .executors import seconds

    model = RobotModel.from_urdf_file(urdf_path)
    q_start = np.asarray(q_start, float)
    ctrl_params = {'mode': mode, 'armature': f'[{float(armature)}]',
                   'task.stiffness': _ros_list(stiffness),
                   'friction_compensation': float(friction_compensation)}
    if frame:
        ctrl_params['task.frame'] = frame
    sim_params = {'armature': f'[{float(armature)}]'}
    if lockstep:
        sim_params['lockstep'] = 'true'
        ctrl_params['use_sim_time'] = 'true'
    loop = _Loop(urdf_path, q_start, sim_params, ctrl_params, log_dir)
    node, log_dir, spin_for = loop.node, loop.log_dir, loop.spin_for
    poses, wrenches = [], []        # (time, [x y z], R) and (time, [f; t])
    sim_time = [0.0]

    def now():
        """Return the time targets and records follow: simulated in lockstep, else wall time."""
        return sim_time[0] if lockstep else time.monotonic()

    def when(m):
        """Return when message ``m`` was: its stamp in lockstep, else its receipt."""
        return seconds(m.header.stamp) if lockstep else time.monotonic()

    def on_pose(m):
        p, o = m.pose.position, m.pose.orientation
        poses.append((when(m), np.array([p.x, p.y, p.z]), np.array([o.x, o.y, o.z, o.w])))

    def on_wrench(m):
        f, t = m.wrench.force, m.wrench.torque
        wrenches.append((when(m), np.array([f.x, f.y, f.z, t.x, t.y, t.z])))
    if lockstep:
        node.create_subscription(Clock, '/clock',
                                 lambda m: sim_time.__setitem__(0, seconds(m.clock)), 10)
    ctrl = '/inverse_dynamics_controller'
    node.create_subscription(PoseStamped, f'{ctrl}/current_pose', on_pose, 100)
    node.create_subscription(WrenchStamped, f'{ctrl}/external_wrench', on_wrench, 100)
    pose_pub = node.create_publisher(PoseStamped, f'{ctrl}/target_pose', 10)
    twist_pub = node.create_publisher(TwistStamped, f'{ctrl}/target_twist', 10)
    targets = []                    # (time, position)

    try:
        if not spin_for(timeout, lambda: len(poses) > 200 and pose_pub.get_subscription_count()
                        and (sim_time[0] > 0.0 or not lockstep)):
            raise RuntimeError('the loop did not start (no ~/current_pose from the controller); '
                               'logs in ' + log_dir)
        # The arm fell while the controller was still loading (its zero commands released the
        # brakes), and the task target is where the mode became active. Put the arm back at the
        # start, at rest, and the target at its frame's pose there.
        from ..control import default_joints, default_task_frame
        from ..dynamics import frame_placement
        from ..dynamics.frames import quaternion
        cmd = [model.index(j) for j in default_joints(model)[0]]
        T = frame_placement(model, q_start, frame or default_task_frame(model, cmd))
        hold = PoseStamped()
        hold.pose.position.x, hold.pose.position.y, hold.pose.position.z = map(float, T[:3, 3])
        o = hold.pose.orientation
        o.x, o.y, o.z, o.w = map(float, quaternion(T))
        pose_pub.publish(hold)
        if not lockstep:            # in lockstep nothing moved before the controller answered
            loop.reset_simulator()
        settled = now() + 1.5
        if not spin_for(timeout, lambda: now() >= settled):
            raise RuntimeError('the simulated time stopped; logs in ' + log_dir)
        center, quat = poses[-1][1].copy(), poses[-1][2].copy()
        n0 = len(poses)
        target, twist = PoseStamped(), TwistStamped()
        o = target.pose.orientation
        o.x, o.y, o.z, o.w = map(float, quat)

        def send(t):
            # round ``laps`` times, then held at the start for a second
            p, v = square(center, side, period, t % period if t < laps * period else -1.0)
            pt = target.pose.position
            pt.x, pt.y, pt.z = map(float, p)
            twist.twist.linear.x, twist.twist.linear.y, twist.twist.linear.z = map(float, v)
            twist_pub.publish(twist)
            pose_pub.publish(target)
            targets.append((t, p))
        t0 = loop.stream(laps * period + 1.0, send, now, paced=lockstep, timeout=timeout,
                         stall=stall)
    finally:
        loop.close()
    rec = [r for r in poses[n0:] if r[0] >= t0]
    if len(rec) < 100:
        raise RuntimeError(f'too few poses recorded ({len(rec)}); logs in {log_dir}')
    t = np.array([r[0] - t0 for r in rec])
    x = np.stack([r[1] for r in rec])
    tt = np.array([r[0] for r in targets])
    xd = np.stack([np.interp(t, tt, [r[1][k] for r in targets]) for k in range(3)], axis=1)
    # the rotation error to the start orientation (the target's), rad
    q0 = quat / np.linalg.norm(quat)
    rot = np.array([2 * np.arccos(min(1.0, abs(float(np.dot(r[2], q0))))) for r in rec])
    wt = np.array([w[0] - t0 for w in wrenches if w[0] >= t0])
    W = np.array([w[1] for w in wrenches if w[0] >= t0]).reshape(-1, 6)
    err = np.linalg.norm(x - xd, axis=1)
    return dict(model=model, t=t, x=x, x_d=xd, err=err, rot=rot, wrench_t=wt, wrench=W,
                side=side, period=period, mode=mode, log_dir=log_dir,
                rms=float(np.sqrt(np.mean(err ** 2))), max=float(err.max()),
                rot_max=float(rot.max()))


PROBE = """<joint name="probe_joint" type="fixed"><parent link="{flange}"/><child link="probe"/>
<origin xyz="{x} {y} {z}"/></joint><link name="probe"><inertial><mass value="0.2"/>
<inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
<collision><geometry><sphere radius="0.02"/></geometry></collision></link></robot>"""


def press_setup(xml, q_start, flange, offset, mesh_paths, directory, drop=0.02):
    """
    Write the arm with a probe on ``flange`` and a table under it; return (urdf, world, model).

    The probe: a 0.2 kg link with a 2 cm sphere at ``offset`` (m, in the flange's frame) on a
    fixed joint ``probe_joint`` (where the simulated force/torque sensor sits). The table: a
    0.5 m box whose top is ``drop`` under the probe at ``q_start``, reaching 0.35 m along +x.
    """
    from ..dynamics import RobotModel
    from ..dynamics.energy import body_poses
    from ..simulation.geometry import arm_geometry
    x, y, z = offset
    xml = xml.replace('</robot>', PROBE.format(flange=flange, x=x, y=y, z=z))
    model = RobotModel.from_urdf(xml)
    geometry = arm_geometry(model, xml, mesh_paths)
    poses = body_poses(model, np.asarray(q_start, float))
    probe = geometry.links.index('probe')
    (b, c, r), = [(b, c, r) for b, c, r, k in zip(geometry.body, geometry.points, geometry.radius,
                                                  geometry.link) if k == probe]
    low = poses[b][0] @ c + poses[b][1] - [0.0, 0.0, r]
    urdf = os.path.join(directory, 'arm_with_probe.urdf')
    with open(urdf, 'w', encoding='utf-8') as f:
        f.write(xml)
    world = os.path.join(directory, 'table.yaml')
    with open(world, 'w', encoding='utf-8') as f:
        f.write('# closed-loop-demo --press: a table under the probe\n'
                f'shapes: [{{name: table, type: box, size: [0.5, 0.5, 0.1], '
                f'xyz: [{low[0] + 0.1}, {low[1]}, {low[2] - drop - 0.05}]}}]\n')
    return urdf, world, model


def run_press(urdf_path, q_start, *, flange, offset=(0.0, 0.0, 0.06), mesh_paths=(),
              force=10.0, distance=0.2, speed=0.05, source='sensor', armature=0.1,
              friction_compensation=1.0, log_dir=None, timeout=120.0, stall=None):
    """
    Press a probe on a table with ``force`` N, slide it ``distance`` m along x; return a record.

    In lockstep, paced (``_Loop.stream``): the same run whatever the load. The arm gets a probe on
    ``flange`` (``press_setup``), the simulator a table 2 cm under it and a force/torque sensor
    at the probe's joint; the controller runs cartesian_impedance on the probe with root z
    force-controlled from ``source`` (sensor or observer). At rest the sensor is zeroed, then
    ~/target_wrench asks ``force`` N down; after 2 s the target pose slides along x at
    ``speed`` (reached and left in 0.5 s), then rests. Records the table's force (~/contacts),
    the observer's external wrench (~/external_wrench) and the probe's position against
    simulated time.
    """
    os.environ.update(_env())
    from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped
    from robot_dynamics_msgs.msg import Contacts
    from rosgraph_msgs.msg import Clock
    from std_srvs.srv import Trigger

    from .executors import seconds

    log_dir = log_dir or tempfile.mkdtemp(prefix='closed-loop-demo-')
    with open(urdf_path, encoding='utf-8') as f:
        xml = f.read()
    urdf, world, model = press_setup(xml, q_start, flange, offset, list(mesh_paths), log_dir)
    arm = f'[{float(armature)}]'
    sim_params = {'armature': arm, 'lockstep': 'true', 'world_file': world,
                  'ft_sensor.joint': 'probe_joint'}
    if mesh_paths:
        sim_params['mesh_package_paths'] = '[' + ', '.join(mesh_paths) + ']'
    ctrl_params = {'mode': 'cartesian_impedance', 'armature': arm, 'task.frame': 'probe',
                   'task.force_axes': '[0, 0, 1, 0, 0, 0]', 'force.source': source,
                   'friction_compensation': float(friction_compensation),
                   'use_sim_time': 'true'}
    loop = _Loop(urdf, q_start, sim_params, ctrl_params, log_dir)
    node, spin_for = loop.node, loop.spin_for
    sim_time, contacts, readings, poses = [0.0], [], [], []
    node.create_subscription(Clock, '/clock',
                             lambda m: sim_time.__setitem__(0, seconds(m.clock)), 10)

    def on_contacts(m):
        contacts.append((seconds(m.header.stamp), sum(
            f.z for f, shape in zip(m.force, m.shape) if shape == 'table')))

    def on_estimate(m):
        w = m.wrench
        readings.append((seconds(m.header.stamp), [w.force.x, w.force.y, w.force.z]))

    def on_pose(m):
        p = m.pose.position
        poses.append((seconds(m.header.stamp), [p.x, p.y, p.z]))
    ctrl = '/inverse_dynamics_controller'
    node.create_subscription(Contacts, '/dynamics_simulator/contacts', on_contacts, 100)
    node.create_subscription(WrenchStamped, f'{ctrl}/external_wrench', on_estimate, 100)
    node.create_subscription(PoseStamped, f'{ctrl}/current_pose', on_pose, 100)
    wrench_pub = node.create_publisher(WrenchStamped, f'{ctrl}/target_wrench', 10)
    twist_pub = node.create_publisher(TwistStamped, f'{ctrl}/target_twist', 10)
    pose_pub = node.create_publisher(PoseStamped, f'{ctrl}/target_pose', 10)
    zero = node.create_client(Trigger, f'{ctrl}/zero_ft_sensor')
    try:
        if not spin_for(timeout, lambda: len(poses) > 200 and sim_time[0] > 0.5
                        and wrench_pub.get_subscription_count()):
            raise RuntimeError('the loop did not start (no ~/current_pose from the controller); '
                               'logs in ' + log_dir)
        if not zero.wait_for_service(timeout_sec=10.0):
            raise RuntimeError('feedforward_node has no ~/zero_ft_sensor; logs in ' + log_dir)
        future = zero.call_async(Trigger.Request())
        spin_for(10.0, future.done)
        zeroed = future.result().message if future.done() else 'no answer'
        target = WrenchStamped()
        target.wrench.force.z = -float(force)
        cruise = (distance - speed * 0.5) / speed
        total = 2.0 + 1.0 + cruise + 2.0
        twist, pose = TwistStamped(), PoseStamped()
        from ..dynamics import frame_placement
        from ..dynamics.frames import quaternion
        T = frame_placement(model, np.asarray(q_start, float), 'probe')
        o = pose.pose.orientation
        o.x, o.y, o.z, o.w = map(float, quaternion(T))
        x0 = poses[-1][1]

        def moved(s):
            """Return the target's travel s seconds into the slide: 0.5 s ramps, cruise (m)."""
            up = min(max(s, 0.0), 0.5)
            x = speed * up * up
            x += speed * min(max(s - 0.5, 0.0), cruise)
            down = min(max(s - 0.5 - cruise, 0.0), 0.5)
            return x + speed * (down - down * down)

        def send(t):
            wrench_pub.publish(target)
            s = t - 2.0                     # the slide starts 2 s after the press
            v = speed * min(1.0, max(0.0, s / 0.5), max(0.0, (1.0 + cruise - s) / 0.5))
            if s >= 0.0:
                twist.twist.linear.x = float(v)
                p = pose.pose.position
                p.x, p.y, p.z = x0[0] + moved(s), x0[1], x0[2]
                # the time it is for (the paused simulation's): the controller carries it on
                # from then, not from when it arrives
                stamp = pose.header.stamp
                stamp.sec = int(sim_time[0])
                stamp.nanosec = min(int((sim_time[0] - stamp.sec) * 1e9), 999999999)
                pose_pub.publish(pose)
                twist_pub.publish(twist)
        t0 = loop.stream(total, send, lambda: sim_time[0], paced=True, timeout=timeout,
                         stall=stall)
    finally:
        loop.close()
    c = np.array([r for r in contacts if r[0] >= t0]).reshape(-1, 2)
    p = np.array([[r[0]] + r[1] for r in poses if r[0] >= t0]).reshape(-1, 4)
    w = np.array([[r[0]] + r[1] for r in readings if r[0] >= t0]).reshape(-1, 4)
    if len(c) < 100:
        raise RuntimeError(f'too few contact records ({len(c)}); logs in {log_dir}')
    c[:, 0] -= t0
    p[:, 0] -= t0
    w[:, 0] -= t0
    sliding = (c[:, 0] >= 2.0) & (c[:, 0] <= 3.0 + cruise)
    settled = (c[:, 0] >= 1.0) & (c[:, 0] < 2.0)
    return dict(model=model, force=force, source=source, speed=speed, distance=distance,
                t=c[:, 0], table=c[:, 1], pose_t=p[:, 0], pose=p[:, 1:], estimate_t=w[:, 0],
                estimate=w[:, 1:], zeroed=zeroed, log_dir=log_dir,
                steady=float(c[settled, 1].mean()) if settled.any() else float('nan'),
                slide=(float(c[sliding, 1].min()), float(c[sliding, 1].max()))
                if sliding.any() else (float('nan'), float('nan')))


def run(urdf_path, q_start, q_goal, duration, *, mode='computed_torque', kp=400.0, kd=40.0,
        integrator='semi_implicit_euler', friction_compensation=0.0, settle=1.0, log_dir=None,
        timeout=60.0):
    """
    Run the closed loop; returns a dict with the recorded arrays and the summary numbers.

    ``halted`` in the result is the simulator's reason when it halted (its /diagnostics ERROR),
    else None.
    """
    os.environ.update(_env())
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from ..dynamics import RobotModel
    from ..control.trajectory import quintic

    model = RobotModel.from_urdf_file(urdf_path)
    q_start, q_goal = np.asarray(q_start, float), np.asarray(q_goal, float)
    loop = _Loop(urdf_path, q_start, {'integrator': integrator}, {
        'mode': mode, 'kp': f'[{float(kp)}]', 'kd': f'[{float(kd)}]',
        'friction_compensation': float(friction_compensation)}, log_dir)
    node, log_dir, spin_for = loop.node, loop.log_dir, loop.spin_for
    states = {}            # stamp (ns) -> q
    answers = []           # (wall time, stamp, q_d, tau)
    node.create_subscription(
        JointState, 'joint_states',
        lambda m: states.__setitem__(m.header.stamp.sec * 10**9 + m.header.stamp.nanosec,
                                     np.array(m.position)), 100)
    node.create_subscription(
        JointState, '/inverse_dynamics_controller/torques',
        lambda m: answers.append((time.monotonic(), m.header.stamp.sec * 10**9
                                  + m.header.stamp.nanosec, np.array(m.position),
                                  np.array(m.effort))), 100)
    halted = []
    node.create_subscription(
        DiagnosticArray, '/diagnostics',
        lambda m: halted.extend(s.message for s in m.status if s.level == DiagnosticStatus.ERROR
                                and 'dynamics_simulator' in s.name), 10)
    traj_pub = node.create_publisher(
        JointTrajectory, '/inverse_dynamics_controller/joint_trajectory', 10)

    try:
        ok = spin_for(timeout, lambda: len(answers) > 200 and traj_pub.get_subscription_count())
        if not ok:
            raise RuntimeError('the loop did not start (no commands from the controller); logs in '
                               + log_dir)
        # The arm fell while the controller was still loading. Make the controller hold the start
        # (a one-point trajectory at time 0), then put the arm back there at rest: from then on
        # desired and actual agree, and the motion starts smoothly.
        hold = JointTrajectory(joint_names=list(model.joint_names),
                               points=[JointTrajectoryPoint(positions=q_start.tolist())])
        traj_pub.publish(hold)
        spin_for(0.3)
        loop.reset_simulator()
        spin_for(settle)
        # the trajectory: the quintic sampled every 50 ms with positions, velocities, accelerations
        t_pts = np.linspace(0.0, duration, int(round(duration / 0.05)) + 1)[1:]
        Q, QD, QDD = quintic(q_start, q_goal, duration, t_pts)
        msg = JointTrajectory(joint_names=list(model.joint_names))
        for t, q, qd, qdd in zip(t_pts, Q, QD, QDD):
            p = JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist(),
                                     accelerations=qdd.tolist())
            p.time_from_start.sec, p.time_from_start.nanosec = int(t), int(round(t % 1 * 1e9))
            msg.points.append(p)
        n0 = len(answers)
        t_sent = time.monotonic()
        traj_pub.publish(msg)
        spin_for(duration + 1.0)
    finally:
        loop.close()

    rec = [(w - t_sent, states[s], qd_, tau) for w, s, qd_, tau in answers[n0:]
           if s in states and len(qd_) == model.n]
    if halted and len(rec) < 2:
        raise RuntimeError(f'the simulation halted: {halted[0]}; logs in {log_dir}')
    if len(rec) < 100 and not halted:
        raise RuntimeError(f'too few answered states recorded ({len(rec)}); logs in {log_dir}')
    t = np.array([r[0] for r in rec])
    q = np.stack([r[1] for r in rec])
    q_d = np.stack([r[2] for r in rec])
    tau = np.stack([r[3] for r in rec])
    err = q_d - q
    return dict(model=model, t=t, q=q, q_d=q_d, tau=tau, err=err,
                rms=np.sqrt(np.mean(err**2, axis=0)), max=np.abs(err).max(axis=0),
                peak=np.abs(tau).max(axis=0), duration=duration, q_start=q_start, q_goal=q_goal,
                log_dir=log_dir, mode=mode, friction_compensation=friction_compensation,
                halted=halted[0] if halted else None)
