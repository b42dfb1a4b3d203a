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

"""What the launch_testing tests share: including an installed launch file, asking a node."""
import os

import launch_testing.asserts
import rclpy
from ament_index_python.packages import get_package_share_directory
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from rcl_interfaces.srv import GetParameters
from robot_dynamics_msgs.srv import InverseDynamics


def include(name, **arguments):
    """Include an installed launch file of this package with launch arguments."""
    path = os.path.join(get_package_share_directory('robot_dynamics_ros'), 'launch', name)
    return IncludeLaunchDescription(PythonLaunchDescriptionSource(path),
                                    launch_arguments=list(arguments.items()))


def get_param(node, target, name, timeout=30.0):
    """Return the string value of a parameter of ``target``, asked over its service."""
    client = node.create_client(GetParameters, f'{target}/get_parameters')
    try:
        assert client.wait_for_service(timeout_sec=timeout), f'{target} has no parameters'
        future = client.call_async(GetParameters.Request(names=[name]))
        rclpy.spin_until_future_complete(node, future, timeout_sec=timeout)
        assert future.done() and future.result().values, f'{target}: no answer for {name}'
        return future.result().values[0].string_value
    finally:
        node.destroy_client(client)


def inverse_dynamics(peer, target, names, q):
    """Call ``target``'s inverse-dynamics service at positions q (zero velocity, acceleration)."""
    client = peer.node.create_client(InverseDynamics, f'{target}/inverse_dynamics')
    try:
        request = InverseDynamics.Request(name=list(names), position=[float(x) for x in q])
        return peer.call(client, request, timeout=20.0)
    finally:
        peer.node.destroy_client(client)


def assert_clean_exit(proc_info, proc_output, processes, never=()):
    """
    Assert that the launch ran ``processes`` processes and all exited cleanly.

    Exit codes 0, no traceback (a clean Ctrl-C prints none) and none of the texts ``never``.
    """
    names = proc_info.process_names()
    assert len(names) == processes, names
    launch_testing.asserts.assertExitCodes(proc_info)
    for output in proc_output:
        text = output.text.decode(errors='replace')
        for bad in ('Traceback', 'KeyboardInterrupt') + tuple(never):
            assert bad not in text, text
