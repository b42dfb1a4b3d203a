"""Command-line programs: ``robot-dynamics`` (cli.py) and ``closed-loop-demo`` (demo.py)."""
