"""Forward-dynamics simulation (ABA) without ROS: integration, friction, joint limits.

Calls ``dynamics``; imports no ROS (``nodes/simulator_node.py`` is its ROS adapter).
"""
from .simulator import INTEGRATORS, SimulationDiverged, Simulator, initial_pose

__all__ = ['Simulator', 'SimulationDiverged', 'INTEGRATORS', 'initial_pose']
