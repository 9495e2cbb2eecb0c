"""`python -m apidrift`: the same as the `apidrift` command."""

import sys

from apidrift.auditor.cli.main import main

sys.exit(main())
