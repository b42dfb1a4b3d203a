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
Phantom external torques: what ``~/external_torques`` reads in free motion with an exact model.

simulator_node and feedforward_node (computed torque) run the same URDF, so every torque the
observer reports is an error. The arm goes back and forth fast (every commanded joint +-0.4 rad
about its start in 1 s, three times; a joint with a shorter range a quarter of it) at
joint_states rates of 250, 500 and 1000 Hz, in real time and in lockstep. Per run and joint: the
largest commanded torque, and the p99 and max of |external torque| over the motion as a share of
it; the worst joint is printed with its name. In real time also how fast the stamps ran against
the simulated time (1: alike) and how far apart they came.

    python bench/bench_observer.py [--arms ur5 panda] [--rates 250 500 1000]
        [--modes realtime lockstep]

Targets (issue 33): p99 <= 1 % and max <= 2 % of each joint's peak commanded torque.
"""
import argparse
import os
import subprocess
import tempfile
import time

import numpy as np

from benchlib import PANDA_URDF, erd_urdf, interrupt, local_ros, node_exe

ARMS = {'ur5': ('ur_description/urdf/ur5_robot.urdf', [0.0, -1.2, 1.0, -1.4, -1.57, 0.0]),
        'panda': (PANDA_URDF, [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02])}
SWING, HALF, LAPS = 0.4, 1.0, 3           # rad, s a swing, back and forth laps


def seconds(stamp):
    return stamp.sec + 1e-9 * stamp.nanosec


def one_run(arm, rate, mode, folder):
    """Start the pair, drive the motion, return a dict of the figures."""
    import rclpy
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from robot_dynamics_ros.dynamics import RobotModel
    rel, start = ARMS[arm]
    urdf = erd_urdf(rel)
    model = RobotModel.from_urdf_file(urdf)
    ns = f'obs_{arm}_{int(rate)}_{mode}'
    q0 = '[' + ', '.join(repr(float(x)) for x in start) + ']'
    lockstep = mode == 'lockstep'
    sim_args = ['-r', f'__ns:=/{ns}', '-p', f'urdf_file:={urdf}', '-p', f'publish_rate:={rate}',
                '-p', f'initial_positions:={q0}', '-p', f'lockstep:={str(lockstep).lower()}']
    ctrl_args = ['-r', f'__ns:=/{ns}', '-p', f'urdf_file:={urdf}', '-p', 'mode:=computed_torque',
                 '-p', 'kp:=[400.0]', '-p', 'kd:=[40.0]',
                 '-p', f'use_sim_time:={str(lockstep).lower()}']
    procs, logs = [], []
    for name, args in (('simulator_node', sim_args), ('feedforward_node', ctrl_args)):
        log = open(os.path.join(folder, f'{ns}_{name}.log'), 'w')
        logs.append(log)
        procs.append(subprocess.Popen([node_exe(name), '--ros-args', *args], stdout=log,
                                      stderr=subprocess.STDOUT))
    node = rclpy.create_node(f'{ns}_bench', namespace=f'/{ns}')
    states, torques, external = [], [], []
    node.create_subscription(JointState, 'joint_states', states.append, 1000)
    node.create_subscription(JointState, 'inverse_dynamics_controller/torques', torques.append,
                             1000)
    node.create_subscription(JointState, 'inverse_dynamics_controller/external_torques',
                             external.append, 1000)
    traj = node.create_publisher(JointTrajectory, 'inverse_dynamics_controller/joint_trajectory',
                                 10)

    def spin_until(predicate, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end and not predicate():
            rclpy.spin_once(node, timeout_sec=0.005)
        return predicate()
    try:
        if not spin_until(lambda: min(len(external), len(states), len(torques)) > 200
                          and traj.get_subscription_count() > 0, 90):
            return dict(error=f'no external torques (logs in {folder})')
        spin_until(lambda: False, 1.0)
        joints = list(torques[-1].name)
        cmd = [model.index(j) for j in joints]
        base = np.array(start)[cmd]
        # +-0.4 rad, or a quarter of a shorter range (a gripper's fingers: +-1 cm): off the stops,
        # whose force is an external torque
        lo, hi = model.position_limits[cmd].T
        swing = np.minimum(SWING, 0.25 * (hi - lo))
        msg = JointTrajectory(joint_names=joints)
        t = 0.0
        for k in range(2 * LAPS):
            t += HALF
            p = JointTrajectoryPoint(positions=(base + (swing if k % 2 == 0 else -swing)
                                                ).tolist(),
                                     velocities=[0.0] * len(joints),
                                     accelerations=[0.0] * len(joints))
            p.time_from_start.sec, p.time_from_start.nanosec = int(t), int(round(t % 1 * 1e9))
            msg.points.append(p)
        # the tail back to the start: the motion's last swing ends there
        msg.points[-1].positions = base.tolist()
        t_start = seconds(states[-1].header.stamp)
        traj.publish(msg)
        if not spin_until(lambda: seconds(states[-1].header.stamp) > t_start + t + 0.5,
                          60 + 20 * t):
            return dict(error=f'the motion did not end (logs in {folder})')
        window = [m for m in external if t_start + 0.05 < seconds(m.header.stamp) <=
                  t_start + t]
        tau = np.array([m.effort for m in torques
                        if t_start < seconds(m.header.stamp) <= t_start + t])
        r = np.abs(np.array([np.array(m.effort)[cmd] for m in window]))
        peak = np.abs(tau).max(axis=0)
        share = r / peak
        p99, top = np.percentile(share, 99, axis=0), share.max(axis=0)
        worst = int(np.argmax(p99))
        out = dict(p99=p99, max=top, peak=peak, joints=joints, worst=worst, samples=len(window))
        if not lockstep:
            # the stamps (wall time) against the simulated time: a state every 1 / rate of it
            moving = [seconds(m.header.stamp) for m in states
                      if t_start < seconds(m.header.stamp) <= t_start + t]
            out['stamp_rate'] = (moving[-1] - moving[0]) / ((len(moving) - 1) / rate)
            gaps = np.diff(moving) * 1e3
            out['intervals'] = (np.percentile(gaps, 1), np.percentile(gaps, 99), gaps.max())
        return out
    finally:
        node.destroy_node()
        for p in procs:
            interrupt(p, 10)
        for log in logs:
            log.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().split('\n\n')[0])
    ap.add_argument('--arms', nargs='+', default=sorted(ARMS), choices=sorted(ARMS))
    ap.add_argument('--rates', nargs='+', type=float, default=[250.0, 500.0, 1000.0])
    ap.add_argument('--modes', nargs='+', default=['realtime', 'lockstep'],
                    choices=['realtime', 'lockstep'])
    args = ap.parse_args()
    local_ros(ARMS['ur5'][0])
    import rclpy
    rclpy.init()
    folder = tempfile.mkdtemp(prefix='bench_observer_')
    distro = os.environ.get('ROS_DISTRO', '?')
    results = []
    try:
        for arm in args.arms:
            for rate in args.rates:
                for mode in args.modes:
                    res = one_run(arm, rate, mode, folder)
                    results.append((arm, rate, mode, res))
                    if 'error' in res:
                        print(f'{arm} {rate:.0f} Hz {mode}: {res["error"]}', flush=True)
                        continue
                    w = res['worst']
                    rate_note = (f'; stamps ran {res["stamp_rate"]:.3f}x simulated time, '
                                 f'{1e3 / rate:.0f} ms apart: p1 {res["intervals"][0]:.3f}, '
                                 f'p99 {res["intervals"][1]:.3f}, max {res["intervals"][2]:.3f} ms'
                                 if res.get('stamp_rate') else '')
                    print(f'{arm} {rate:4.0f} Hz {mode:8s} ({distro}): |external| p99 '
                          f'{100 * res["p99"].max():6.2f} % (max {100 * res["max"].max():6.2f} %) '
                          f'of the peak command, worst {res["joints"][w]} (peak '
                          f'{res["peak"][w]:.1f} N m); {res["samples"]} estimates{rate_note}',
                          flush=True)
    finally:
        rclpy.shutdown()
    for arm, rate, mode, res in results:
        if 'error' in res:
            print(f'[target] {arm} {rate:.0f} Hz {mode}: no result MISSED')
            continue
        ok = res['p99'].max() <= 0.01 and res['max'].max() <= 0.02
        print(f'[target] {arm} {rate:.0f} Hz {mode}: p99 {100 * res["p99"].max():.2f} % <= 1 %, '
              f'max {100 * res["max"].max():.2f} % <= 2 % of the peak command: '
              f'{"met" if ok else "MISSED"}')
    print(f'logs in {folder}')


if __name__ == '__main__':
    main()
