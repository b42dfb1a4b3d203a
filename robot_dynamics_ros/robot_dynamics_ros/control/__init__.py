"""Control laws without ROS: the inverse-dynamics controller and trajectory sampling.

Calls ``dynamics``; imports no ROS (the nodes in ``nodes/`` translate messages into these calls).
"""
from .controller import (MODES, TIMEOUT_BEHAVIOURS, Controller, default_joints, payload_model,
                         unknown_joint_keys)
from .trajectory import JointTrajectory, quintic

__all__ = ['Controller', 'default_joints', 'payload_model', 'unknown_joint_keys', 'MODES',
           'TIMEOUT_BEHAVIOURS', 'JointTrajectory', 'quintic']
