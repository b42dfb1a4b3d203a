"""The ROS 2 adapters: the only place that imports rclpy or messages.

``feedforward_node`` (the controller) and ``simulator_node`` (the ABA simulator) translate topics,
services and parameters into calls of ``control`` and ``simulation``; ``common`` holds what both
share (robot_description source, parameter declaration, throttled logging, main()).
"""
