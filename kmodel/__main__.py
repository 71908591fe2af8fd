import sys

from kmodel.cli import console_main

sys.exit(console_main())
