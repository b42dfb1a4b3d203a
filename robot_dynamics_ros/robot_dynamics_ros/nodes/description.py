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

"""Where a node takes robot_description from: the transient-local topic, a parameter, a file."""
import gc

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from ..dynamics import RobotModel, load_description


# What robot_state_publisher publishes robot_description with.
DESCRIPTION_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                             reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)


def file_description(node_name, urdf_file, xacro_args):
    """
    Return (URDF text, source) of ``urdf_file`` (a .xacro one expanded); (None, None) without it.

    SystemExit naming the node and the reason when it cannot be read or expanded.
    """
    if not urdf_file:
        if xacro_args:
            raise SystemExit(f'[{node_name}] xacro_args given without a .xacro urdf_file')
        return None, None
    try:
        return load_description(urdf_file, xacro_args), f'file {urdf_file}'
    except ValueError as e:
        raise SystemExit(f'[{node_name}] urdf_file: {e}') from None


class DescriptionSource:
    """
    Take robot_description from the transient-local topic, or the parameter as a fallback.

    The topic is what robot_state_publisher publishes; the node's ``robot_description``
    parameter is the fallback. With ``subscribe=False`` (a node given a description file) the
    topic is not read at all.

    ``on_model(model, xml, source)`` is called for every valid description whose dynamics differ
    from the last one's (what differs is logged; a description that changed only in comments,
    whitespace, visuals or materials changes nothing); an invalid one is logged and the previous
    model kept.
    """

    def __init__(self, node, on_model, topic='robot_description', subscribe=True):
        self.node = node
        self.on_model = on_model
        self.xml = None
        self.model = None           # the last model handed to on_model
        self.topic = node.resolve_topic_name(topic)
        if subscribe:
            node.create_subscription(String, topic, self._on_topic, DESCRIPTION_QOS)

    def _on_topic(self, msg):
        self.use(msg.data, f'topic {self.topic}')

    def use(self, xml, source, model=None):
        """
        Build the model of ``xml`` (or take ``model``, already built from it).

        True when it was valid. What loading noticed (rounded inertias, mimic joints, ...) is
        logged.
        """
        if not xml:
            return False
        if xml == self.xml:
            return True
        if model is None:
            try:
                model = RobotModel.from_urdf(xml)
            except (ValueError, KeyError) as e:
                kept = 'keeping the previous model' if self.xml else 'still no model'
                self.node.get_logger().error(
                    f'invalid robot_description from {source}: {e} ({kept})')
                return False
        self.xml = xml
        log = self.node.get_logger()
        if self.model is not None:
            changes = model.differences(self.model)
            if not changes:
                # robot_state_publisher restarted, a comment or a visual changed: the arm did not
                log.info(f'robot_description from {source} has the same dynamics as the model '
                         f'in use (only comments, visuals or the like differ): kept')
                return True
            log.info(f'robot_description from {source} changes the dynamics: '
                     + '; '.join(changes))
        self.model = model
        for warning in model.warnings:
            log.warning(f'robot_description from {source}: {warning}')
        self.on_model(model, xml, source)
        gc.collect()
        gc.freeze()                 # the model lives until the next one: see run_node
        return True
