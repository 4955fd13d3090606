"""`python -m bench [--quick PATH]`: see bench._run."""

from bench._run import main

raise SystemExit(main())
