"""The ROS 2 adapters: the only place that imports rclpy or messages.

``feedforward_node`` (the controller) and ``simulator_node`` (the ABA simulator) translate topics,
services and parameters into calls of ``control`` and ``simulation``; ``common`` holds what both
share (robot_description source, parameter declaration, throttled logging, main()).
"""


def _main(module, args=None):
    """Import a node module and run its main(). The import compiles the numba kernels on a
    fresh install (seconds): Ctrl-C then ends the program quietly with status 0, as it does
    once the node spins."""
    import importlib
    try:
        node_module = importlib.import_module(f'{__name__}.{module}')
    except KeyboardInterrupt:
        return 0
    return node_module.main(args)


def feedforward_main(args=None):
    """The ``feedforward_node`` console script."""
    return _main('feedforward_node', args)


def simulator_main(args=None):
    """The ``simulator_node`` console script."""
    return _main('simulator_node', args)
