# tendon_robot_sim: `make demo` and `make test` set everything up on first use (setup compiles
# the demo's numba kernels first and the others in the background; test waits for them all).
VENV   := .venv
PYTHON := $(VENV)/bin/python
# DDS stays on loopback, on a domain of this run's own (Kilted ignores ROS_LOCALHOST_ONLY).
ROS_ENV := ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=$$(( $$$$ % 100 + 1 ))

.PHONY: setup demo demo-snake demo-hardware demo-contact report opencr-v4 opencr-v6 docs-images test lint bench clean

setup:
	@bash scripts/setup.sh

demo: setup
	$(ROS_ENV) $(PYTHON) -m tendon_robot_sim.cli demo

# The same scripted demo on the rolling-joint snake: each cable pulled in turn (20 N).
demo-snake: setup
	$(ROS_ENV) $(PYTHON) -m tendon_robot_sim.cli demo --robot config/rolling_joint_snake.yaml \
	    --tension 20 --out demo_output/snake

# Contact: the default robot bends around the post of config/world_post.yaml onto its plate
# (t3 ramped to 1.75 N, quasi-static); prints the contacts, demo_output/contact/contact.png is
# the browser view with the contact forces (docs/tendon_robot.md, "Contact with the world").
demo-contact: setup
	$(ROS_ENV) $(PYTHON) -m tendon_robot_sim.cli demo --world config/world_post.yaml --pull t3 \
	    --tension 1.75 --out demo_output/contact

# The hardware stack on emulated Dynamixel servos and an LK-G style laser (no hardware needed).
demo-hardware: setup
	$(ROS_ENV) $(PYTHON) -m tendon_robot_sim.cli demo --hardware dynamixel

# Example validation report: a synthetic experiment (the dynamic model of a robot with hidden
# E and G and twisted discs, tip noise), calibrated, then three statics models side by side,
# each calibrated first (docs/experiments.md, "Calibrate and validate").
report: setup
	rm -rf demo_output/synthetic_bag demo_output/report
	mkdir -p demo_output
	$(PYTHON) -m tendon_robot_sim.cli synth-experiment demo_output/synthetic_bag --seed 1
	$(PYTHON) -m tendon_robot_sim.cli calibrate demo_output/synthetic_bag \
	    --fit youngs_modulus,shear_modulus --out demo_output/calibrated_robot.yaml
	$(PYTHON) -m tendon_robot_sim.cli validate demo_output/synthetic_bag \
	    --model discrete,cosserat,kirchhoff --fit youngs_modulus,shear_modulus \
	    --report demo_output/report

