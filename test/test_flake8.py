"""Code style, as ament_flake8 checks it (configuration in setup.cfg)."""

from pathlib import Path
import subprocess
import sys

ROOT = Path(__file__).resolve().parent.parent


def test_flake8_finds_nothing():
    paths = ['tendon_robot_sim', 'test', 'benchmarks', 'launch', 'setup.py']
    result = subprocess.run([sys.executable, '-m', 'flake8', *paths], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, f'flake8 found:\n{result.stdout}{result.stderr}'
