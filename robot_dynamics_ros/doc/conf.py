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

"""Sphinx configuration of the robot_dynamics_ros docs (Markdown with MyST; rosdoc2 layout)."""
import os
import sys
from xml.etree import ElementTree

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '_ext'))

project = 'robot_dynamics_ros'
author = 'robot_dynamics_ros contributors'
copyright = '2026, ' + author
# one version: package.xml's (setup.py and the changelog are checked against it)
release = version = ElementTree.parse(os.path.join(HERE, '..', 'package.xml')).find('version').text

extensions = ['myst_parser', 'sphinx.ext.autodoc', 'sphinx.ext.mathjax', 'rdr_reference']
source_suffix = {'.md': 'markdown'}
myst_enable_extensions = ['dollarmath', 'amsmath', 'colon_fence', 'deflist']
myst_heading_anchors = 3
exclude_patterns = ['_build']

autodoc_member_order = 'bysource'
autodoc_default_options = {'members': True}
html_theme = 'alabaster'
html_static_path = []
