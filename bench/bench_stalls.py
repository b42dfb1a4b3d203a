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
A stalled joint_states stream: how far a gravity-loaded arm moves, and how it comes back.

    bash scripts/dev.sh run python bench/bench_stalls.py [--arms ur5 panda ur10 xarm7]
        [--modes gravity computed_torque] [--gaps 0.12 0.3] [--hogs N] [-p name:=value ...]

Per arm and mode: simulator_node (real time, 1 kHz, the URDF's friction, its own defaults:
the last command holds, as ros2_control's ForwardCommandController) -> a relay in this process
(``sim_states`` -> ``joint_states``) -> feedforward_node (config/feedforward.yaml: the shipped
parameters, ``-p`` overrides them) -> the simulator. After 4 s at rest in a pose where gravity
loads the arm, the relay holds joint_states back for each gap in turn (the plant runs on), 3 s
apart. Per gap it prints the largest move of a joint from where it was when the stream stopped,
until 1 s after it is back (``drop``, rad; at most 0.05 asked by issue #52), the fastest joint in
that second (``back``, rad/s; at most 0.5 asked) and what the controller and the simulator said
(their warnings and errors; the nodes throttle a warning to one per 5 s, so a stall within 5 s
of an earlier stale report of the same joints, a start-up hiccup's too, shows ``-``).
``--hogs N``: N busy processes beside it, a core each.

Exits 1 when a figure is over what the issue asks, else 0.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import interrupt, local_ros, node_exe  # noqa: E402

# arm: (URDF under example-robot-data's robots/, a pose gravity loads: upper arm near level)
ARMS = {
    'ur5': ('ur_description/urdf/ur5_robot.urdf', [0.0, -1.2, 1.5, -1.9, -1.57, 0.0]),
    'ur10': ('ur_description/urdf/ur10_robot.urdf', [0.0, -1.2, 1.5, -1.9, -1.57, 0.0]),
    'panda': ('panda_description/urdf/panda.urdf',
              [0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8, 0.02, 0.02]),
    'xarm7': ('xarm_description/urdf/xarm7.urdf', [0.0, -0.3, 0.0, 0.8, 0.0, 1.1, 0.0]),
    'z1': ('z1_description/urdf/z1.urdf', [0.0, 1.2, -1.0, 0.0, 0.0, 0.0, -0.5]),
    'kinova': ('kinova_description/robots/kinova.urdf', [0.0, 2.9, 1.3, -2.07, 1.4, 0.0]),
    'talos_arm': ('talos_data/robots/talos_left_arm.urdf', [0.6, 0.3, -1.2, 0.0, 0.0, 0.0, -0.5]),
}
CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'robot_dynamics_ros',
                      'config', 'feedforward.yaml')
SETTLE, APART, AFTER = 4.0, 3.0, 1.0      # s: at rest first, between gaps, judged after a gap
MAX_DROP, MAX_BACK = 0.05, 0.5            # rad, rad/s (issue #52)
SAID = ('WARN', 'ERROR', 'Traceback')


def said(path, since):
    """Return the warning and error lines of a node's log from byte ``since`` on, shortened."""
    with open(path, encoding='utf-8', errors='replace') as f:
        f.seek(since)
        lines = [line.strip() for line in f if any(w in line for w in SAID)]
    return [line.split(']: ', 1)[-1][:150] for line in lines]


def stall(seen, hold_until, gap):
    """
    Hold the relayed stream back for ``gap`` s; return (drop, back) as the module doc says.

    ``seen``: the relay's (monotonic time, q, qd) of every state the plant sent; ``hold_until``:
    the one-element list the relay reads (it forwards nothing before that time).
    """
    t0 = time.monotonic()
    before = seen[-1][1]
    hold_until[0] = t0 + gap
    time.sleep(gap + AFTER)
    window = [(t, q, qd) for t, q, qd in seen if t0 <= t <= t0 + gap + AFTER]
    drop = max((np.abs(q - before).max() for _, q, _ in window), default=float('nan'))
    back = max((np.abs(qd).max() for t, _, qd in window if t > t0 + gap), default=float('nan'))
    return drop, back


def said_model(path):
    """Whether the controller's log says it took its model."""
    with open(path, encoding='utf-8', errors='replace') as f:
        return 'model "' in f.read()


def run(arm, mode, gaps, overrides, logs, sim_overrides=()):
    """One arm and mode: [(gap, drop, back, controller said, simulator said)]."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    rel, q0 = ARMS[arm]
    urdf = local_ros(rel)
    sim_log, ctrl_log = (os.path.join(logs, f'{arm}_{mode}_{n}.log') for n in ('sim', 'ctrl'))
    sim = subprocess.Popen(
        [node_exe('simulator_node'), '--ros-args', '-r', 'joint_states:=sim_states',
         '-p', f'urdf_file:={urdf}', '-p', f'initial_positions:={q0}',
         '-p', 'publish_rate:=1000.0'] + [a for o in sim_overrides for a in ('-p', o)],
        stdout=open(sim_log, 'w'), stderr=subprocess.STDOUT)
    ctrl = subprocess.Popen(
        [node_exe('feedforward_node'), '--ros-args', '--params-file', CONFIG,
         '-p', f'urdf_file:={urdf}', '-p', f'mode:={mode}']
        + [a for o in overrides for a in ('-p', o)],
        stdout=open(ctrl_log, 'w'), stderr=subprocess.STDOUT)
    context = rclpy.Context()
    rclpy.init(args=[], context=context)      # not this script's -p arguments
    node = rclpy.create_node('stall_relay', context=context)
    hold_until = [0.0]
    seen = []                                     # (monotonic time, q, qd) as the plant sent
    pub = node.create_publisher(JointState, 'joint_states', 100)

    def relay(m):
        seen.append((time.monotonic(), np.array(m.position), np.array(m.velocity)))
        if time.monotonic() >= hold_until[0]:
            pub.publish(m)
    node.create_subscription(JointState, 'sim_states', relay, 100)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    rows = []
    try:
        end = time.monotonic() + 30.0             # the nodes up, the loop closed
        while time.monotonic() < end and (len(seen) < 100 or not said_model(ctrl_log)):
            time.sleep(0.1)
        time.sleep(SETTLE)
        if not seen:
            raise SystemExit(f'{arm}: no joint states from the simulator: {said(sim_log, 0)}')
        for gap in gaps:
            marks = [os.path.getsize(p) for p in (ctrl_log, sim_log)]
            drop, back = stall(seen, hold_until, gap)
            rows.append((gap, drop, back, said(ctrl_log, marks[0]), said(sim_log, marks[1])))
            time.sleep(APART)
    finally:
        interrupt(ctrl, 10)
        interrupt(sim, 10)
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
        spinner.join(2.0)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--arms', nargs='+', default=['ur5', 'panda', 'ur10', 'xarm7'],
                        choices=sorted(ARMS))
    parser.add_argument('--modes', nargs='+', default=['gravity', 'computed_torque'])
    parser.add_argument('--gaps', nargs='+', type=float, default=[0.12, 0.3])
    parser.add_argument('--hogs', type=int, default=0, help='busy processes beside it')
    parser.add_argument('-p', dest='overrides', action='append', default=[],
                        metavar='NAME:=VALUE', help="a feedforward_node parameter")
    parser.add_argument('--sim', dest='sim_overrides', action='append', default=[],
                        metavar='NAME:=VALUE', help='a simulator_node parameter (for instance '
                                                    'enforce_command_limits:=true)')
    args = parser.parse_args(argv)
    hogs = [subprocess.Popen([sys.executable, '-c', 'while True: pass'])
            for _ in range(args.hogs)]
    failed = False
    logs = tempfile.mkdtemp(prefix='bench_stalls_')
    print(f'{"arm":10s} {"mode":16s} {"gap s":>6s} {"drop rad":>9s} {"back rad/s":>10s}  said '
          f'(logs: {logs}; {args.hogs} busy process(es) beside)')
    try:
        for arm in args.arms:
            for mode in args.modes:
                rows = run(arm, mode, args.gaps, args.overrides, logs, args.sim_overrides)
                for gap, drop, back, ctrl_said, sim_said in rows:
                    bad = not (drop <= MAX_DROP and back <= MAX_BACK)
                    failed |= bad
                    words = '; '.join([f'controller: {s}' for s in ctrl_said]
                                      + [f'simulator: {s}' for s in sim_said]) or '-'
                    print(f'{arm:10s} {mode:16s} {gap:6.2f} {drop:9.4f} {back:10.3f}  '
                          f'{"OVER " if bad else ""}{words}', flush=True)
    finally:
        for h in hogs:
            h.kill()
    print(f'asked: drop <= {MAX_DROP} rad, back <= {MAX_BACK} rad/s: '
          f'{"not met" if failed else "met"}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
