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
Latency of feedforward_node: joint_states in, effort command out, over real DDS (loopback).

    bash scripts/dev.sh run python bench/bench_node_latency.py [--seconds 60] [--rate 1000]

Another process publishes panda joint_states at --rate Hz for --seconds. Every effort message the
node publishes is paired with the joint state it answers (~/torques carries that state's stamp; it
is published right after the effort command), and the latency is the time from publishing that
state to receiving the efforts; effort commands are counted too. The same is measured in the same
run for a bare rclpy echo node (joint_states in -> Float64MultiArray + JointState out, no
computation), the floor any Python node has here. Reports sent, received, dropped and p50/p99/max
latency; target: 0 dropped and p99 within 0.3 ms of the echo's p99. DDS stays on this machine
(ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST).
"""
import argparse
import os
import random
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import threading
import time

os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(30, 99)))

import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402

ECHO = textwrap.dedent('''
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    rclpy.init()
    node = rclpy.create_node('bare_echo')
    cmd = node.create_publisher(Float64MultiArray, 'echo/commands', 10)
    mon = node.create_publisher(JointState, 'echo/torques', 10)
    def cb(msg):
        cmd.publish(Float64MultiArray(data=list(msg.position)))
        out = JointState(name=list(msg.name), effort=list(msg.position))
        out.header.stamp = msg.header.stamp
        mon.publish(out)
    node.create_subscription(JointState, 'echo/joint_states', cb,
                             QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
    print('ready', flush=True)
    rclpy.spin(node)
''')
JOINTS = [f'panda_joint{i}' for i in range(1, 8)] + ['panda_finger_joint1', 'panda_finger_joint2']


def panda_urdf():
    path = os.path.join(sysconfig.get_paths()['purelib'], 'cmeel.prefix', 'share',
                        'example-robot-data', 'robots', 'panda_description', 'urdf', 'panda.urdf')
    with open(path) as f:
        return f.read()


def drive(node, topics, seconds, rate):
    """
    Publish joint states on topics[0] at `rate` for `seconds`.

    Record the receipt of the effort command (topics[1]) and of the effort message stamped with the
    state it answers (topics[2]). Returns (sent, commands received, latencies in ms by stamp).
    """
    js_topic, cmd_topic, mon_topic = topics
    n_cmd, received = [0], {}
    node.create_subscription(Float64MultiArray, cmd_topic,
                             lambda m: n_cmd.__setitem__(0, n_cmd[0] + 1), 10000)

    def on_effort(m):
        received[m.header.stamp.sec * 10**9 + m.header.stamp.nanosec] = time.perf_counter_ns()
    node.create_subscription(JointState, mon_topic, on_effort, 10000)
    pub = node.create_publisher(JointState, js_topic, 10)
    deadline = time.monotonic() + 30
    while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pub.get_subscription_count() > 0, f'nobody subscribes to {js_topic}'
    q = np.random.default_rng(0).uniform(-1, 1, len(JOINTS))
    msg = JointState(name=JOINTS, position=q.tolist(), velocity=[0.0] * len(JOINTS))
    for _ in range(200):                  # warm up (the node may still be loading the model)
        pub.publish(msg)
        time.sleep(0.005)
    time.sleep(0.5)
    cmd0 = n_cmd[0]
    sent = []
    n = int(seconds * rate)
    period = 1e9 / rate
    t0 = time.perf_counter_ns()
    for k in range(n):
        target = t0 + k * period
        while True:                       # sleep most of the wait, spin the last 0.2 ms
            left = target - time.perf_counter_ns()
            if left <= 0:
                break
            if left > 300_000:
                time.sleep((left - 200_000) / 1e9)
        now = time.perf_counter_ns()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 10**9)
        msg.position[-1] = k * 1e-9       # a different state each time
        pub.publish(msg)
        sent.append(now)
    time.sleep(1.0)
    lat = np.array([(received[s] - s) / 1e6 for s in sent if s in received])
    return n, n_cmd[0] - cmd0, lat


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument('--seconds', type=float, default=60.0)
    ap.add_argument('--rate', type=float, default=1000.0)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        echo = subprocess.Popen([sys.executable, '-c', ECHO], stdout=subprocess.PIPE, text=True)
        ctrl_log = open(os.path.join(tmp, 'node.log'), 'w')
        ctrl = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), 'feedforward_node'),
                                 '--ros-args', '-p', 'mode:=gravity'],
                                stdout=ctrl_log, stderr=subprocess.STDOUT)
        rclpy.init()
        node = rclpy.create_node('latency_bench')
        desc = node.create_publisher(String, 'robot_description', QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL))
        desc.publish(String(data=panda_urdf()))
        ex = SingleThreadedExecutor()
        ex.add_node(node)
        spinner = threading.Thread(target=ex.spin, daemon=True)
        spinner.start()
        try:
            assert echo.stdout.readline().strip() == 'ready'
            rows = []
            for label, topics in (
                    ('bare echo', ('echo/joint_states', 'echo/commands', 'echo/torques')),
                    ('feedforward_node', ('joint_states', 'effort_controller/commands',
                                          '/inverse_dynamics_controller/torques'))):
                n, n_cmd, lat = drive(node, topics, args.seconds, args.rate)
                rows.append((label, n, n_cmd, lat))
        finally:
            ex.shutdown()
            node.destroy_node()
            rclpy.shutdown()
            for p in (echo, ctrl):
                p.terminate()
                p.wait(timeout=10)
            ctrl_log.close()
    print(f'{args.rate:.0f} Hz joint_states for {args.seconds:.0f} s (panda, gravity mode); '
          f'latency publish -> effort receipt, ms')
    print(f'{"":<18} {"sent":>7} {"commands":>9} {"answered":>9} {"dropped":>8} {"p50":>7} '
          f'{"p99":>7} {"max":>7}')
    for label, n, n_cmd, lat in rows:
        print(f'{label:<18} {n:7d} {n_cmd:9d} {len(lat):9d} {n - len(lat):8d} '
              f'{np.percentile(lat, 50):7.3f} {np.percentile(lat, 99):7.3f} {lat.max():7.3f}')
    (_, _, _, l_e), (_, n_c, _, l_c) = rows
    d99 = np.percentile(l_c, 99) - np.percentile(l_e, 99)
    dropped = n_c - len(l_c)
    print(f'p99 over the bare echo: {d99:+.3f} ms (target <= 0.3 ms); dropped {dropped} '
          f'(target 0): ' + ('targets met' if d99 <= 0.3 and dropped == 0 else 'targets missed'))


if __name__ == '__main__':
    main()
