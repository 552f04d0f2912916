import sys

from synclint.trace.cli import main

sys.exit(main())
