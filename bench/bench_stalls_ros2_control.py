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
A stalled joint_states stream behind the real ros2_control (issue 52).

bench_stalls.py's measurement, with ros2_control and MuJoCo in place of the project's simulator.

    R2C=/tmp/r2c ROS_DOMAIN_ID=23 [OT=zero] bash scripts/dev.sh run \
        python bench/bench_stalls_ros2_control.py [ARM: ur5] [gravity,computed_torque]

ros2_control_node (controller_manager, joint_state_broadcaster, an effort
ForwardCommandController, the MuJoCo plant ``mujoco_arm_hardware`` at 500 Hz), all built by
``../shared/ros2_control/recipe.sh all`` into $R2C (default /tmp/r2c; nothing of it is in the
project) -> /joint_states -> a relay in this process that holds them back for 0.12 and 0.3 s ->
feedforward_node (config/feedforward.yaml; ``OT``: its on_timeout) -> /effort_controller/commands.
ARM: one of bench_stalls.ARMS (ur5 by default). Per mode and gap it prints bench_stalls'
figures (``stall``: the largest move of a joint until 1 s after the stream is back, rad; the
fastest joint in that second, rad/s) and what the controller warned. The arm's description
is its example-robot-data URDF without visuals and collisions, with a <ros2_control> block.
"""
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(os.path.dirname(ROOT), 'shared', 'ros2_control')
sys.path.insert(0, os.path.join(ROOT, 'bench'))
from bench_stalls import APART, ARMS, MAX_BACK, MAX_DROP, said, SETTLE, stall  # noqa: E402
from benchlib import erd_urdf  # noqa: E402
from robot_dynamics_ros.dynamics import RobotModel  # noqa: E402

R2C = os.environ.get('R2C', '/tmp/r2c')
DOMAIN = os.environ.get('ROS_DOMAIN_ID', '23')
GAPS = (0.12, 0.3)
# the controllers: joint_state_broadcaster and an effort ForwardCommandController, at 500 Hz
CONTROLLERS = """controller_manager:
  ros__parameters:
    update_rate: 500
    joint_state_broadcaster:
      type: joint_state_broadcaster/JointStateBroadcaster
    effort_controller:
      type: forward_command_controller/ForwardCommandController
effort_controller:
  ros__parameters:
    joints: {joints}
    interface_name: effort
"""
# run in $R2C's venv (controller_manager_msgs is built there): the description on
# /robot_description, both controllers loaded, configured and activated
LOADER = """
import sys, time, rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from controller_manager_msgs.srv import ConfigureController, LoadController, SwitchController
rclpy.init()
node = rclpy.create_node("stall_loader")
qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                 reliability=ReliabilityPolicy.RELIABLE)
pub = node.create_publisher(String, "/robot_description", qos)
pub.publish(String(data=open(sys.argv[1]).read()))
def call(client, request):
    assert client.wait_for_service(timeout_sec=30), client.srv_name
    future = client.call_async(request)
    rclpy.spin_until_future_complete(node, future, timeout_sec=30)
    return future.result()
cm = "/controller_manager/"
load = node.create_client(LoadController, cm + "load_controller")
configure = node.create_client(ConfigureController, cm + "configure_controller")
switch = node.create_client(SwitchController, cm + "switch_controller")
names = ["joint_state_broadcaster", "effort_controller"]
for name in names:
    for _ in range(40):
        if call(load, LoadController.Request(name=name)).ok:
            break
        time.sleep(0.5)
    assert call(configure, ConfigureController.Request(name=name)).ok, name
request = SwitchController.Request(activate_controllers=names, strictness=2, activate_asap=True)
request.timeout.sec = 5
print("controllers active:", call(switch, request).ok, flush=True)
time.sleep(2.0)
"""


def description(arm, work):
    """Write the arm's URDF for MuJoCo and ros2_control; return (its path, the joints)."""
    rel, q0 = ARMS[arm]
    with open(erd_urdf(rel), encoding='utf-8') as f:
        xml = f.read()
    xml = re.sub(r'<(visual|collision)\b.*?</\1>', '', xml, flags=re.S)
    joints = list(RobotModel.from_urdf(xml).joint_names)[:len(q0)]
    path = os.path.join(work, f'{arm}_mujoco.urdf')
    block = ['<ros2_control name="mujoco" type="system"><hardware>',
             '<plugin>mujoco_arm_hardware/MujocoArmSystem</plugin>',
             f'<param name="model">{path}</param></hardware>']
    for joint, q in zip(joints, q0):
        block.append(f'<joint name="{joint}"><command_interface name="effort"/>'
                     f'<state_interface name="position"><param name="initial_value">{q}</param>'
                     f'</state_interface><state_interface name="velocity"/>'
                     f'<state_interface name="effort"/></joint>')
    block.append('</ros2_control>')
    with open(path, 'w', encoding='utf-8') as f:
        f.write(xml.replace('</robot>', '\n'.join(block) + '\n</robot>'))
    return path, joints


