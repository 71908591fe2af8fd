import sys

from kmodel.launch import console_main

sys.exit(console_main())
