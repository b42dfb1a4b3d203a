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
feedforward.launch.py under launch_testing, driving an arm described by the test.

With a params file (the file's mode), with mode:= (it overrides), with namespace:= (every
relative topic and the node move there): the test plays the driver (robot_description, transient
local, and joint_states) and checks the parameter, the effort commands (g(q): no trajectory yet)
and the inverse-dynamics service. After the launch shuts down the node exited with code 0 and
printed no traceback.
"""
import tempfile
import unittest

import numpy as np
import pytest

from conftest import NO_LAUNCH

pytest.importorskip('launch_testing', reason=NO_LAUNCH)

import launch_testing  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
import rclpy  # noqa: E402
from launch import LaunchDescription  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from robot_dynamics_ros.dynamics import RobotModel, example_urdf, gravity_torques  # noqa: E402
from robot_dynamics_ros.nodes.description import DESCRIPTION_QOS  # noqa: E402

from launch_helpers import assert_clean_exit, get_param, include, inverse_dynamics  # noqa: E402
from ros_harness import Peer  # noqa: E402

PARAMS = '''/**:
  ros__parameters:
    mode: feedforward
    kp: [50]
'''


def topic(namespace, name):
    return f'/{namespace}/{name}' if namespace else f'/{name}'


@launch_testing.parametrize('arguments, namespace, mode', [
    ({}, '', 'feedforward'),                                # the file decides
    ({'mode': 'gravity'}, '', 'gravity'),                   # given: it overrides
    ({'namespace': 'left_arm'}, 'left_arm', 'feedforward'),
])
@pytest.mark.launch_test
def generate_test_description(arguments, namespace, mode):
    params = tempfile.NamedTemporaryFile('w', suffix='.yaml', delete=False)
    params.write(PARAMS)
    params.close()
    return LaunchDescription([include('feedforward.launch.py', params_file=params.name,
                                      **arguments),
                              launch_testing.actions.ReadyToTest()])


class TestFeedforward(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        rclpy.init()

    @classmethod
    def tearDownClass(cls):
        rclpy.shutdown()

    def test_drives_a_described_arm(self, namespace, mode):
        target = topic(namespace, 'inverse_dynamics_controller')
        model = RobotModel.from_urdf_file(example_urdf())
        peer = Peer(f'ff_peer_{mode}', target=target.lstrip('/'),
                    command_topic=topic(namespace, 'effort_controller/commands'))
        try:
            self.assertEqual(get_param(peer.node, target, 'mode'), mode)
            description = peer.node.create_publisher(
                String, topic(namespace, 'robot_description'), DESCRIPTION_QOS)
            states = peer.node.create_publisher(JointState, topic(namespace, 'joint_states'), 10)
            with open(example_urdf(), encoding='utf-8') as f:
                description.publish(String(data=f.read()))
            q = np.array([0.4, -0.7])
            msg = JointState(name=list(model.joint_names), position=list(q), velocity=[0.0, 0.0])

            def commanded():
                states.publish(msg)
                return bool(peer.commands) and np.allclose(
                    peer.commands[-1], gravity_torques(model, q), atol=1e-9)
            self.assertTrue(peer.spin_until(commanded, 30.0), peer.commands[-1:])
            answer = inverse_dynamics(peer, target, model.joint_names, q)
            self.assertTrue(answer.success, answer.message)
            np.testing.assert_allclose(answer.gravity, gravity_torques(model, q), atol=1e-9)
        finally:
            peer.node.destroy_node()


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):

    def test_the_node_exits_cleanly(self, proc_info, proc_output):
        assert_clean_exit(proc_info, proc_output, 1)
