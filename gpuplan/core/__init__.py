"""The pure core: data in, values out. No SDK, no terminal, no files, no clock."""
