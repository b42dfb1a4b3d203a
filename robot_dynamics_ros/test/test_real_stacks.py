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
feedforward_node and simulator_node with descriptions and driver set-ups as real stacks have them.

Each node in its own process over real rclpy: an arm and its gripper publishing joint_states
separately, a description with <ros2_control> blocks, a params YAML written with integers, names
unknown, duplicated and missing, bad parameters, --help.
"""
import os
import re
import subprocess
import time

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402

from robot_dynamics_ros.dynamics import RobotModel, example_urdf, gravity_torques  # noqa: E402
from robot_dynamics_ros.nodes.description import DESCRIPTION_QOS  # noqa: E402

from conftest import robot_urdf  # noqa: E402
from ros_harness import (CONFIG, NodeProcess, Peer, answered, executable,  # noqa: E402
                         set_parameters, spin_once)
from test_every_description import stack_description  # noqa: E402

ARM = [f'panda_joint{i}' for i in range(1, 8)]
FINGERS = ['panda_finger_joint1', 'panda_finger_joint2']
Q_ARM = np.array([0.1, -0.5, 0.3, -2.0, 0.2, 1.6, 0.7])


def start(tmp_path, name, ns, *args, params_file=True, env=None):
    base = ['--params-file', os.path.join(CONFIG, 'feedforward.yaml')] if params_file else []
    proc = NodeProcess('feedforward_node', base + ['-r', f'__ns:=/{ns}', *args],
                       tmp_path / f'{name}.log', env=env)
    peer = Peer(f'{name}_peer', target=f'{ns}/inverse_dynamics_controller',
                command_topic=f'/{ns}/effort_controller/commands')
    peer.js_pub = peer.node.create_publisher(JointState, f'/{ns}/joint_states', 10)
    peer.desc_pub = peer.node.create_publisher(String, f'/{ns}/robot_description',
                                               DESCRIPTION_QOS)
    return proc, peer


def stop(proc, peer):
    peer.destroy()
    proc.stop()


def streams(peer, seconds, arm=None, gripper=None, arm_period=0.002, gripper_period=0.01):
    """Publish the arm's and the gripper's joint_states as two drivers would, each at its rate."""
    end, next_arm, next_grip = time.monotonic() + seconds, 0.0, 0.0
    while time.monotonic() < end:
        now = time.monotonic()
        if arm is not None and now >= next_arm:
            peer.publish_state(ARM, arm, np.zeros(7))
            next_arm = now + arm_period
        if gripper is not None and now >= next_grip:
            peer.publish_state(FINGERS, gripper, [0.0, 0.0])
            next_grip = now + gripper_period
        spin_once(peer.node, timeout_sec=0.001)


def panda_gravity(q_arm, fingers):
    model = RobotModel.from_urdf(robot_urdf('panda'))
    q = np.zeros(model.n)
    q[[model.index(j) for j in ARM]] = q_arm
    q[[model.index(j) for j in FINGERS]] = fingers
    return model, gravity_torques(model, q)


def test_arm_and_gripper_streams_merge_into_one_steady_command(ros, tmp_path):
    # state_timeout 1 s: this is about merging (stale streams have their own test below); a
    # 0.1-0.3 s stall of the loaded machine made the node command zero, as it must, mid-window
    proc, peer = start(tmp_path, 'merge', 'merge', '-p', f'joints:={ARM}'.replace("'", '"'),
                       '-p', 'state_timeout:=1.0')
    try:
        peer.publish_description(robot_urdf('panda'))
        assert proc.wait_log('model "', 20), proc.log()
        model, g = panda_gravity(Q_ARM, [0.04, 0.04])
        expected = g[[model.index(j) for j in ARM]]
        streams(peer, 1.0, arm=Q_ARM, gripper=[0.04, 0.04])     # discovery, first messages
        n = len(peer.commands)
        streams(peer, 1.5, arm=Q_ARM, gripper=[0.04, 0.04])
        cmds = np.array(peer.commands[n:])
        assert len(cmds) > 100, len(cmds)
        # every command: gravity at the merged state (the gripper's messages no longer reset the
        # arm joints to default positions, which made the torque flip at the message rate)
        assert np.abs(cmds - expected).max() < 1e-9, np.abs(cmds - expected).max(axis=0)
        # the gripper's messages update the state but command nothing on their own: about one
        # command per arm message (500 Hz over 1.5 s), not per message of either stream
        assert len(cmds) < 1.5 * 500 * 1.3, len(cmds)
    finally:
        stop(proc, peer)


def test_a_commanded_joint_missing_or_stale_gives_the_timeout_behaviour(ros, tmp_path):
    proc, peer = start(tmp_path, 'stale', 'stale', '-p', 'on_timeout:=gravity')
    # (before the stream starts: building the model here while the stream paused took over
    # the node's 0.1 s in a fresh-clone CI, Jazzy, and the node named all nine joints missing)
    model, g_default = panda_gravity(Q_ARM, [0.0, 0.0])
    try:
        peer.publish_description(robot_urdf('panda'))          # commands all 9 joints
        # the arm's driver streams from the start, as a real one does, without a pause: states
        # that came first 0.1 s after the model (a 0.05 s poll of the log, then a loaded
        # machine) made the node name all nine joints missing, once, and never the fingers alone
        end = time.monotonic() + 20
        while 'model "' not in proc.log() and time.monotonic() < end:
            streams(peer, 0.05, arm=Q_ARM)
        assert 'model "' in proc.log(), proc.log()
        # only the arm reports: the fingers are missing -> on_timeout (gravity at what is known)
        streams(peer, 1.0, arm=Q_ARM)
        assert proc.wait_log("no joint_states yet for ['panda_finger_joint1', "
                             "'panda_finger_joint2']", 5), proc.log()
        assert proc.log().count('no joint_states yet for') == 1          # logged once
        assert np.abs(peer.commands[-1] - g_default).max() < 1e-9
        # the gripper joins: fresh state, gravity at the merged state
        _, g = panda_gravity(Q_ARM, [0.03, 0.03])
        streams(peer, 0.6, arm=Q_ARM, gripper=[0.03, 0.03])
        assert np.abs(peer.commands[-1] - g).max() < 1e-9
        # the gripper stops: its joints go stale after state_timeout, named in the log
        streams(peer, 0.6, arm=Q_ARM)
        assert proc.wait_log("joint_states of ['panda_finger_joint1', 'panda_finger_joint2'] "
                             "are", 5), proc.log()
        assert 'commanding gravity torque' in proc.log()
    finally:
        stop(proc, peer)


def test_foreign_duplicated_and_short_messages(ros, tmp_path):
    # on_timeout zero: a command apart from the last fresh one (gravity's would equal it)
    proc, peer = start(tmp_path, 'names', 'names', '-p', 'state_timeout:=0.5',
                       '-p', 'on_timeout:=zero')
    try:
        peer.publish_description(robot_urdf('panda'))
        assert proc.wait_log('model "', 20), proc.log()
        peer.state = (ARM + FINGERS, list(Q_ARM) + [0.02, 0.02], [0.0] * 9)
        # until the states reach the node (discovery: a loaded CI machine took over the 1 s that
        # was waited here, Kilted, and the command read was still on_timeout's zero)
        assert peer.spin_until(lambda: peer.commands and not np.allclose(peer.commands[-1], 0),
                               10.0), proc.log()
        peer.spin(0.5)
        # a fresh state's command: beside the whole suite the newest command read here was once
        # on_timeout's zero (ci76, Jazzy; states from this process late by over state_timeout
        # is the only way there I know of)
        assert peer.spin_until(lambda: not np.allclose(peer.commands[-1], 0), 10.0), proc.log()
        good = peer.commands[-1].copy()
        # a message naming none of the model's joints refreshes nothing
        peer.state = (['wheel_left', 'wheel_right'], [1.0, 2.0], [])
        peer.spin(0.3)
        assert proc.wait_log("joint_states names none of the model's joints", 5), proc.log()
        # a message naming a joint twice is refused
        peer.state = (ARM + [ARM[0]], list(Q_ARM) + [3.0], [])
        peer.spin(0.4)
        assert proc.wait_log("rejected joint_states: names joints twice: ['panda_joint1']", 5)
        # neither refreshed the state: after state_timeout the command is on_timeout's zero
        peer.state = None
        ok, got = peer.command_close_to(np.zeros(9), timeout=3.0)
        assert ok, got
        assert not np.allclose(good, 0)
        # each reason logged at most once per few seconds, not per message
        log = proc.log()
        assert log.count('names none of the model') == 1 and log.count('twice') == 1, log
    finally:
        stop(proc, peer)


def test_ros2_control_blocks_set_the_command_order(ros, tmp_path):
    _, stacked = stack_description()           # effort interfaces: joint2, then joint1
    proc, peer = start(tmp_path, 'rc', 'rc')
    try:
        peer.publish_description(stacked)
        assert proc.wait_log("command order ['joint2', 'joint1'] (the effort command interfaces "
                             "of the description's <ros2_control> blocks", 20), proc.log()
        q = np.array([0.4, -0.9])
        peer.state = (['joint1', 'joint2'], q, [0.0, 0.0])
        g = gravity_torques(RobotModel.from_urdf(stacked), q)
        ok, got = peer.command_close_to(g[::-1])
        assert ok, (g, got)
    finally:
        stop(proc, peer)


INT_YAML = '''/**:
  ros__parameters:
    mode: computed_torque
    joints: [joint1]
    kp: [400]
    kd: [40]
    rate: 100
    state_timeout: 1
    effort_limits: {joint1: 50}
    default_positions: {joint2: 1}
    effort_limits.joint_1: 10
'''


def test_a_yaml_written_with_integers_and_a_typo(ros, tmp_path):
    params = tmp_path / 'ints.yaml'
    params.write_text(INT_YAML)
    proc, peer = start(tmp_path, 'ints', 'ints', '--params-file', str(params), params_file=False)
    try:
        peer.publish_description(open(example_urdf('planar_2r')).read())
        assert proc.wait_log('model "', 20), proc.log()
        assert peer.params.wait_for_services(timeout_sec=10)
        got = answered(lambda: peer.params.get_parameters(
            ['kp', 'kd', 'rate', 'state_timeout', 'effort_limits.joint1',
             'default_positions.joint2']), peer.spin_until)
        values = [v.double_value if v.type == 3 else list(v.double_array_value)
                  for v in got.values]
        assert values == [[400.0], [40.0], 100.0, 1.0, 50.0, 1.0], values
        # the typo is named, with the joint meant, and the node runs on without it
        assert proc.wait_log('ignoring parameter effort_limits.joint_1: "joint_1" is not a '
                             'movable joint of planar_2r (did you mean "joint1"?)', 5), proc.log()
        # integers at runtime too (ros2 param set ... kp "[300]" sends an INTEGER_ARRAY)
        got = set_parameters(peer.params, peer.spin_until,
                             {'kp': [300], 'effort_limits.joint1': 60})
        assert all(r.successful for r in got.results), got.results
        peer.state = (['joint1'], [0.0], [0.0])          # joint2 at its default position 1.0
        g = gravity_torques(RobotModel.from_urdf_file(example_urdf('planar_2r')),
                            np.array([0.0, 1.0]))
        assert g[0] > 100                               # clamped to the new limit, 60 N m
        ok, got = peer.command_close_to([60.0], timeout=5)
        assert ok, got
        # joint2 never came: named once, with the default position it takes
        assert peer.spin_until(lambda: "no joint_states for ['joint2']: they stay at "
                               "default_positions [1.0]" in proc.log(), 5), proc.log()
        assert proc.log().count('no joint_states for') == 1
        assert 'Traceback' not in proc.log()
    finally:
        stop(proc, peer)


def test_bad_parameters_are_refused_naming_them(ros, tmp_path):
    proc, peer = start(tmp_path, 'badp', 'badp', '-p', 'payload.mass:=-2.0',
                       '-p', 'payload.link:=tool0')
    try:
        xml = open(example_urdf('planar_2r')).read()
        peer.publish_description(xml)
        assert proc.wait_log('model "', 20), proc.log()
        assert 'payload.mass must be >= 0 (kg), got -2.0' in proc.log()
        for values, reason in [
                (dict(payload__mass=-1.0), 'payload.mass must be >= 0'),
                (dict(payload__link='tool1'), 'payload.link "tool1" is not a link of planar_2r '
                                              '(did you mean "tool0"?)'),
                (dict(robot_description='<robot name="x"><link name="a"/>'),
                 'robot_description does not parse'),
                (dict(robot_description='<robot name="x"><link name="a"/></robot>'),
                 'no movable joint')]:
            results = peer.set_params(**values)
            assert not results[0].successful and reason in results[0].reason, results[0].reason
        # a good payload is taken: 2 kg at the 2R's tip
        results = peer.set_params(payload__link='tool0', payload__mass=2.0)
        assert all(r.successful for r in results)
        peer.state = (['joint1', 'joint2'], [0.0, 0.0], [])
        model = RobotModel.from_urdf(xml)
        ok, got = peer.command_close_to(
            gravity_torques(model, np.zeros(2)) + np.array([2 * 9.81 * 1.8, 2 * 9.81 * 0.8]))
        assert ok, got
        assert proc.alive()
    finally:
        stop(proc, peer)


@pytest.mark.parametrize('name', ['feedforward_node', 'simulator_node'])
def test_help(name):
    r = subprocess.run([executable(name), '--help'], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f'usage: {name}')
    assert 'parameters (default):' in r.stdout and 'publishes:' in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 200


def test_the_simulator_starts_any_arm_inside_its_limits(ros, tmp_path):
    """
    Start without initial_positions.

    Panda (no <ros2_control>) starts at zero clamped to 10 % of the range inside its limits
    (joint4's range is [-3.07, -0.07]: -0.37, off its stop); the 2R arm at its <ros2_control>
    initial values.
    """
    from conftest import ROBOTS, erd_root
    panda = os.path.join(erd_root(), ROBOTS['panda'])
    model = RobotModel.from_urdf_file(panda)
    lo, hi = model.position_limits.T
    zero = np.clip(np.zeros(model.n), lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo))
    assert zero[3] == pytest.approx(-0.07 - 0.3, abs=0.01)
    for urdf, expect, why in [
            (example_urdf('planar_2r'), [1.5708, -3.1416],
             'the initial_value of the <ros2_control> position state'),
            (panda, np.round(zero, 4).tolist(), 'zero clamped to 10% of the range inside')]:
        proc = NodeProcess('simulator_node', ['-r', '__ns:=/anyarm', '-p', f'urdf_file:={urdf}'],
                           tmp_path / 'anyarm.log')
        node = rclpy.create_node('anyarm_peer', namespace='/anyarm')
        states = []
        node.create_subscription(JointState, 'joint_states', states.append, 10)
        try:
            assert proc.wait_log(f'initial pose {expect} ({why}', 20), proc.log()
            assert proc.wait_log('holding the initial pose (brakes engaged) until the first '
                                 'effort', 5), proc.log()
            end = time.monotonic() + 10
            while len(states) < 500 and time.monotonic() < end:
                spin_once(node, timeout_sec=0.05)
            # no command: the arm holds its initial pose (it does not fall onto its stops)
            assert len(states) >= 500 and proc.alive(), proc.log()
            q = np.array([m.position for m in states])
            np.testing.assert_allclose(q, np.tile(q[0], (len(q), 1)), atol=0)
            np.testing.assert_allclose(q[0], expect, atol=1e-4)
            assert np.all(np.array([m.velocity for m in states]) == 0.0)
        finally:
            node.destroy_node()
            proc.stop()


def test_the_simulator_takes_the_ros2_control_command_order(ros, tmp_path):
    _, stacked = stack_description()
    urdf = tmp_path / 'stack.urdf'
    urdf.write_text(stacked)
    proc = NodeProcess('simulator_node', ['-r', '__ns:=/simrc', '-p', f'urdf_file:={urdf}'],
                       tmp_path / 'simrc.log')
    node = rclpy.create_node('simrc_peer', namespace='/simrc')
    states = []
    node.create_subscription(JointState, 'joint_states', states.append, 10)
    pub = node.create_publisher(Float64MultiArray, 'effort_controller/commands', 10)
    try:
        assert proc.wait_log("command order ['joint2', 'joint1']", 20), proc.log()
        assert 'initial pose [1.25, -0.5]' in proc.log()
        end = time.monotonic() + 10
        while time.monotonic() < end:
            pub.publish(Float64MultiArray(data=[7.0, -3.0]))       # joint2, joint1
            spin_once(node, timeout_sec=0.01)
            if states and list(states[-1].effort) == [-3.0, 7.0]:
                break
        assert states and list(states[-1].effort) == [-3.0, 7.0]     # in model order
    finally:
        node.destroy_node()
        proc.stop()


FLANGE = '''  <joint name="flange_joint" type="revolute">
    <parent link="link2"/><child link="flange"/><origin xyz="1 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="5" velocity="2"/>
  </joint>
  <link name="flange"/>
</robot>'''


def test_a_joint_that_moves_no_mass_is_refused_by_the_simulator_unless_it_has_armature(
        ros, tmp_path):
    """
    A tool flange declared revolute with nothing on it: the mass matrix is singular.

    The simulator refuses the model at load naming the joint and the armature parameter (it used
    to die in its integration thread); with an armature it simulates, and the flange's rotor
    accelerates by torque / armature.
    """
    with open(example_urdf('planar_2r'), encoding='utf-8') as f:
        xml = f.read().replace('</robot>', FLANGE)
    urdf = tmp_path / 'flange.urdf'
    urdf.write_text(xml)
    proc = NodeProcess('simulator_node', ['-r', '__ns:=/flange', '-p', f'urdf_file:={urdf}',
                                          '-p', 'joints:=[joint1, joint2, flange_joint]'],
                       tmp_path / 'flange.log')
    try:
        assert proc.wait_log('cannot simulate the model', 20), proc.log()
        assert 'flange_joint' in proc.log() and 'armature' in proc.log() and proc.alive()
    finally:
        proc.stop()
    proc = NodeProcess('simulator_node', ['-r', '__ns:=/flange', '-p', f'urdf_file:={urdf}',
                                          '-p', 'joints:=[joint1, joint2, flange_joint]',
                                          '-p', 'armature:=[0.0, 0.0, 0.01]',
                                          '-p', 'hold_until_command:=false'],
                       tmp_path / 'flange2.log')
    node = rclpy.create_node('flange_peer', namespace='/flange')
    states = []
    node.create_subscription(JointState, 'joint_states', states.append, 10)
    pub = node.create_publisher(Float64MultiArray, 'effort_controller/commands', 10)
    model = RobotModel.from_urdf(xml)
    try:
        assert proc.wait_log('simulating', 20), proc.log()
        end = time.monotonic() + 10
        while time.monotonic() < end and (len(states) < 50 or states[-1].velocity[2] < 1.0):
            q = np.array(states[-1].position) if states else np.zeros(3)
            tau = gravity_torques(model, q)
            tau[2] = 0.01                       # 1 rad/s^2 on a 0.01 kg m^2 rotor
            pub.publish(Float64MultiArray(data=tau.tolist()))
            spin_once(node, timeout_sec=0.01)
        assert states and states[-1].velocity[2] >= 1.0, proc.log()
        assert 'simulation stopped' not in proc.log()
    finally:
        node.destroy_node()
        proc.stop()


def test_slow_joint_states_get_one_warning_naming_the_rate_and_parameter(ros, tmp_path):
    proc, peer = start(tmp_path, 'slow', 'slow')         # state_timeout 0.1 s
    try:
        peer.publish_description(open(example_urdf('planar_2r')).read())
        assert proc.wait_log('model "', 20), proc.log()
        end = time.monotonic() + 3.0
        while time.monotonic() < end:                     # a 5 Hz driver
            peer.publish_state(['joint1', 'joint2'], [0.1, 0.2], [0.0, 0.0])
            peer.spin(0.2)
        assert proc.wait_log('joint_states arrive at', 5), proc.log()
        log = proc.log()
        assert re.search(r'joint_states arrive at (4\.[5-9]|5\.[0-2]) Hz', log), log
        assert 'raise the state_timeout parameter above' in log
        assert log.count('joint_states arrive at') == 1
        # the stale / back transitions at 5 Hz are logged at most once per 5 s each
        assert log.count('joint_states are back') <= 1, log
    finally:
        stop(proc, peer)


@pytest.mark.parametrize('name', ['feedforward_node', 'simulator_node'])
def test_ctrl_c_during_the_first_compile_exits_cleanly(tmp_path, name):
    """
    A fresh install compiles the kernels at the first start (seconds).

    Ctrl-C then must not print a traceback from the import, and the exit status is 0.
    """
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / 'numba-cache'))   # an empty cache
    proc = subprocess.Popen([executable(name), '--ros-args', '-r', '__ns:=/cold'], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(2.0)                     # well inside the compile (~10 s cold)
    proc.send_signal(2)                 # SIGINT, as Ctrl-C
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert 'Traceback' not in out and 'KeyboardInterrupt' not in out, out


def test_a_fresh_install_commands_while_the_observers_kernel_compiles(ros, tmp_path):
    """
    On an empty numba cache the observer's kernel compiles in a child process.

    The first command waits for the kernels of its mode and of the limits layer only (the child
    compiles on the other core, ~4 s); external torques start once the child has filled the
    cache and the node has loaded it, and settle at 0 at rest (the commanded gravity torque
    holds the arm: r = 0). A second
    start on that cache loads both and starts no child.
    """
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / 'numba-cache'))   # an empty cache
    with open(example_urdf('planar_2r'), encoding='utf-8') as f:
        xml = f.read()
    for run in ('fresh', 'cached'):
        proc, peer = start(tmp_path, run, run, env=env)
        external, first = [], {}
        peer.node.create_subscription(JointState, f'/{run}/inverse_dynamics_controller/'
                                      'external_torques', external.append, 100)
        try:
            peer.publish_description(xml)
            peer.state = (['joint1', 'joint2'], [0.3, -0.4], [0.0, 0.0])
            assert peer.spin_until(lambda: peer.commands, 60), proc.log()
            first['command'], first['log'] = len(external), proc.log()
            # at rest: once the efforts have ramped to g (limits.max_torque_rate: from the
            # on_timeout zero the wait for the observer's kernel may have sent) r is 0
            assert peer.spin_until(lambda: len(external) > 50 and np.abs(
                [m.effort for m in external[-20:]]).max() < 1e-6, 60), \
                (run, np.array([m.effort for m in external[-5:]]), proc.log())
            log = proc.log()
            if run == 'fresh':
                assert first['command'] == 0, 'external torques before the first command'
                assert 'compiling it in a separate process' in first['log'], first['log']
                assert 'kernels for mode gravity ready' in first['log'], first['log']
                assert 'observer: kernel ready' in log and 'failed' not in log, log
            else:
                assert 'kernels for mode gravity and the observer ready' in log, log
                assert 'separate process' not in log, log
        finally:
            stop(proc, peer)


@pytest.mark.parametrize('name', ['feedforward_node', 'simulator_node'])
def test_ctrl_c_twice_exits_cleanly(tmp_path, name):
    """
    ros2 launch signals each process and its group.

    SIGINT arrives twice, a few ms apart, at any point of the clean-up. Exit status 0 and no
    traceback, every time.
    """
    args = ['-p', f'urdf_file:={example_urdf()}'] if name == 'simulator_node' else []
    for k in range(5):
        # PYTHONFAULTHANDLER: a crash prints every thread's Python stack into ``out``
        proc = subprocess.Popen([executable(name), '--ros-args', '-r', f'__ns:=/twice{k}', *args],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=dict(os.environ, PYTHONFAULTHANDLER='1'))
        time.sleep(1.5)
        proc.send_signal(2)
        time.sleep(0.002 * k)
        proc.send_signal(2)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out
        assert 'Traceback' not in out and 'KeyboardInterrupt' not in out, out


def test_the_controller_computes_with_the_armature_and_friction_compensation(ros, tmp_path):
    """
    Rotor inertias and friction compensation, as the service reports them.

    armature:=[...] adds the rotor inertias to the mass matrix the controller computes with;
    friction_compensation:=0.5 with damping/friction parameters adds half of b qd + fc tanh(qd /
    0.01), reported as the service's friction part.
    """
    from robot_dynamics_msgs.srv import InverseDynamics
    from robot_dynamics_ros.dynamics import rnea
    proc, peer = start(tmp_path, 'arm_rotor', 'rotor', '-p', 'armature:=[0.1, 0.2]',
                       '-p', 'friction_compensation:=0.5', '-p', 'damping:=[0.4, 0.3]',
                       '-p', 'friction:=[2.0]')
    try:
        with open(example_urdf('planar_2r'), encoding='utf-8') as f:
            xml = f.read()
        peer.publish_description(xml)
        assert proc.wait_log('model "planar_2r"', 20), proc.log()
        client = peer.node.create_client(InverseDynamics,
                                         '/rotor/inverse_dynamics_controller/inverse_dynamics')
        q, qd, qdd = [0.3, -0.2], [0.5, 1.0], [1.0, -2.0]
        answer = peer.call(client, InverseDynamics.Request(
            name=['joint1', 'joint2'], position=q, velocity=qd, acceleration=qdd))
        assert answer.success, answer.message
        model = RobotModel.from_urdf(xml)
        friction = 0.5 * (np.array([0.4, 0.3]) * qd + 2.0 * np.tanh(np.array(qd) / 0.01))
        np.testing.assert_allclose(answer.friction, friction, atol=1e-12)
        np.testing.assert_allclose(answer.effort, rnea(model.with_armature([0.1, 0.2]), q, qd,
                                                       qdd) + friction, atol=1e-9)
        np.testing.assert_allclose(np.array(answer.effort) - friction - rnea(model, q, qd, qdd),
                                   [0.1 * 1.0, 0.2 * -2.0], atol=1e-9)
    finally:
        stop(proc, peer)
