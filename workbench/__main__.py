import sys

from workbench.command import main

sys.exit(main())
