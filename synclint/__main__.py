import sys

from synclint.cli import main

sys.exit(main())
