"""One module per subcommand; each exposes `add_arguments(parser)` and `run(args) -> exit code`."""
