"""``python -m gpuplan`` runs the CLI."""

from gpuplan.cli.main import main

raise SystemExit(main())
