"""`pagewarden demo`: scripted agents on a local tracker and forum with planted injections.

`site` serves tracker.test, forum.test, docs.test and the attacker's evil.test; `agents`
holds the scenarios with a naive agent that follows each injection and a benign agent that
does the user's task; `runner` runs them guarded (or raw) and `report` writes the results.
"""
