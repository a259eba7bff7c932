# tendon_robot_sim: `make demo` and `make test` set everything up on first use.
VENV   := .venv
PYTHON := $(VENV)/bin/python
# DDS stays on loopback, on a domain of this run's own (Kilted ignores ROS_LOCALHOST_ONLY).
ROS_ENV := ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=$$(( $$$$ % 100 + 1 ))

.PHONY: setup demo test bench clean

setup:
	@bash scripts/setup.sh

demo: setup
	$(ROS_ENV) $(PYTHON) -m tendon_robot_sim.cli demo

test: setup
	$(ROS_ENV) $(PYTHON) -m pytest -q

bench: setup
	$(PYTHON) benchmarks/bench_dynamics.py --json
	$(PYTHON) benchmarks/bench_statics.py --json

clean:
	rm -rf $(VENV) build install log demo_output .pytest_cache
