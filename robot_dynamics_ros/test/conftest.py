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

"""Shared fixtures: example-robot-data URDFs, the Pinocchio oracle, DDS kept on this machine."""
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import sysconfig
import time

import pytest

from realtime_lock import LOCK

# Every ROS process a test starts stays on loopback, on a domain private to this test session.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.setdefault('ROS_DOMAIN_ID', str(random.Random(os.getpid()).randint(30, 99)))

# `dev.sh test` runs the suite as two pytest sessions at once, by RDR_TEST_PART: 'ros', the tests
# that start ROS processes or DDS participants (closed loops in real time), at normal priority;
# 'offline', the modules marked offline (`pytestmark = pytest.mark.offline`: computation, files,
# command-line tools), beside them at idle CPU priority, so that they take only what the ROS tests
# leave of the cores. Unset (pytest or colcon test run directly): every test, in one session.
PART = os.environ.get('RDR_TEST_PART', '')
OFFLINE_DOMAIN = 'none:RDR_TEST_PART=offline,a_test_marked_offline_must_not_start_ROS'
if PART == 'offline':
    # a DDS participant there would run starved of CPU beside the ROS tests: rcl refuses it
    os.environ['ROS_DOMAIN_ID'] = OFFLINE_DOMAIN


# nodeid -> (CPU s of this process, of the children it waited for) during the test
CPU = {}
CPU_TOP = int(os.environ.get('RDR_TEST_CPU_TOP', '20'))     # how many the summary lists


# Tests whose result cannot depend on the ROS 2 distribution (marked any_distro: computation with
# the pinned numpy, numba, Pinocchio, importing nothing of ROS) need to run on one distribution
# only; CI runs them once, beside both distributions' runs. RDR_TEST_ANY_DISTRO: 'skip' leaves
# them out, 'only' keeps only them (and then refuses any import of ROS 2, so that a module marked
# any_distro that does depend on the distribution fails there instead of passing unseen); unset:
# every test.
ANY_DISTRO = os.environ.get('RDR_TEST_ANY_DISTRO', '')
# RDR_TEST_SHARD=i/n: of the tests kept, those of the i-th of n shares of the test files (a
# module's fixtures are then set up in one session only). CI runs the any_distro tests as two
# such sessions at idle priority: once the ROS sessions are over, both cores work on what is
# left of them (one session left one core idle for the last ~110 s of a CI run). The files are
# dealt heaviest first to the lightest share by SHARD_CPU, else as 1 s each: dealt alternately
# by name, the two any_distro sessions took 120 and 163 CPU-s and ended 37-109 s apart; so
# dealt, 22 s. (CI's total did not change: both cores are busy to the end either way.)
SHARD = os.environ.get('RDR_TEST_SHARD', '')
# CPU-s of the heaviest files' any_distro tests (fresh-clone CI of 9f2eff1); only the balance of
# the shares depends on them
SHARD_CPU = {'test_kernel_cache.py': 40, 'test_identify_known_load.py': 37,
             'test_identify_cli.py': 36, 'test_payload_estimation.py': 26,
             'test_limits.py': 26, 'test_force_control.py': 21, 'test_identification.py': 13,
             'test_observer.py': 9, 'test_identification_realistic.py': 6, 'test_docs.py': 5,
             'test_stalls.py': 4, 'test_simulator_physics.py': 4, 'test_contact.py': 4,
             'test_every_description.py': 3}
ROS_MODULES = ('rclpy', 'rcl_interfaces', 'rosidl_runtime_py', 'ament_index_python', 'launch',
               'launch_ros')


class _NoRos:
    """A meta path finder that refuses ROS 2's modules (RDR_TEST_ANY_DISTRO=only)."""

    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0].endswith(('_msgs', '_srvs')) or any(
                name == m or name.startswith(m + '.') for m in ROS_MODULES):
            raise ImportError(f'{name}: a test marked any_distro imports ROS 2 (its result may '
                              f'depend on the distribution: do not mark it any_distro)')
        return None


if ANY_DISTRO == 'only':
    sys.meta_path.insert(0, _NoRos())


# The hang guard (s of wall time) of a subprocess an offline test runs: those tests run at idle
# CPU priority beside the ROS tests (dev.sh test, CI), and beside a busy core they get no CPU
# for minutes (fresh-clone CI beside one busy core: `robot-dynamics torques` past 120 s, a
# colcon build of 42 CPU-s past 600 s). It catches a hung process, not a slow one
HANG_GUARD = 1800

# Why the tests of ROS 2's launch system and CLI skip here: neither is on a package registry.
NO_LAUNCH = ("ROS 2's launch system (launch, launch_ros, launch_testing) is on no package "
             "registry: this test runs where ROS 2 is installed (colcon test in a workspace)")
NO_ROS2_CLI = ("the ros2 CLI is on no package registry: this test runs where ROS 2 is installed "
               "(colcon test in a workspace)")


