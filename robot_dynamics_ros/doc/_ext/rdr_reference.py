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
Sphinx directives that put the reference rendered from the code into the docs.

``{rdr-node} feedforward_node``, ``{rdr-cli}``, ``{rdr-launch}`` and ``{rdr-interfaces}``
insert the Markdown of ``robot_dynamics_ros.tools.reference``, parsed as the page around them is.
"""
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective


def _rendered(what, *args):
    from robot_dynamics_ros.tools import reference
    return getattr(reference, what)(*args)


class _Rendered(SphinxDirective):
    has_content = False
    required_arguments = 0
    optional_arguments = 1
    what = None

    def run(self):
        text = _rendered(self.what, *self.arguments)
        box = nodes.container()
        self.state.nested_parse(StringList(text.splitlines(), source=self.what), 0, box,
                                match_titles=True)
        return box.children


class NodeReference(_Rendered):
    required_arguments = 1
    optional_arguments = 0
    what = 'node_markdown'


class CliReference(_Rendered):
    what = 'cli_markdown'


class LaunchReference(_Rendered):
    what = 'launch_markdown'


class InterfacesReference(_Rendered):
    what = 'interfaces_markdown'


def setup(app):
    app.add_directive('rdr-node', NodeReference)
    app.add_directive('rdr-cli', CliReference)
    app.add_directive('rdr-launch', LaunchReference)
    app.add_directive('rdr-interfaces', InterfacesReference)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
