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
Speed of the ABA simulator: free-running steps per second, and real time in ROS at 1 kHz.

    bash scripts/dev.sh run python bench/bench_simulator.py [--seconds 10]

1. Free-running (no ROS), panda (9 joints), dt = 1 ms, zero torque, position limits off (no
   contact): steps per second and the real-time factor they allow, with each integrator, for
   ``Simulator.run`` (the steps in one compiled loop: the free-running figure) and for
   ``Simulator.step`` called per step (a Python controller in the loop); then with the limits
   and friction active (Coulomb 0.5 N m, damping 0.5 on every joint, from the start pose).
   Targets (run): >= 300x real time with limits and friction, >= 50x with rk4. Then, with
   ``step`` and the limits active: panda dropped from its start pose (zero clamped into its
   limits) with zero torque for 5 s, onto its stops (impacts, joints resting on a stop), and
   z1, whose URDF adds friction and damping on every joint (stiction, sticking joints solved
   with the stops).
2. simulator_node on panda at timestep 1 ms, publish_rate 1000 Hz, real_time_factor 1,
   publish_clock true, damping 2 N m s/rad, hold_until_command false (no controller: the arm
   falls), for --seconds: joint_states received per wall second and simulated time over wall
   time (the real-time factor achieved). Target: sustains 1 kHz.