def pytest_configure(config):
    for marker in ('copyright', 'flake8', 'linter', 'pep257', 'xmllint'):
        config.addinivalue_line('markers', f'{marker}: a code style check (ament linters)')
    config.addinivalue_line('markers', 'offline: starts no ROS process and no DDS participant '
                            '(dev.sh runs these beside the others, at idle CPU priority)')
    config.addinivalue_line('markers', 'any_distro: imports nothing of ROS 2, so its result is '
                            'the same on every distribution (CI runs it once, see ANY_DISTRO)')
    config.addinivalue_line('markers', 'distro: in a module marked any_distro, a test that does '
                            'depend on the distribution')
    config.addinivalue_line('markers', 'realtime: runs a closed loop in real time in this process '
                            '(a simulator_node started in real time counts by itself): no other '
                            "test session's ROS test runs beside it (realtime_lock)")
    if ANY_DISTRO not in ('', 'skip', 'only'):
        raise pytest.UsageError(f'RDR_TEST_ANY_DISTRO={ANY_DISTRO}: skip, only, or unset')
    if PART not in ('', 'ros', 'offline'):
        raise pytest.UsageError(f'RDR_TEST_PART={PART}: ros, offline, or unset for every test')
    if SHARD and shard() is None:
        raise pytest.UsageError(f'RDR_TEST_SHARD={SHARD}: i/n with 0 <= i < n, or unset')


def shard():
    """Return (i, n) of RDR_TEST_SHARD, or None when it is not one."""
    try:
        i, n = (int(x) for x in SHARD.split('/'))
    except ValueError:
        return None
    return (i, n) if 0 <= i < n else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Count each test's CPU time: this process's and its finished children's (the nodes)."""
    # the machine-wide lock (realtime_lock): shared by a ROS test, exclusive while a loop runs in
    # real time. Taken before the test's clock starts: --durations leaves the wait out
    ros = item.get_closest_marker('offline') is None
    if ros:
        LOCK.test_started(realtime=item.get_closest_marker('realtime') is not None)
    own, kids = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    yield
    if ros:
        LOCK.test_finished()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[item.nodeid] = (time.process_time() - own,
                        after.ru_utime + after.ru_stime - kids.ru_utime - kids.ru_stime)


def pytest_terminal_summary(terminalreporter):
    if CPU and terminalreporter.config.getoption('durations', None) is not None:
        # what the CI budget is made of on two saturated cores: CPU, not wall time
        top = sorted(CPU.items(), key=lambda kv: -sum(kv[1]))[:CPU_TOP]
        terminalreporter.write_sep('=', f'most CPU of {len(CPU)} tests (this process + children)')
        for nodeid, (own, kids) in top:
            terminalreporter.write_line(f'{own + kids:7.2f}s cpu ({own:6.2f} + {kids:6.2f})  '
                                        f'{nodeid}')
        terminalreporter.write_line(
            f'total {sum(a for a, _ in CPU.values()):.0f} s in this process + '
            f'{sum(b for _, b in CPU.values()):.0f} s in its children')
    if LOCK.waited >= 1.0:
        terminalreporter.write_line(
            f'waited {LOCK.waited:.0f} s for the lock that keeps real-time loops apart from '
            f'other test sessions ({LOCK.path})')
    if PART == 'offline' and terminalreporter.stats.get('failed'):
        terminalreporter.write_line(
            f'RDR_TEST_PART=offline: ROS_DOMAIN_ID={OFFLINE_DOMAIN} here, so rcl refuses DDS '
            f'("ROS_DOMAIN_ID is not an integral number"): a test that starts ROS processes '
            f'must not be marked offline')


def pytest_ignore_collect(collection_path, config):
    """RDR_TEST_ANY_DISTRO=only: import only the modules that mark tests any_distro."""
    if ANY_DISTRO == 'only' and collection_path.suffix == '.py' and \
            collection_path.name.startswith('test_'):
        return 'mark.any_distro' not in collection_path.read_text(encoding='utf-8')
    return None


def any_distro(item):
    """Return whether ``item``'s result cannot depend on the ROS 2 distribution."""
    return (item.get_closest_marker('any_distro') is not None
            and item.get_closest_marker('distro') is None)


def pytest_collection_modifyitems(config, items):
    """Keep the part of the suite RDR_TEST_PART, RDR_TEST_ANY_DISTRO and RDR_TEST_SHARD name."""
    keep, drop = [], []
    for item in items:
        offline = item.get_closest_marker('offline') is not None
        kept = (not PART or offline == (PART == 'offline')) and (
            not ANY_DISTRO or any_distro(item) == (ANY_DISTRO == 'only'))
        (keep if kept else drop).append(item)
    if SHARD:
        i, n = shard()
        share = shares({item.path for item in keep}, n)
        drop += [item for item in keep if share[item.path] != i]
        keep = [item for item in keep if share[item.path] == i]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def shares(paths, n):
    """Return path -> which of ``n`` shares: heaviest first (SHARD_CPU) to the lightest one."""
    load, share = [0.0] * n, {}
    for path in sorted(paths, key=lambda p: (-SHARD_CPU.get(p.name, 1.0), p.name)):
        k = min(range(n), key=lambda j: (load[j], j))
        share[path] = k
        load[k] += SHARD_CPU.get(path.name, 1.0)
    return share


