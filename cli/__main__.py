"""``python -m cli``: the command line client, as ``spark-datastream``."""
import sys

from cli.main import main

sys.exit(main())
