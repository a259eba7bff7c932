# Copyright 2026 tendon_robot_sim maintainers
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

"""tendon_robot_sim (ament_python): `colcon build` in a ROS 2 workspace or `pip install -e .`."""

from glob import glob

from setuptools import find_packages, setup

package_name = 'tendon_robot_sim'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', glob('launch/*.launch.py')),
        ('share/' + package_name + '/config', glob('config/*.yaml') + glob('config/*.csv')),
        ('share/' + package_name + '/urdf', glob('urdf/*')),
        ('share/' + package_name + '/rviz', glob('rviz/*.rviz')),
        ('share/' + package_name + '/udev', glob('udev/*.rules')),
    ],
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='tendon_robot_sim maintainers',
    maintainer_email='maintainers@tendon-robot-sim.invalid',
    description='Simulation and control of tendon-driven continuum robots '
                '(PyElastica dynamics, Cosserat statics).',
    license='Apache-2.0',
    extras_require={'test': ['pytest']},
    entry_points={
        'console_scripts': [
            'tendon-robot-sim = tendon_robot_sim.script:main',
            'simulator_node = tendon_robot_sim.nodes.simulator_node:main',
            'tension_controller_node = tendon_robot_sim.nodes.tension_controller_node:main',
            'displacement_controller_node = '
            'tendon_robot_sim.nodes.displacement_controller_node:main',
            'hardware_bridge_node = tendon_robot_sim.nodes.hardware_bridge_node:main',
            'view_node = tendon_robot_sim.nodes.view_node:main',
        ],
    },
)
