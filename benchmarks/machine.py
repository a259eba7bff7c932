"""What the benchmark figures were measured on: printed with every result."""

from importlib import metadata
import os
import platform


def machine_info(*packages: str) -> dict:
    """CPU, load and the versions of Python and of ``packages`` (distribution names)."""
    info = {
        'machine': platform.machine(),
        'processor': platform.processor() or _cpu_model(),
        'cpus': os.cpu_count(),
        # the figures depend on what else runs: say how busy the machine was
        'load_average_1min': os.getloadavg()[0],
        'python': platform.python_version(),
    }
    info.update({name: metadata.version(name) for name in packages})
    return info


def _cpu_model() -> str:
    try:
        with open('/proc/cpuinfo') as cpuinfo:
            for line in cpuinfo:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return 'unknown'