# A real robot: opencr-mujoco's FTDCR v4 or v6 (docs/experiments.md, "A real robot"). DATA: the
# folder of one session's three recordings as opencr-mujoco names them, SESSION_tendon_pull.csv,
# SESSION_train.csv and SESSION_val.csv (data/sysid/ftdcr_v4/tdcr_sysid_20260511-183002_analysis/,
# data/sysid/ftdcr_v6/tdcrv6_sysid_20260406-181730_analysis/). Imports them with the robot's
# config/opencr_ftdcr_<v>.yaml and column map, calibrates on train, validates on the held-out
# val and on the pull file (the hysteresis of each pull): demo_output/opencr_<v>/ (OPENCR_V4, OPENCR_V6).
OPENCR_MODEL := --model cosserat --points samples --step 0.01
OPENCR_FIT := gravity,*.compliance@tendon,*.pretension@tendon,*.angle@tendon,base.position,base.rotation.x,base.rotation.y,tip_marker.z
# the second stage: the rod's bending friction (docs/tendon_robot.md): a slip moment per segment,
# its growth with the tendons' tension and the elements' stiffness, fitted on train on top of the
# first, each sample solved from the last (13 min on the quiet 2-core machine for v4). The
# stiffness ratio starts at 1, whose default bounds (0.1 .. 10) the data leave (about 40 fits)
OPENCR_FRICTION_FIT := bending_friction.moment@segment,bending_friction.tension_arm,bending_friction.stiffness_ratio
OPENCR_FRICTION_BOUNDS := bending_friction.stiffness_ratio=0.1:1000
# the session: the one SESSION_train.csv in DATA
OPENCR_SESSION = $(patsubst %_train.csv,%,$(wildcard $(DATA)/*_train.csv))
# each robot's output folder (make opencr-v4 OPENCR_V4=DIR writes to DIR)
OPENCR_V4 = demo_output/opencr_v4
OPENCR_V6 = demo_output/opencr_v6
OPENCR_OUT = $(OPENCR_$(subst v,V,$*))
# One calibration's validation: calibrated$(2).yaml in $(1) on the held-out val (validate$(2).json,
# val_samples$(2).csv, report$(2)/) and on the pull file (hysteresis$(2).json, pull_report$(2)/)
define OPENCR_VALIDATE
$(PYTHON) -m tendon_robot_sim.cli validate $(1)/val_bag --robot $(1)/calibrated$(2).yaml \
    $(OPENCR_MODEL) --json --samples-out $(1)/val_samples$(2).csv \
    --report $(1)/report$(2) > $(1)/validate$(2).txt
tail -n 1 $(1)/validate$(2).txt > $(1)/validate$(2).json
$(PYTHON) -m tendon_robot_sim.cli validate $(1)/tendon_pull_bag --robot $(1)/calibrated$(2).yaml \
    $(OPENCR_MODEL) --json --report $(1)/pull_report$(2) \
    > $(1)/hysteresis$(2).txt
tail -n 1 $(1)/hysteresis$(2).txt > $(1)/hysteresis$(2).json
endef
opencr-v4 opencr-v6: opencr-%: setup
	@test -n "$(DATA)" || { echo "make $@ DATA=DIR: DIR holds one session's SESSION_{tendon_pull,train,val}.csv" >&2; exit 2; }
	@test "$(words $(OPENCR_SESSION))" = 1 || { echo "make $@ DATA=$(DATA): expected one SESSION_train.csv there, found $(words $(OPENCR_SESSION))" >&2; exit 2; }
	rm -rf $(OPENCR_OUT)
	mkdir -p $(OPENCR_OUT)
	for part in tendon_pull train val; do \
	    $(PYTHON) -m tendon_robot_sim.cli import $(OPENCR_SESSION)_$$part.csv \
	        --columns config/opencr_ftdcr_$*_columns.yaml --robot config/opencr_ftdcr_$*.yaml \
	        --out $(OPENCR_OUT)/$${part}_bag || exit 1; done
	$(PYTHON) -m tendon_robot_sim.cli calibrate $(OPENCR_OUT)/train_bag --robot config/opencr_ftdcr_$*.yaml \
	    $(OPENCR_MODEL) --fit '$(OPENCR_FIT)' --out $(OPENCR_OUT)/calibrated.yaml
	$(call OPENCR_VALIDATE,$(OPENCR_OUT),)
	$(PYTHON) -m tendon_robot_sim.cli calibrate $(OPENCR_OUT)/train_bag --robot $(OPENCR_OUT)/calibrated.yaml \
	    $(OPENCR_MODEL) --fit '$(OPENCR_FRICTION_FIT)' --bounds '$(OPENCR_FRICTION_BOUNDS)' \
	    --out $(OPENCR_OUT)/calibrated_friction.yaml
	$(call OPENCR_VALIDATE,$(OPENCR_OUT),_friction)
	head -n -1 $(OPENCR_OUT)/validate.txt
	head -n -1 $(OPENCR_OUT)/validate_friction.txt

# Every image of docs/ and the README drawn again from the current code, by the documented
# command of each (docs/images.yaml; test/package/test_docs_images.py fails on a stale one).
# The two of opencr-mujoco's recordings need their folder: OPENCR_V4_DATA=DIR (as DATA of
# opencr-v4), else they are kept as they are.
docs-images: setup
	$(ROS_ENV) $(PYTHON) scripts/docs_images.py

# Three workers (pytest-xdist), also on two cores: most tests wait for nodes, devices or a
# browser, and with two workers the cores stood idle 12 % of the run (docs/development.md); a
# test file stays on one worker (--dist loadfile) with its module fixtures, each worker on a
# DDS domain of its own (test/conftest.py). Every model's kernels are compiled before the
# tests start (setup compiles all but the demo's in the background otherwise).
test:
	@bash scripts/setup.sh --all-kernels
	$(ROS_ENV) $(PYTHON) -m pytest -q -n 3 --dist loadfile

# The ament linters over the whole package, as colcon test runs them (ament_copyright is not
# installable from this machine's index; test_package_xml.py checks the license headers).
lint: setup
	$(VENV)/bin/ament_flake8 .
	$(VENV)/bin/ament_pep257 .

bench: setup
	$(PYTHON) benchmarks/bench_dynamics.py --json
	$(PYTHON) benchmarks/bench_implicit.py --json
	$(PYTHON) benchmarks/bench_statics.py --json
	$(PYTHON) benchmarks/bench_pcr.py --json
	$(PYTHON) benchmarks/bench_snake.py --json

clean:
	rm -rf $(VENV) build install log demo_output snake_output pcr_workspace pcr_sweep \
	    pcr_trajectory .pytest_cache