def erd_root():
    """Return the robots/ folder of the example-robot-data wheel (a cmeel prefix)."""
    for base in (sysconfig.get_paths()['purelib'], sysconfig.get_paths()['platlib']):
        root = os.path.join(base, 'cmeel.prefix', 'share', 'example-robot-data', 'robots')
        if os.path.isdir(root):
            return root
    pytest.skip('example-robot-data is not installed')


# name -> path under robots/ (the robots the foundation issue asks to cross-check)
ROBOTS = {
    'ur5': 'ur_description/urdf/ur5_robot.urdf',
    'ur10': 'ur_description/urdf/ur10_robot.urdf',
    'panda': 'panda_description/urdf/panda.urdf',
    'xarm7': 'xarm_description/urdf/xarm7.urdf',
    'z1': 'z1_description/urdf/z1.urdf',
    'kinova': 'kinova_description/robots/kinova.urdf',
    'double_pendulum': 'double_pendulum_description/urdf/double_pendulum.urdf',
    'talos_left_arm': 'talos_data/robots/talos_left_arm.urdf',
    'baxter': 'baxter_description/urdf/baxter.urdf',
    'allegro': 'allegro_hand_description/urdf/allegro_right_hand.urdf',
    'solo12': 'solo_description/robots/solo12.urdf',
    'talos_reduced': 'talos_data/robots/talos_reduced.urdf',
    'so101': 'so_arm_description/urdf/so101.urdf',
}


# joint_states rate (Hz) as each arm's driver publishes it, for rigs that run at it: Universal
# Robots' 500 (their ros2_control driver's update rate; in lockstep half the steps of 1 kHz,
# issue 50), Franka's 1000; the others 1000
DRIVER_RATES = {'ur5': 500.0}


def driver_rate(name):
    """Return the joint_states rate (Hz) of arm ``name``'s driver (DRIVER_RATES, else 1000)."""
    return DRIVER_RATES.get(name, 1000.0)


def robot_urdf(name):
    path = os.path.join(erd_root(), ROBOTS[name])
    with open(path, encoding='utf-8') as f:
        return f.read()


def executable(name):
    """
    Return the path of an installed executable of this package.

    Where `ros2 run` looks (``lib/robot_dynamics_ros`` of the package's prefix: a colcon install,
    or the venv dev.sh links them into), else next to this Python (a plain pip install).
    """
    try:
        from ament_index_python.packages import get_package_prefix
        lib = os.path.join(get_package_prefix('robot_dynamics_ros'), 'lib', 'robot_dynamics_ros')
    except (ImportError, LookupError, OSError):
        lib = None
    exe = (lib and shutil.which(name, path=lib)) or shutil.which(
        name, path=os.path.dirname(sys.executable))
    assert exe, f'{name} is neither in {lib} nor next to {sys.executable}'
    return exe


def interrupt_group(proc, timeout=30):
    """
    Stop ``proc`` (started with start_new_session=True) as Ctrl-C would: SIGINT to its group.

    ``ros2 launch`` then stops its nodes; SIGKILL to the group if it has not exited in ``timeout``
    seconds. Nothing when it has exited already.
    """
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture(scope='module')
def ros():
    """
    Return rclpy, initialised for the module's tests (the one rclpy fixture of the suite).

    A module whose tests all need it says ``pytestmark = pytest.mark.usefixtures('ros')``.
    """
    rclpy = pytest.importorskip('rclpy')
    rclpy.init()
    yield rclpy
    rclpy.shutdown()


XACRO_ARM = 'rdr_test_arm_description'


@pytest.fixture
def xacro_arm(tmp_path, monkeypatch):
    """
    Return the path of test/data/xacro_arm's arm.urdf.xacro, installed as a package's share files.

    The folder becomes share/rdr_test_arm_description of an ament prefix in tmp_path, put first
    on AMENT_PREFIX_PATH (also for the processes a test starts), so that ``$(find ...)`` resolves
    through the ament index as in a workspace.
    """
    prefix = tmp_path / 'prefix'
    marker = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' / XACRO_ARM
    marker.parent.mkdir(parents=True)
    marker.touch()
    shutil.copytree(os.path.join(os.path.dirname(__file__), 'data', 'xacro_arm'),
                    prefix / 'share' / XACRO_ARM)
    monkeypatch.setenv('AMENT_PREFIX_PATH', os.pathsep.join(
        p for p in (str(prefix), os.environ.get('AMENT_PREFIX_PATH')) if p))
    return str(prefix / 'share' / XACRO_ARM / 'urdf' / 'arm.urdf.xacro')
