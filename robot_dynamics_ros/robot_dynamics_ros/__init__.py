"""robot_dynamics_ros: RNEA/ABA model-based control and simulation for URDF arms over ROS 2."""
__version__ = '0.1.0'
