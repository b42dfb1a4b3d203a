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
The ROS 2 adapters: the only place that imports rclpy or messages.

``feedforward_node`` (the controller) and ``simulator_node`` (the ABA simulator) translate topics,
services and parameters into calls of ``control`` and ``simulation``; ``common`` holds what both
share (robot_description source, parameter declaration, throttled logging, main()).
"""


def _main(module, args=None):
    """
    Import a node module and run its main().

    The import takes a second, and compiles the numba kernels on a fresh install: Ctrl-C or
    SIGTERM then end the program quietly with status 0, as they do once the node runs.
    """
    import importlib
    import signal

    def interrupt(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, interrupt)      # as SIGINT does before main() takes over
    try:
        node_module = importlib.import_module(f'{__name__}.{module}')
        return node_module.main(args)
    except KeyboardInterrupt:
        return 0


def feedforward_main(args=None):
    """Run the ``feedforward_node`` console script."""
    return _main('feedforward_node', args)


def simulator_main(args=None):
    """Run the ``simulator_node`` console script."""
    return _main('simulator_node', args)
