"""Pieces both nodes share: the robot_description source, parameter and logging helpers, main()."""
import sys
import time

import rclpy
from rcl_interfaces.msg import ParameterDescriptor, ParameterType
from rclpy._rclpy_pybind11 import RCLError
from rclpy.executors import ExternalShutdownException
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from ..dynamics import RobotModel

# What robot_state_publisher publishes robot_description with.
DESCRIPTION_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                             reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)

_TYPES = {
    bool: (ParameterType.PARAMETER_BOOL, Parameter.Type.BOOL),
    int: (ParameterType.PARAMETER_INTEGER, Parameter.Type.INTEGER),
    float: (ParameterType.PARAMETER_DOUBLE, Parameter.Type.DOUBLE),
    str: (ParameterType.PARAMETER_STRING, Parameter.Type.STRING),
    'str[]': (ParameterType.PARAMETER_STRING_ARRAY, Parameter.Type.STRING_ARRAY),
    'float[]': (ParameterType.PARAMETER_DOUBLE_ARRAY, Parameter.Type.DOUBLE_ARRAY),
}


def declare(node, name, kind, default, description, read_only=False):
    """Declare a typed parameter with a descriptor; returns its value (the override if any).
    Array parameters may default to an empty list."""
    ptype, rtype = _TYPES[kind]
    desc = ParameterDescriptor(name=name, type=ptype, description=description,
                               read_only=read_only, dynamic_typing=False)
    if isinstance(default, list) and not default:
        value = node.declare_parameter(name, rtype, desc).value
        return [] if value is None else list(value)
    return node.declare_parameter(name, default, desc).value


class DescriptionSource:
    """robot_description from the transient-local topic (what robot_state_publisher publishes),
    with the node's ``robot_description`` parameter as fallback.

    ``on_model(model, xml, source)`` is called for every valid description; an invalid one is
    logged and the previous model kept."""

    def __init__(self, node, on_model, topic='robot_description'):
        self.node = node
        self.on_model = on_model
        self.xml = None
        self.topic = node.resolve_topic_name(topic)
        node.create_subscription(String, topic, self._on_topic, DESCRIPTION_QOS)

    def _on_topic(self, msg):
        self.use(msg.data, f'topic {self.topic}')

    def use(self, xml, source):
        """Build the model of ``xml``; True when it was valid."""
        if not xml:
            return False
        if xml == self.xml:
            return True
        try:
            model = RobotModel.from_urdf(xml)
        except (ValueError, KeyError) as e:
            kept = 'keeping the previous model' if self.xml else 'still no model'
            self.node.get_logger().error(f'invalid robot_description from {source}: {e} ({kept})')
            return False
        self.xml = xml
        self.on_model(model, xml, source)
        return True


class Throttle:
    """Warnings at most once per `period` seconds per key. (rclpy throttles per call site, which
    would hide a second, different reason logged from the same line.)"""

    def __init__(self, logger):
        self.logger = logger
        self.last = {}

    def warning(self, key, message, period=1.0):
        now = time.monotonic()
        if now - self.last.get(key, -1e9) >= period:
            self.last[key] = now
            self.logger.warning(message)


def run_node(node_class, args=None):
    """rclpy.init, spin a node of ``node_class``, shut down; a SystemExit raised by the node's
    constructor (an invalid parameter) is printed and gives exit status 1."""
    rclpy.init(args=args)
    node = None
    try:
        node = node_class()
        rclpy.spin(node)
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RCLError:
        if rclpy.ok():
            raise                   # a real error; else SIGTERM shut the context down mid-spin
    finally:
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 0
