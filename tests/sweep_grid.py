"""The sweep of Table S4-A of seed 003 on the built-in example: its keys, its numeric columns
and its grid (tests/test_sweep.py checks its figures; tests/test_workers.py runs it in a worker
process and compares)."""

QI = ["age", "gender", "race"]
NUMERIC = ["age", "wtkg", "preanti", "cd40", "cd420", "cd496", "cd80", "cd820", "days", "karnof"]
GRID = {"seeds": 5, "numeric": NUMERIC, "settings": [
    {"method": "band", "column": "age", "param": "width", "values": [5, 10, 15]},
    {"method": "pram", "column": "gender", "param": "p", "values": [0.01, 0.05, 0.1]},
    {"method": "pram", "column": "race", "param": "p", "values": [0.01, 0.05, 0.1]}]}
