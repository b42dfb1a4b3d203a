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
``robot-dynamics launch``: start a launch file's nodes without ROS 2's launch system.

The launch system and the ``ros2`` CLI come with a ROS 2 install, not with the ``ros-*`` wheels.
This starts the nodes that ``nodes.launch_setup`` decides for ``feedforward.launch.py`` or
``simulation.launch.py`` (the same arguments, the same parameters and remappings) as processes,
passes their output through, and ends them all on Ctrl-C or SIGTERM, or when one of them exits.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from ..nodes import launch_setup

FILES = {'feedforward': 'feedforward', 'feedforward.launch.py': 'feedforward',
         'simulation': 'simulation', 'simulation.launch.py': 'simulation'}
STOP_TIMEOUT = 10.0      # s a node has to end after SIGINT before SIGTERM, then SIGKILL


def arguments_of(words):
    """Return {name: value} of ``name:=value`` words; ValueError names one of another form."""
    out = {}
    for word in words:
        name, sep, value = word.partition(':=')
        if not sep or not name:
            raise ValueError(f'"{word}" is not a launch argument of the form name:=value')
        out[name] = value
    return out


def executable(spec):
    """Return the path of a NodeSpec's executable, or None."""
    if spec.package == launch_setup.PACKAGE:
        folder = os.path.dirname(sys.executable)
        return shutil.which(spec.executable, path=folder) or shutil.which(spec.executable)
    try:
        from ament_index_python.packages import get_package_prefix
        lib = os.path.join(get_package_prefix(spec.package), 'lib', spec.package)
    except (ImportError, LookupError, OSError):
        return None
    return shutil.which(spec.executable, path=lib)


def describe(kind):
    """Return the launch file's arguments with their defaults, as ``ros2 launch -s`` lists them."""
    lines = [f'Arguments of {kind}.launch.py (name:=value):']
    for name, default, text in getattr(launch_setup, f'{kind}_arguments')():
        lines.append(f"  {name}: {text} (default: '{default}')")
    return '\n'.join(lines)


def launch(kind, words, show_args=False):
    """Start the nodes of ``kind``'s launch file for ``words``; return an exit code."""
    kind = FILES.get(kind)
    if kind is None:
        print(f'robot-dynamics launch: the launch files are {", ".join(sorted(set(FILES)))}',
              file=sys.stderr)
        return 2
    if show_args:
        print(describe(kind))
        return 0
    try:
        nodes = getattr(launch_setup, f'{kind}_nodes')(**arguments_of(words))
    except ValueError as e:
        print(f'robot-dynamics launch: {e}', file=sys.stderr)
        return 2
    missing = [n for n in nodes if executable(n) is None]
    if missing:
        print('robot-dynamics launch: ' + '; '.join(
            f'{n.package}/{n.executable} is not installed (a ROS 2 install has it)'
            for n in missing), file=sys.stderr)
        return 1
    stopping = []

    def stop(signum, frame):
        stopping.append(signum)
    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    folder = tempfile.mkdtemp(prefix='robot_dynamics_ros_launch_')
    procs = []
    try:
        for n in nodes:
            procs.append((n, subprocess.Popen([executable(n)] + launch_setup.ros_arguments(
                n, folder))))
            print(f'[robot-dynamics launch] {n.executable} started as '
                  f'/{"/".join(p for p in (n.namespace, n.name) if p)} (pid {procs[-1][1].pid})',
                  flush=True)
        while not stopping and all(p.poll() is None for _, p in procs):
            time.sleep(0.05)
        return _stop(procs, stopping)
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        shutil.rmtree(folder, ignore_errors=True)


def _stop(procs, stopping):
    """End every node (SIGINT, then SIGTERM, then SIGKILL); return 0 when all ended cleanly."""
    code = 0
    for n, p in procs:
        if p.poll() is not None and not stopping:
            print(f'[robot-dynamics launch] {n.executable} exited with status {p.returncode}; '
                  f'stopping the others', file=sys.stderr, flush=True)
            code = p.returncode or code
    for _, p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)    # a terminal's Ctrl-C reached them too: once is fine
    for n, p in procs:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                p.wait(timeout=STOP_TIMEOUT)
                break
            except subprocess.TimeoutExpired:
                print(f'[robot-dynamics launch] {n.executable} still running '
                      f'{STOP_TIMEOUT:.0f} s after being asked to stop: {sig.name}',
                      file=sys.stderr, flush=True)
                p.send_signal(sig)
        p.wait()
        if p.returncode != 0:
            code = code or (p.returncode if p.returncode > 0 else 1)
        print(f'[robot-dynamics launch] {n.executable} finished with status {p.returncode}',
              flush=True)
    return code