def start_ros2_control(urdf, joints, work):
    """Start ros2_control_node from $R2C and activate its controllers; return the process."""
    lines = subprocess.run(['bash', os.path.join(HERE, 'recipe.sh'), 'env'], capture_output=True,
                           text=True, cwd=ROOT, env=dict(os.environ, R2C=R2C,
                                                         ROS_DOMAIN_ID=DOMAIN)).stdout
    env = dict(os.environ)
    env.update(re.findall(r"export (\w+)='([^']*)'", lines))
    env.update(ROS_DOMAIN_ID=DOMAIN, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               RMW_IMPLEMENTATION='rmw_fastrtps_cpp')
    yaml = os.path.join(work, 'controllers.yaml')
    with open(yaml, 'w', encoding='utf-8') as f:
        f.write(CONTROLLERS.format(joints=joints))
    node = subprocess.Popen(
        [os.path.join(R2C, 'install', 'lib', 'controller_manager', 'ros2_control_node'),
         '--ros-args', '--params-file', yaml],
        env=dict(env, LD_PRELOAD=env['R2C_PRELOAD']), stdout=open(f'{work}/cm.log', 'w'),
        stderr=subprocess.STDOUT)
    loaded = subprocess.run([os.path.join(R2C, 'venv', 'bin', 'python'), '-c', LOADER, urdf],
                            env=env, capture_output=True, text=True, timeout=120)
    print(loaded.stdout.strip(), loaded.stderr.strip()[-500:])
    return node


def main():
    arm = sys.argv[1] if len(sys.argv) > 1 else 'ur5'
    modes = sys.argv[2].split(',') if len(sys.argv) > 2 else ['gravity', 'computed_torque']
    if not os.path.isfile(os.path.join(R2C, 'install', 'lib', 'libmujoco_arm_hardware.so')):
        raise SystemExit(f'no ros2_control with the MuJoCo plant in R2C={R2C}: build it with '
                         f'{HERE}/recipe.sh all (about 11 min)')
    work = tempfile.mkdtemp(prefix='stalls_ros2_control_')
    urdf, joints = description(arm, work)
    cm = start_ros2_control(urdf, joints, work)
    os.environ.update(ROS_DOMAIN_ID=DOMAIN, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    rclpy.init(args=[])
    node = rclpy.create_node('stall_relay')
    hold_until, seen = [0.0], []
    pub = node.create_publisher(JointState, 'relayed_states', 100)

    def relay(m):
        idx = [list(m.name).index(j) for j in joints]
        seen.append((time.monotonic(), np.array(m.position)[idx], np.array(m.velocity)[idx]))
        if time.monotonic() >= hold_until[0]:
            pub.publish(m)
    node.create_subscription(JointState, '/joint_states', relay, 100)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    exe = os.path.join(os.path.dirname(sys.executable), 'feedforward_node')
    cfg = os.path.join(ROOT, 'robot_dynamics_ros', 'config', 'feedforward.yaml')
    try:
        for mode in modes:
            log = f'{work}/controller_{mode}.log'
            ctrl = subprocess.Popen(
                [exe, '--ros-args', '--params-file', cfg, '-p', f'urdf_file:={urdf}',
                 '-p', f'mode:={mode}', '-r', 'joint_states:=relayed_states',
                 '-p', f'on_timeout:={os.environ.get("OT", "gravity")}'],
                stdout=open(log, 'w'), stderr=subprocess.STDOUT)
            end = time.monotonic() + 30
            while time.monotonic() < end and 'model "' not in open(log).read():
                time.sleep(0.1)
            time.sleep(SETTLE)
            for gap in GAPS:
                mark = os.path.getsize(log)
                now = time.monotonic()
                rate = sum(1 for t, _, _ in seen if now - 1.0 <= t < now)
                drop, back = stall(seen, hold_until, gap)
                over = '' if drop <= MAX_DROP and back <= MAX_BACK else 'OVER '
                print(f'{arm} {mode:16s} gap {gap:.2f} s: drop {drop:.4f} rad, back {back:.3f} '
                      f'rad/s (joint_states at {rate} Hz); {over}said: {said(log, mark)}',
                      flush=True)
                time.sleep(APART)
            ctrl.send_signal(2)
            ctrl.wait(10)
    finally:
        cm.send_signal(2)
        try:
            cm.wait(10)
        except subprocess.TimeoutExpired:
            cm.kill()
        executor.shutdown()
        rclpy.shutdown()
    print('logs:', work)


if __name__ == '__main__':
    main()