DDS stays on this machine (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST).
"""
import argparse
import os
import random
import subprocess
import sys
import time

os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(30, 99)))

import numpy as np  # noqa: E402

from robot_dynamics_ros.dynamics import RobotModel  # noqa: E402
from robot_dynamics_ros.simulation import Simulator  # noqa: E402

from benchlib import PANDA, erd_urdf  # noqa: E402


def rates(make, steps):
    """
    Time ``steps`` zero-torque steps: best steps/s of 3 for one ``run``, for ``step`` looped.

    Each run on a new simulator from ``make()``.
    """
    best = {'run': 0.0, 'step': 0.0}
    for _ in range(3):
        for how in best:
            sim = make()
            tau = np.zeros(sim.model.n)
            t = time.perf_counter()
            if how == 'run':
                sim.run(tau, steps)
            else:
                for _ in range(steps):
                    sim.step(tau)
            best[how] = max(best[how], steps / (time.perf_counter() - t))
    return best['run'], best['step']


def free_running(integrator, steps):
    """Panda, limits off, no friction: (steps/s with ``run``, with ``step``)."""
    model = RobotModel.from_urdf_file(PANDA)
    return rates(lambda: Simulator(model, dt=1e-3, integrator=integrator,
                                   q0=np.full(model.n, 0.1), max_velocity=1e9,
                                   position_limits=False), steps)


def with_limits_and_friction(steps):
    """
    Panda free-running with its joint limits and friction active: steps per second.

    From the start pose (zero clamped into the limits, + 0.01 rad), zero torque, Coulomb
    friction 0.5 N m and damping 0.5 N m s/rad on every joint: the arm falls through its range
    onto its stops, with stiction where it comes to rest. Best of 3 runs of ``steps``: (steps/s
    with ``run``, with ``step``).
    """
    from robot_dynamics_ros.simulation import initial_pose
    model = RobotModel.from_urdf_file(PANDA)
    q0, _ = initial_pose(model, model.joint_names)
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    q0 = np.clip(q0 + 0.01, lo, hi)
    return rates(lambda: Simulator(model, dt=1e-3, q0=q0, damping=[0.5] * model.n,
                                   friction=[0.5] * model.n), steps)


def dropped(urdf, seconds=5.0):
    """Time a zero-torque drop from the start pose: steps per second, and what the stops did."""
    from robot_dynamics_ros.simulation import initial_pose
    model = RobotModel.from_urdf_file(urdf)
    q0, _ = initial_pose(model, model.joint_names)
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    sim = Simulator(model, dt=1e-3, q0=np.clip(q0 + 0.01, lo, hi))
    tau = np.zeros(model.n)
    steps = int(seconds / 1e-3)
    impacts = resting = 0
    t = time.perf_counter()
    for _ in range(steps):
        sim.step(tau)
        impacts += bool(np.any(sim.impulse))
        resting += bool(np.any(sim.stop_torque))
    return steps / (time.perf_counter() - t), impacts, resting


def in_ros(seconds):
    import rclpy
    from sensor_msgs.msg import JointState
    proc = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), 'simulator_node'),
                             '--ros-args', '-p', f'urdf_file:={PANDA}', '-p', 'timestep:=0.001',
                             '-p', 'publish_rate:=1000.0', '-p', 'publish_clock:=true',
                             '-p', 'real_time_factor:=1.0', '-p', 'hold_until_command:=false',
                             # no controller here: damping keeps the falling arm from whipping
                             # its wrist past the divergence guard
                             '-p', 'damping:=[2.0]'],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    rclpy.init()
    node = rclpy.create_node('sim_bench')
    got = []
    node.create_subscription(JointState, 'joint_states',
                             lambda m: got.append((time.perf_counter(), m.header.stamp.sec
                                                   + m.header.stamp.nanosec * 1e-9)), 1000)
    try:
        end = time.monotonic() + 30
        while len(got) < 500 and time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.01)
        n0 = len(got)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.01)
        data = got[n0:]
    finally:
        node.destroy_node()
        rclpy.shutdown()
        proc.terminate()
        proc.wait(timeout=10)
    (w0, s0), (w1, s1) = data[0], data[-1]
    gaps = np.diff([w for w, _ in data]) * 1e3
    return len(data) / (w1 - w0), (s1 - s0) / (w1 - w0), np.percentile(gaps, 99), gaps.max()


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument('--seconds', type=float, default=10.0)
    ap.add_argument('--steps', type=int, default=5000)
    args = ap.parse_args()
    print(f'free-running, panda, dt = 1 ms, {args.steps} steps: Simulator.run (the steps in one '
          f'compiled loop) and Simulator.step called from Python per step (what a controller in '
          f'the loop, or simulator_node, does)')
    for integrator in ('semi_implicit_euler', 'rk4'):
        rate, stepped = free_running(integrator, args.steps)
        print(f'  {integrator:<20} run {rate / 1000:6.1f}x real time, step {stepped / 1000:6.1f}x '
              f'(limits off, no friction)')
        if integrator == 'rk4':
            print(f'[target] simulator, panda free-running with rk4 (run): {rate / 1000:.1f}x '
                  f'real time (target >= 50x) ' + ('met' if rate >= 50e3 else 'MISSED'))
    rate, stepped = with_limits_and_friction(args.steps)
    print(f'  semi_implicit_euler with joint limits and friction: step {stepped / 1000:6.1f}x '
          f'real time')
    print(f'[target] simulator, panda free-running with joint limits and friction active '
          f'(semi_implicit_euler, run): {rate / 1000:.1f}x real time (target >= 300x) '
          + ('met' if rate >= 300e3 else 'MISSED'))
    z1 = erd_urdf('z1_description/urdf/z1.urdf')
    for name, urdf in (('panda', PANDA), ('z1', z1)):
        rate, impacts, resting = dropped(urdf)
        print(f'  {name} dropped onto its stops (semi_implicit_euler, 5 s): {rate:9.0f} steps/s '
              f'= {rate / 1000:6.1f}x real time; {impacts} steps with impacts, {resting} with a '
              f'joint resting on a stop')
    hz, rtf, p99, worst = in_ros(args.seconds)
    print(f'simulator_node, panda, 1 kHz, {args.seconds:.0f} s: {hz:.0f} joint_states/s received, '
          f'real-time factor {rtf:.3f}; gap between messages p99 {p99:.2f} ms, max {worst:.2f} ms')


if __name__ == '__main__':
    main()
