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
        [--fast-rate 2000] [--fast-seconds 20] [--mode gravity] [--past-limits]

Another process publishes panda joint_states at --rate Hz for --seconds: a pose inside every
limit, held (--past-limits: its fingers past theirs, so that the limits layer's bounds work on
every message, as every run before this option did). Every effort message the
node publishes is paired with the joint state it answers (~/torques carries that state's stamp; it
is published right after the effort command), and the latency is the time from publishing that
state to receiving the efforts; effort commands are counted too. The same is measured in the same
run for a bare rclpy echo node (joint_states in -> Float64MultiArray + JointState out, no
computation), spun by rclpy.spin as a plain rclpy node is; feedforward_node takes joint_states
through a wait set of its own in a thread (nodes/executors.LoopThread; rclpy's experimental
EventsExecutor of these wheels neither delivered messages to a subscription nor stopped on
SIGINT or SIGTERM here, so it is not used). feedforward_node runs twice, with the momentum
observer off and on (its default). The three are driven in turn in 5 s blocks (so that they
share whatever else the machine does). Reports sent, received, dropped and p50/p99/max
latency at --rate for --seconds (targets, issue 51's: p50 within +0.05 ms and p99 within
+0.3 ms of the echo, no more dropped than the echo) and at --fast-rate (reported); and each
process's CPU time (user + system, every thread, from /proc) while its channel was driven, per
message sent (target: the node's at most the echo's). --mode runs feedforward_node in another
mode (gravity by default; cartesian_impedance and operational_space: the task modes, holding the
pose of the first state).
DDS stays on this machine (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST).
"""
import argparse
import os
import random
import subprocess
import sys
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

from benchlib import PANDA_JOINTS as JOINTS, PANDA_URDF, interrupt, read_urdf  # noqa: E402
from robot_dynamics_ros.dynamics import RobotModel  # noqa: E402

ECHO = textwrap.dedent('''
    import rclpy
    from rclpy.executors import ExternalShutdownException
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
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):   # the bench's SIGINT: rclpy's
        pass                                                # handler shut it down, or this
''')


class Channel:
    """One system under test: its joint_states publisher, its effort and monitor subscriptions."""

    def __init__(self, node, label, topics, pid, q):
        js_topic, cmd_topic, mon_topic = topics
        self.label, self.n_cmd, self.received, self.pid = label, 0, {}, pid
        self.sent, self.lat, self.cpu = 0, [], 0.0
        node.create_subscription(Float64MultiArray, cmd_topic, self._on_command, 10000)
        node.create_subscription(JointState, mon_topic, self._on_effort, 10000)
        self.pub = node.create_publisher(JointState, js_topic, 10)
        self.msg = JointState(name=JOINTS, position=q.tolist(), velocity=[0.0] * len(JOINTS))
        self.last = float(q[-1])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
                self.pub.get_subscription_count() and node.count_publishers(cmd_topic)
                and node.count_publishers(mon_topic)):
            time.sleep(0.05)
        assert self.pub.get_subscription_count(), f'nobody subscribes to {js_topic}'
        # warm up until answers come back (the node may still be loading the model)
        while time.monotonic() < deadline and len(self.received) < 100:
            self._publish(time.perf_counter_ns())
            time.sleep(0.005)
        assert len(self.received) >= 100, f'{label} does not answer'

    def _on_command(self, _):
        self.n_cmd += 1

    def _on_effort(self, m):
        self.received[m.header.stamp.sec * 10**9 + m.header.stamp.nanosec] = \
            time.perf_counter_ns()

    def _publish(self, now):
        msg = self.msg
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 10**9)
        msg.position[-1] = self.last + (now % 10**6) * 1e-15    # a different state each time
        self.pub.publish(msg)

    def drive(self, seconds, rate):
        """Publish at ``rate`` for ``seconds``; add the latencies (ms) of the answers."""
        self.received.clear()
        cmd0 = self.n_cmd
        cpu0 = process_cpu(self.pid)
        sent = []
        period = 1e9 / rate
        t0 = time.perf_counter_ns()
        for k in range(int(seconds * rate)):
            target = t0 + k * period
            while True:                       # sleep most of the wait, spin the last 0.2 ms
                left = target - time.perf_counter_ns()
                if left <= 0:
                    break
                if left > 300_000:
                    time.sleep((left - 200_000) / 1e9)
            now = time.perf_counter_ns()
            self._publish(now)
            sent.append(now)
        time.sleep(0.5)
        self.cpu += process_cpu(self.pid) - cpu0
        self.sent += len(sent)
        self.n_commands += self.n_cmd - cmd0
        self.lat += [(self.received[s] - s) / 1e6 for s in sent if s in self.received]


def process_cpu(pid):
    """Return the CPU time (s, user + system, all threads) the process ``pid`` has used."""
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def run_rate(channels, rate, seconds, block=5.0):
    """
    Drive every channel at ``rate`` for ``seconds`` in all, in interleaved blocks of ``block`` s.

    Interleaving shares whatever else the machine does between them. Returns rows (label,
    sent, commands, latencies, CPU seconds of its process while it was driven).
    """
    for c in channels:
        c.sent, c.n_commands, c.lat, c.cpu = 0, 0, [], 0.0
    rounds = max(1, int(round(seconds / block)))
    for _ in range(rounds):
        for c in channels:
            c.drive(seconds / rounds, rate)
    return [(c.label, c.sent, c.n_commands, np.array(c.lat), c.cpu) for c in channels]


def report(rate, seconds, rows, targets, mode='gravity',
           where='inside its limits'):
    """Print a table and, with ``targets``, each node's p50/p99/dropped against the echo's."""
    print(f'\n{rate:.0f} Hz joint_states for {seconds:.0f} s (panda {where}, {mode} mode); '
          f'latency publish -> effort receipt, ms; CPU of the process a message sent')
    print(f'{"":<30} {"sent":>7} {"commands":>9} {"answered":>9} {"dropped":>8} {"p50":>7} '
          f'{"p99":>7} {"max":>7} {"cpu/msg":>8}')
    if any(len(lat) == 0 for _, _, _, lat, _ in rows):
        print('  ' + ', '.join(label for label, _, _, lat, _ in rows if len(lat) == 0)
              + ': no answer at all (not started, or a wrong topic)')
        return
    for label, n, n_cmd, lat, cpu in rows:
        print(f'{label:<30} {n:7d} {n_cmd:9d} {len(lat):9d} {n - len(lat):8d} '
              f'{np.percentile(lat, 50):7.3f} {np.percentile(lat, 99):7.3f} {lat.max():7.3f} '
              f'{cpu / n * 1e6:5.0f} us')
    (_, n_e, _, l_e, cpu_e), nodes = rows[0], rows[1:]
    for label, n, _, lat, cpu in nodes:
        d50 = np.percentile(lat, 50) - np.percentile(l_e, 50)
        d99 = np.percentile(lat, 99) - np.percentile(l_e, 99)
        drop, drop_e = n - len(lat), n_e - len(l_e)
        ratio = (cpu / n) / (cpu_e / n_e)
        if targets:
            for what, value, limit, ok in (
                    ('p50 over the echo', f'{d50:+.3f} ms', '<= +0.05 ms', d50 <= 0.05),
                    ('p99 over the echo', f'{d99:+.3f} ms', '<= +0.3 ms', d99 <= 0.3),
                    ('dropped', f'{drop} (echo {drop_e})', '<= echo', drop <= drop_e),
                    ('CPU a message', f'{ratio:.2f} x the echo\'s', '<= 1.0 x', ratio <= 1.0)):
                print(f'[target] {label} at {rate:.0f} Hz, {what}: {value} (target {limit}) '
                      + ('met' if ok else 'MISSED'))
        else:
            print(f'[report] {label} at {rate:.0f} Hz: p50 {d50:+.3f} ms, p99 {d99:+.3f} ms over '
                  f'the echo; dropped {drop} (echo {drop_e}); CPU a message {ratio:.2f} x the '
                  f'echo\'s')


def state(past_limits):
    """
    Return the joint positions the bench publishes (JOINTS' order).

    Inside every limit (each joint between 30 and 70 % of its range): an arm holding still,
    where no bound of the limits layer is near; ``past_limits``: uniform in [-1, 1] (rad, m),
    which puts panda's fingers (0-0.04 m) past their limits and the layer's bounds to work.
    """
    rng = np.random.default_rng(0)
    if past_limits:
        return rng.uniform(-1, 1, len(JOINTS))
    model = RobotModel.from_urdf(read_urdf(PANDA_URDF))
    lo, hi = (model.position_limits[[model.joint_names.index(j) for j in JOINTS], i]
              for i in (0, 1))
    return lo + (hi - lo) * rng.uniform(0.3, 0.7, len(JOINTS))


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument('--seconds', type=float, default=60.0, help='at --rate (default 60)')
    ap.add_argument('--rate', type=float, default=1000.0)
    ap.add_argument('--fast-rate', type=float, default=2000.0,
                    help='reported too, without target (0: skip)')
    ap.add_argument('--fast-seconds', type=float, default=20.0,
                    help='at --fast-rate (default 20; 0: skip)')
    ap.add_argument('--mode', default='gravity', help='feedforward_node\'s mode (default gravity)')
    ap.add_argument('--past-limits', action='store_true',
                    help='a state past panda\'s limits (its fingers at up to 1 m): the limits '
                    'layer\'s bounds act on every message')
    args = ap.parse_args()
    if not (args.seconds > 0 and args.rate > 0):
        ap.error('--seconds and --rate must be > 0')

    exe = os.path.join(os.path.dirname(sys.executable), 'feedforward_node')
    with tempfile.TemporaryDirectory() as tmp:
        procs, logs = [subprocess.Popen([sys.executable, '-c', ECHO], stdout=subprocess.PIPE,
                                        text=True)], []
        for ns, observer in (('plain', 'false'), ('observed', 'true')):
            logs.append(open(os.path.join(tmp, f'{ns}.log'), 'w'))
            procs.append(subprocess.Popen(
                [exe, '--ros-args', '-r', f'__ns:=/{ns}', '-p', f'mode:={args.mode}',
                 '-p', f'observer.enabled:={observer}', '-r',
                 'robot_description:=/robot_description'],
                stdout=logs[-1], stderr=subprocess.STDOUT))
        rclpy.init()
        node = rclpy.create_node('latency_bench')
        desc = node.create_publisher(String, 'robot_description', QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL))
        desc.publish(String(data=read_urdf(PANDA_URDF)))
        ex = SingleThreadedExecutor()
        ex.add_node(node)
        spinner = threading.Thread(target=ex.spin, daemon=True)
        spinner.start()
        try:
            assert procs[0].stdout.readline().strip() == 'ready'
            echo_topics = ('echo/joint_states', 'echo/commands', 'echo/torques')
            q = state(args.past_limits)
            channels = [Channel(node, 'bare echo', echo_topics, procs[0].pid, q)] + [
                Channel(node, f'feedforward_node{label}', (
                    f'/{ns}/joint_states', f'/{ns}/effort_controller/commands',
                    f'/{ns}/inverse_dynamics_controller/torques'), proc.pid, q)
                for proc, (ns, label) in zip(procs[1:], (('plain', ' (observer off)'),
                                                         ('observed', ' (observer on)')))]
            slow = run_rate(channels, args.rate, args.seconds)
            fast = (run_rate(channels, args.fast_rate, args.fast_seconds)
                    if args.fast_rate > 0 and args.fast_seconds > 0 else None)
        finally:
            ex.shutdown()
            node.destroy_node()
            rclpy.shutdown()
            for p in procs:
                interrupt(p, 10)
            for log in logs:
                log.close()
    where = 'past its limits' if args.past_limits else 'inside its limits'
    report(args.rate, args.seconds, slow, targets=True, mode=args.mode, where=where)
    if fast is not None:
        report(args.fast_rate, args.fast_seconds, fast, targets=False, mode=args.mode,
               where=where)


if __name__ == '__main__':
    main()
