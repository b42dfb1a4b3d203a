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
Copyright and license headers, as ament_copyright checks them (it is not on PyPI).

Every source file starts (after a shebang) with a copyright line and the Apache-2.0 notice the
manifests declare, and the repository carries the license text.
"""
import glob
import os
import re

import pytest

pytestmark = pytest.mark.offline      # no ROS process (conftest.PART)

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # robot_dynamics_ros/
ROOT = os.path.dirname(PACKAGE)

NOTICE = '''#
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
'''


def sources():
    pattern = [('robot_dynamics_ros', '**', '*.py'), ('test', '*.py'), ('launch', '*.py'),
               ('setup.py',)]
    out = [p for parts in pattern
           for p in glob.glob(os.path.join(PACKAGE, *parts), recursive=True)]
    out += glob.glob(os.path.join(ROOT, 'bench', '*.py'))
    out += glob.glob(os.path.join(ROOT, 'scripts', '*.sh')) + [os.path.join(ROOT, '.ci', 'run')]
    out += [os.path.join(ROOT, 'robot_dynamics_msgs', 'CMakeLists.txt')]
    return sorted(p for p in out if os.path.exists(p))


@pytest.mark.copyright
@pytest.mark.linter
def test_every_source_file_has_the_copyright_and_license_header():
    files = sources()
    assert len(files) > 40, files
    bad = []
    for path in files:
        text = open(path, encoding='utf-8').read()
        if text.startswith('#!'):
            text = text.split('\n', 1)[1]
        first, _, rest = text.partition('\n')
        if not re.fullmatch(r'# Copyright 20\d\d(-20\d\d)? \S.*', first) or \
                not rest.startswith(NOTICE):
            bad.append(os.path.relpath(path, ROOT))
    assert not bad, f'no copyright/license header in: {bad}'


def test_the_license_text_is_in_the_repository():
    text = open(os.path.join(ROOT, 'LICENSE'), encoding='utf-8').read()
    assert 'Apache License' in text and 'Version 2.0, January 2004' in text
    assert 'END OF TERMS AND CONDITIONS' in text
    setup_py = open(os.path.join(PACKAGE, 'setup.py'), encoding='utf-8').read()
    assert "license='Apache-2.0'" in setup_py
