"""Attack-style scenarios: published web-agent attack styles, written here, each with a benign twin.

`scenarios.SCENARIOS` is the set; `runner.run_scenario` plays one on a guarded page. The
tests in tests/policies/test_attack_styles.py and `benchmarks/effectiveness.py` share them.
"""
