"""``python -m api.jython program.py ...``: see ``api.jython.runner``."""
import sys

from .runner import main

main(sys.argv[1:])
