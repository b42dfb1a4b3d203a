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
Control laws without ROS: the inverse-dynamics controller, trajectories, the momentum observer.

Calls ``dynamics``; imports no ROS (the nodes in ``nodes/`` translate messages into these calls).
"""
from .controller import (JOINT_MODES, MODES, TASK_DEFAULTS, TIMEOUT_BEHAVIOURS, Controller,
                         FrictionSettings, JointGains, TaskSettings, default_joints,
                         default_task_frame, payload_model, unknown_joint_keys)
from .joint_state import JointStateStore, shared_joints
from .memory import ControlMemory, Sent
from .task_space import PROJECTORS, TASK_MODES, TaskSpaceLaw
from .laws import JOINT_LAWS, REACTION_LAWS
from .limits import LIMIT_DEFAULTS, LimitLayer, LimitSettings
from .force import FORCE_DEFAULTS, ForceLoop, ForceSettings, SensorInput
from .observer import DEFAULT_GAIN as OBSERVER_GAIN, REACTIONS, MomentumObserver, over_threshold
from .feasibility import Feasibility, check as check_trajectory
from .trajectory import JointTrajectory, quintic

__all__ = ['Controller', 'default_joints', 'payload_model', 'shared_joints', 'unknown_joint_keys',
           'MODES', 'JOINT_LAWS', 'REACTION_LAWS',
           'TIMEOUT_BEHAVIOURS', 'JointTrajectory', 'quintic', 'MomentumObserver', 'OBSERVER_GAIN',
           'REACTIONS', 'over_threshold', 'Feasibility', 'check_trajectory',
           'JOINT_MODES', 'TASK_MODES', 'TASK_DEFAULTS', 'PROJECTORS', 'TaskSpaceLaw',
           'default_task_frame', 'LIMIT_DEFAULTS', 'LimitLayer', 'LimitSettings',
           'FORCE_DEFAULTS', 'ForceLoop', 'ForceSettings', 'SensorInput', 'JointStateStore',
           'ControlMemory', 'Sent', 'TaskSettings', 'FrictionSettings', 'JointGains']
