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
Sphinx configuration of the robot_dynamics_ros docs (Markdown with MyST; rosdoc2's layout).

Self-contained: rosdoc2 runs this file from a directory of its own (so no path relative to it
is used but the version's, which rosdoc2 sets itself from package.xml), and ``setup`` adds the
directives that put the reference rendered from the code into the pages:
``{rdr-node} feedforward_node``, ``{rdr-cli}``, ``{rdr-launch}`` and ``{rdr-interfaces}`` insert
the Markdown of ``robot_dynamics_ros.tools.reference``, parsed as the page around them is.
"""
import os
from xml.etree import ElementTree

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

project = 'robot_dynamics_ros'
author = 'robot_dynamics_ros contributors'
copyright = '2026, ' + author
# one version, package.xml's (setup.py and the changelogs are checked against it by test_docs)
_manifest = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'package.xml')
if os.path.exists(_manifest):
    release = version = ElementTree.parse(_manifest).find('version').text

extensions = ['myst_parser', 'sphinx.ext.autodoc', 'sphinx.ext.mathjax']
source_suffix = {'.md': 'markdown'}
myst_enable_extensions = ['dollarmath', 'amsmath', 'colon_fence', 'deflist']
myst_heading_anchors = 3
exclude_patterns = ['_build']
autodoc_member_order = 'bysource'
autodoc_default_options = {'members': True}
html_theme = 'alabaster'


class _Rendered(SphinxDirective):
    """Insert the Markdown a function of robot_dynamics_ros.tools.reference renders."""

    optional_arguments = 1
    what = None

    def run(self):
        from robot_dynamics_ros.tools import reference
        text = getattr(reference, self.what)(*self.arguments)
        box = nodes.container()
        self.state.nested_parse(StringList(text.splitlines(), source=self.what), 0, box,
                                match_titles=True)
        return box.children


def _directive(what, arguments=0):
    return type(what, (_Rendered,), {'what': what, 'required_arguments': arguments,
                                     'optional_arguments': 1 - arguments})


def setup(app):
    app.add_directive('rdr-node', _directive('node_markdown', 1))
    app.add_directive('rdr-cli', _directive('cli_markdown'))
    app.add_directive('rdr-launch', _directive('launch_markdown'))
    app.add_directive('rdr-interfaces', _directive('interfaces_markdown'))
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
