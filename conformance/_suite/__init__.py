"""The test module the plugin collects when `--impl` is given."""
