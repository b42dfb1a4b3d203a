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

from glob import glob

from setuptools import find_packages, setup

package_name = 'robot_dynamics_ros'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    package_data={package_name: ['urdf/*.urdf']},
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', glob('launch/*.launch.py')),
        ('share/' + package_name + '/config', glob('config/*.yaml')),
        ('share/' + package_name + '/urdf', glob(package_name + '/urdf/*.urdf')),
        ('share/' + package_name + '/trajectories', glob('trajectories/*.yaml')),
    ],
    install_requires=['setuptools', 'numpy', 'numba'],
    zip_safe=False,
    maintainer='robot_dynamics_ros maintainers',
    maintainer_email='maintainers@robot-dynamics-ros.invalid',
    description='RNEA/ABA model-based control and simulation for URDF arms over ROS 2.',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': [
            'robot-dynamics = robot_dynamics_ros.tools.cli:main',
            'feedforward_node = robot_dynamics_ros.nodes:feedforward_main',
            'simulator_node = robot_dynamics_ros.nodes:simulator_main',
            'closed-loop-demo = robot_dynamics_ros.tools.demo:main',
        ],
    },
)
