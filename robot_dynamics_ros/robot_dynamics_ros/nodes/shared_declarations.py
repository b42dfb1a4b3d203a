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
The parameters both nodes declare alike.

Like each node's declarations, it imports nothing of ROS: the parameter tables, their checks and
the tests that read them work without rclpy.
"""

# The description file both nodes take (declared by each with its own description text).
FILE_PARAMETERS = {
    'xacro_args': ('str[]', [], 'name:=value arguments for a .xacro urdf_file, as xacro takes '
                                'them', True),
}
