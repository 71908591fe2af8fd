import sys

from kmodel.cli import main

sys.exit(main())
