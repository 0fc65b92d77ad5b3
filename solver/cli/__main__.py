import sys

from solver.cli import main

sys.exit(main())
