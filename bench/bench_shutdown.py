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
Start and stop both nodes many times, on a loaded machine: every stop must be clean and quick.

Each cycle starts simulator_node and feedforward_node (computed torque) on an arm, lets them run
a random time (from 0: during start-up, once the package's first line has run), in one of four
situations (running; the simulator
paused; in lockstep; inverse-dynamics calls in flight), then sends SIGINT or SIGTERM (at random)
to both. A node must exit with status 0, print no traceback, and be gone within 5 s; one that is
not gets SIGUSR1 (every thread's stack to its log) and is killed, and its log is kept. Two CPU
hogs run beside it all (``--hogs``).

    python bench/bench_shutdown.py [--cycles 100] [--hogs 2] [--seed 1]
        [--arm ur_description/urdf/ur10_robot.urdf]
"""
import argparse
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from benchlib import call_service, local_ros, node_exe

EXIT_WITHIN = 5.0           # s from the signal to the process gone
SITUATIONS = ('running', 'paused', 'lockstep', 'service calls')


def _hog(stop):
    x = 0
    while not stop.is_set():
        x = (x * 7 + 1) % 1000003


class Driver:
    """The bench's rclpy side: pauses the simulator, calls the controller's service."""

    def __init__(self):
        import rclpy
        from robot_dynamics_msgs.srv import InverseDynamics
        from std_srvs.srv import SetBool
        self.rclpy = rclpy
        rclpy.init()
        self.node = rclpy.create_node('shutdown_bench')
        self.pause = self.node.create_client(SetBool, '/dynamics_simulator/pause')
        self.inverse = self.node.create_client(InverseDynamics,
                                               '/inverse_dynamics_controller/inverse_dynamics')
        self.SetBool, self.InverseDynamics = SetBool, InverseDynamics
        self.calls = 0

    def paused(self, timeout):
        answer = call_service(self.node, self.pause, self.SetBool.Request(data=True), timeout)
        return answer is not None and answer.success

    def calls_until(self, stop):
        """Call inverse_dynamics back to back (each may be in flight at the signal)."""
        if not self.inverse.wait_for_service(timeout_sec=5.0):
            return
        while not stop.is_set():
            future = self.inverse.call_async(self.InverseDynamics.Request())
            end = time.monotonic() + 0.5
            while not future.done() and time.monotonic() < end and not stop.is_set():
                self.rclpy.spin_once(self.node, timeout_sec=0.005)
            self.calls += 1

    def close(self):
        self.node.destroy_node()
        self.rclpy.shutdown()


def _wait_for_the_package(proc, timeout=10.0):
    """
    Wait until the node's own code runs: its SIGTERM handler is installed (``/proc``'s SigCgt).

    Before that, for the first ~0.05 s (0.1 s under load), Python itself starts (site.py, the
    console script's first import): nothing of the package has run, and a signal meets Python's
    defaults (SIGINT: a KeyboardInterrupt traceback, SIGTERM: killed with status -15).
    """
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        try:
            with open(f'/proc/{proc.pid}/status') as f:
                caught = int(next(line for line in f if line.startswith('SigCgt:')).split()[1],
                             16)
        except (OSError, StopIteration, ValueError):
            return
        if caught & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.002)


def cycle(i, rng, urdf, driver, folder, max_run):
    """Run one start/stop cycle; return a dict of what happened to each node."""
    situation = rng.choice(SITUATIONS)
    sig = rng.choice((signal.SIGINT, signal.SIGTERM))
    run = rng.uniform(0.0, max_run)
    sim_args = ['-p', f'urdf_file:={urdf}', '-p', 'publish_rate:=1000.0']
    if situation == 'lockstep':
        sim_args += ['-p', 'lockstep:=true']
    nodes = {'simulator_node': sim_args,
             'feedforward_node': ['-p', 'mode:=computed_torque', '-p', 'kp:=[400.0]',
                                  '-p', 'kd:=[40.0]']}
    procs, logs = {}, {}
    for name, args in nodes.items():
        logs[name] = os.path.join(folder, f'{i:03d}-{name}.log')
        with open(logs[name], 'w') as log:
            procs[name] = subprocess.Popen([node_exe(name), '--ros-args', *args], stdout=log,
                                           stderr=subprocess.STDOUT)
    for p in procs.values():
        _wait_for_the_package(p)
    stop = threading.Event()
    caller = None
    start = time.monotonic()
    if situation == 'paused' and run > 0.5:
        driver.paused(timeout=run)
    elif situation == 'service calls':
        caller = threading.Thread(target=driver.calls_until, args=(stop,), daemon=True)
        caller.start()
    time.sleep(max(0.0, run - (time.monotonic() - start)))
    signalled = time.monotonic()
    for p in procs.values():
        p.send_signal(sig)
    out = {}
    for name, p in procs.items():
        try:
            p.wait(timeout=max(0.0, EXIT_WITHIN - (time.monotonic() - signalled)))
            exited = time.monotonic() - signalled
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGUSR1)       # faulthandler: every thread's stack to the log
            time.sleep(0.5)
            p.kill()
            p.wait()
            exited = None
        with open(logs[name], errors='replace') as f:
            text = f.read()
        out[name] = {'status': p.returncode, 'exited': exited, 'log': logs[name],
                     'traceback': 'Traceback' in text or 'Fatal Python error' in text}
    stop.set()
    if caller is not None:
        caller.join(timeout=2.0)
    return situation, sig, run, out


def run_cycles(cycles, hogs, urdf, max_run=3.0, seed=1, keep=None, say=print):
    """Run the cycles beside ``hogs`` busy processes; returns (summary dict, failure lines)."""
    rng = random.Random(seed)
    stop_hogs = multiprocessing.Event()
    hog_procs = [multiprocessing.Process(target=_hog, args=(stop_hogs,), daemon=True)
                 for _ in range(hogs)]
    for h in hog_procs:
        h.start()
    folder = keep or tempfile.mkdtemp(prefix='bench_shutdown_')
    driver = Driver()
    failures, times = [], []
    try:
        for i in range(cycles):
            situation, sig, run, out = cycle(i, rng, urdf, driver, folder, max_run)
            for name, r in out.items():
                bad = []
                if r['exited'] is None:
                    bad.append(f'still running {EXIT_WITHIN} s after {sig.name}')
                elif r['status'] != 0:
                    bad.append(f'exit status {r["status"]}')
                if r['traceback']:
                    bad.append('a traceback')
                if r['exited'] is not None:
                    times.append(r['exited'])
                if bad:
                    failures.append(f'cycle {i} ({situation}, {sig.name} after {run:.2f} s): '
                                    f'{name}: {", ".join(bad)} (log {r["log"]})')
                    say(failures[-1])
    finally:
        driver.close()
        stop_hogs.set()
        for h in hog_procs:
            h.join(timeout=5)
    summary = {'cycles': cycles, 'stops': 2 * cycles, 'failures': len(failures),
               'hangs': sum('still running' in f for f in failures),
               'tracebacks': sum('traceback' in f for f in failures),
               'max_exit_s': max(times) if times else float('nan'),
               'median_exit_s': sorted(times)[len(times) // 2] if times else float('nan'),
               'folder': folder}
    if not failures and keep is None:
        shutil.rmtree(folder, ignore_errors=True)
    return summary, failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().split('\n\n')[0])
    ap.add_argument('--cycles', type=int, default=100)
    ap.add_argument('--hogs', type=int, default=2, help='busy processes beside the nodes')
    ap.add_argument('--arm', default='ur_description/urdf/ur10_robot.urdf',
                    help="example-robot-data path under robots/, or a URDF file")
    ap.add_argument('--max-run', type=float, default=3.0, help='longest run before the signal')
    ap.add_argument('--seed', type=int, default=1)
    args = ap.parse_args()
    urdf = local_ros(args.arm)
    t0 = time.monotonic()
    summary, failures = run_cycles(args.cycles, args.hogs, urdf, args.max_run, args.seed)
    distro = os.environ.get('ROS_DISTRO', '?')
    print(f'[report] shutdown on {distro}: {summary["cycles"]} cycles ({summary["stops"]} node '
          f'stops, SIGINT and SIGTERM, {args.hogs} CPU hogs, {os.path.basename(urdf)}) in '
          f'{time.monotonic() - t0:.0f} s: {summary["hangs"]} hangs, {summary["tracebacks"]} '
          f'with a traceback, {summary["failures"]} failed stops; exit after the signal: '
          f'median {summary["median_exit_s"]:.2f} s, max {summary["max_exit_s"]:.2f} s')
    ok = summary['failures'] == 0
    print(f'[target] clean exits within {EXIT_WITHIN:.0f} s, {summary["stops"]} stops on '
          f'{distro}: {summary["failures"]} failed (target 0) {"met" if ok else "MISSED"}')
    if failures:
        print(f'logs kept in {summary["folder"]}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
